import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { voteKey } from '../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { crashSigns, freePort, rng, secretValue, SEED, SHORT, sleep, startDaemon, tokenSecrets, Transcript } from '../helpers/reliability.js';
import { startVoteHookServer } from '../helpers/vote-hook-server.js';

/**
 * Crash rounds: the approach of test/integration/votes/crash.test.ts (SIGKILL to the daemon's group
 * at seeded random points, restart, then a last run to completion), with both roads streaming at
 * once: the votes cursor and signed webhook deliveries (the emulator retries a delivery that met a
 * dead receiver). The reward hook is an http hook whose URL carries the run number, so each call
 * is known by the run that made it.
 *
 * The vote-key accounting of the votes issue: every vote is rewarded; a key is rewarded twice only
 * by a run that was killed, among its last calls (in flight at the kill, or succeeded but not yet
 * recorded), and the repeat comes from a later run.
 */

const ROUNDS = SHORT ? 5 : 20;
const VOTES = SHORT ? 500 : 2_000;
/** Votes cast per tick of the stream, and the tick: the stream spans about as long as the rounds. */
const VOTES_PER_TICK = 10;
const TICK_MS = 120;
/** The pipeline's default concurrency; the window of a kill is a multiple of it (see the integration crash test). */
const PIPELINE_CONCURRENCY = 16;
const TAIL = 8 * PIPELINE_CONCURRENCY;

describe('reliability: crash rounds', () => {
  it(`SIGKILL at ${ROUNDS} random points while votes and deliveries stream: the vote-key accounting holds`, { timeout: 600_000 }, async () => {
    const started = Date.now();
    const random = rng('crash-kills');
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, votesPageSize: 20, v1RequestsPerSecond: 10_000 } });
    const fx = setupBot(emu);
    const cwd = await mkdtemp(join(tmpdir(), 'la-reliability-crash-'));
    const transcript = new Transcript();
    const secrets: Record<string, string> = {
      ...tokenSecrets('service.token', fx.projectToken),
      'oauth access token': fx.accessToken,
      'votes.hooks[0].authorization': `Bearer ${secretValue('hookauth')}`,
    };
    const hook = await startVoteHookServer({ authorization: secrets['votes.hooks[0].authorization'] });

    const webhookPort = await freePort();
    const created = await fetch(`${emu.urls.v1}/projects/${fx.projectId}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'crash', url: `http://127.0.0.1:${webhookPort}/webhooks/listing` }),
    });
    expect(created.status).toBe(201);
    secrets['webhooks.secrets[0]'] = ((await created.json()) as { secret: string }).secret;

    const writeConfig = (run: number, level = 'info') =>
      writeFile(
        join(cwd, 'agent.json'),
        JSON.stringify({
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: './state' },
          health: { enabled: false },
          log: { level, format: 'json' },
          votes: {
            enabled: true,
            pollInterval: '5s',
            lookback: '1h',
            hooks: [{ type: 'http', name: 'reward', url: `${hook.url}/r${run}`, authorization: secrets['votes.hooks[0].authorization'], retries: 10 }],
          },
          webhooks: { enabled: true, listen: `127.0.0.1:${webhookPort}`, secrets: [secrets['webhooks.secrets[0]']] },
        }),
      );

    const voters = Array.from({ length: 50 }, (_, i) => emu.admin.createUser({ username: `crash-voter-${i}` }));
    const cast: string[] = [];
    let last = Date.now();
    const streaming = (async () => {
      while (cast.length < VOTES) {
        for (let i = 0; i < VOTES_PER_TICK && cast.length < VOTES; i += 1) {
          last = Math.max(Date.now(), last + 1);
          const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[cast.length % voters.length]!.id, created_at: new Date(last).toISOString() });
          cast.push(voteKey(vote.user_id, vote.created_at));
        }
        await sleep(TICK_MS);
      }
    })();

    const killed: number[] = [];
    const crashes: string[] = [];
    for (let run = 1; run <= ROUNDS; run += 1) {
      await writeConfig(run);
      const daemon = startDaemon(cwd, ['--config', 'agent.json']);
      // From just after the start (the ledger opening, the catch-up) to well into the hook runs.
      await sleep(250 + Math.floor(random() * 1_750));
      const early = !daemon.alive();
      const how = await daemon.kill();
      transcript.add(`run ${run}`, daemon.output());
      if (early) crashes.push(`run ${run} ended by itself with ${String(how)} before its kill`);
      crashes.push(...crashSigns(daemon.output()).map((sign) => `run ${run}: ${sign}`));
      killed.push(run);
    }
    await streaming;

    // The last run goes on until every vote is rewarded, then stops gracefully.
    const finalRun = ROUNDS + 1;
    await writeConfig(finalRun);
    const daemon = startDaemon(cwd, ['--config', 'agent.json']);
    await daemon.waitFor('"msg":"agent ready"', 60_000);
    const deadline = Date.now() + 120_000;
    while (new Set(hook.calls.map((c) => c.key)).size < VOTES && Date.now() < deadline && daemon.alive()) await sleep(100);
    await emu.admin.idle();
    const exit = await daemon.stop();
    transcript.add(`run ${finalRun}`, daemon.output());
    crashes.push(...crashSigns(daemon.output()).map((sign) => `run ${finalRun}: ${sign}`));

    /** Each run's calls, in arrival order, and each key's runs. */
    const runCalls = new Map<number, string[]>();
    const seen = new Map<string, number[]>();
    for (const call of hook.calls) {
      const run = Number(/\/r(\d+)$/.exec(call.path)?.[1]);
      runCalls.set(run, [...(runCalls.get(run) ?? []), call.key]);
      seen.set(call.key, [...(seen.get(call.key) ?? []), run]);
    }
    const missing = cast.filter((key) => !seen.has(key));
    const castSet = new Set(cast);
    const strangers = [...seen.keys()].filter((key) => !castSet.has(key));
    const duplicates = [...seen].filter(([, runs]) => runs.length > 1);
    const outsideWindow: string[] = [];
    for (const [key, runs] of duplicates) {
      for (const [i, run] of runs.slice(0, -1).entries()) {
        const calls = runCalls.get(run)!;
        const fromTheEnd = calls.length - calls.lastIndexOf(key);
        if (!killed.includes(run) || !(runs[i + 1]! > run) || fromTheEnd > TAIL) outsideWindow.push(`${key}: runs ${runs.join(',')}, ${fromTheEnd} calls from the end of run ${run}`);
      }
    }
    const deliveries = emu.admin.deliveries(fx.projectId).filter((d) => d.type === 'vote.create');
    const deliveryAttempts = deliveries.reduce((n, d) => n + d.attempts.length, 0);
    const hits = transcript.scan(secrets);
    console.log(
      `crash: ${ROUNDS} rounds, ${ROUNDS} crashes (SIGKILL), ${VOTES} votes, ${hook.calls.length} hook calls, ${deliveryAttempts} delivery attempts ` +
        `(${deliveries.filter((d) => d.outcome === 'delivered').length} delivered), ${emu.admin.requests().length} requests to the service, ` +
        `${missing.length} lost, ${duplicates.length} duplicated (${outsideWindow.length} outside a kill's window), ${crashes.length} unexpected exits, ` +
        `final stop ${String(exit)}, ${transcript.lines} lines scanned (${hits.length} secrets), ${Math.round((Date.now() - started) / 1000)} s (seed ${SEED})`,
    );

    expect(hits, 'secrets found in the captured output (source:line: secret name)').toEqual([]);
    expect(crashes).toEqual([]);
    expect(exit, `the final stop; its output ends with:\n${daemon.output().slice(-2_000)}`).toBe(0);
    expect(missing).toEqual([]);
    expect(strangers).toEqual([]);
    expect(outsideWindow).toEqual([]);
    expect(duplicates.length).toBeLessThanOrEqual(ROUNDS * TAIL);
    expect(hook.refused).toEqual([]);
  });
});
