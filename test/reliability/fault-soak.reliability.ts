import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { voteKey } from '../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { crashSigns, freePort, rng, rssKiB, secretValue, SEED, SHORT, sleep, startDaemon, tokenSecrets, Transcript } from '../helpers/reliability.js';
import { startVoteHookServer } from '../helpers/vote-hook-server.js';

/**
 * Fault soak: `listing-agent run` (stats from the push source, v1 batches and v0, command sync,
 * the votes cursor, signed webhooks, an http reward hook) against the emulator, which injects 429s
 * with Retry-After, 502s, socket resets and 2 s delays at random on every service route it serves
 * (a seeded chaos setting), for a bounded run. The full form also cuts the metrics batch route off
 * for two posts in a row, so the poster backs off and must backfill with timestamps.
 *
 * Asserted: the daemon never dies and never lets an error escape; the emulator's metrics history has
 * no hole longer than the sampling allows (the buffer holds 100 samples before it thins the oldest:
 * far more than this run's outage makes); every vote fires its hook, once; no secret in any output.
 */

const SOAK_MS = SHORT ? 20_000 : 180_000;
/** Chance of a fault per service request while the chaos is on. */
const FAULT_PROBABILITY = 0.25;
/** The daemon's sampling: a sample every 10 s (the schema's minimum), and a post (with a fresh sample) every 2 s. */
const SAMPLE_INTERVAL_MS = 10_000;
const POST_CRON = '*/2 * * * * *';
/** How late a sample may be beyond the interval (scheduling, a busy event loop, a 2 s delay on a count read). */
const SAMPLE_SLACK_MS = 5_000;
/** The buffer's documented bound (src/stats/samples.ts, README "An outage loses nothing"): beyond it the oldest are thinned. */
const BUFFER_LIMIT = 100;
const VOTE_EVERY_MS = 200;

describe('reliability: fault soak', () => {
  it('keeps running under random faults on every route: no crash, no lost sample, every vote fired once', { timeout: SOAK_MS + 300_000 }, async () => {
    const started = Date.now();
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, requestLogSize: 1_000_000, v1RequestsPerSecond: 10_000, votesPageSize: 5 } });
    const fx = setupBot(emu);
    const cwd = await mkdtemp(join(tmpdir(), 'la-reliability-soak-'));
    const transcript = new Transcript();

    const secrets = {
      ...tokenSecrets('service.token', fx.projectToken),
      'stats.push.key': secretValue('pushkey'),
      'discord.token': secretValue('discordtoken'),
      'webhooks.legacyAuthorization': secretValue('legacyauth'),
      'votes.hooks[0].authorization': `Bearer ${secretValue('hookauth')}`,
      'votes.hooks[0].secret': secretValue('hooksecret'),
      'oauth access token': fx.accessToken,
      'webhooks.secrets[0]': '',
    };

    const hookRandom = rng('soak-hook');
    let hookFaults = 0;
    const hook = await startVoteHookServer({
      authorization: secrets['votes.hooks[0].authorization'],
      secret: secrets['votes.hooks[0].secret'],
      fault: () => {
        const r = hookRandom();
        const fault = r < 0.05 ? 'error' : r < 0.07 ? 'reset' : undefined;
        if (fault) hookFaults += 1;
        return fault;
      },
    });

    const [webhookPort, pushPort, healthPort] = [await freePort(), await freePort(), await freePort()];
    const webhookUrl = `http://127.0.0.1:${webhookPort}/webhooks/listing`;
    const created = await fetch(`${emu.urls.v1}/projects/${fx.projectId}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'soak', url: webhookUrl }),
    });
    expect(created.status).toBe(201);
    secrets['webhooks.secrets[0]'] = ((await created.json()) as { secret: string }).secret;

    await writeFile(join(cwd, 'commands.json'), JSON.stringify([{ name: 'ping', description: 'Replies with pong' }, { name: 'vote', description: 'Vote for the bot' }]));
    await writeFile(
      join(cwd, 'agent.json'),
      JSON.stringify({
        service: { v1: emu.urls.v1, v0: emu.urls.v0 },
        discord: { token: secrets['discord.token'] },
        stats: {
          enabled: true,
          source: 'push',
          schedule: POST_CRON,
          interval: '1m',
          sampleInterval: '10s',
          skipUnchanged: false,
          v0: true,
          push: { listen: `127.0.0.1:${pushPort}`, key: secrets['stats.push.key'] },
        },
        commands: { enabled: true, source: 'file', file: 'commands.json', interval: '1m' },
        votes: {
          enabled: true,
          pollInterval: '5s',
          lookback: '1h',
          hooks: [{ type: 'http', name: 'reward', url: hook.url, authorization: secrets['votes.hooks[0].authorization'], secret: '${HOOK_SECRET}', timeout: '5s', retries: 10 }],
        },
        webhooks: { enabled: true, listen: `127.0.0.1:${webhookPort}`, secrets: ['${WEBHOOK_SECRET}'], legacyAuthorization: secrets['webhooks.legacyAuthorization'] },
        state: { directory: './state' },
        health: { listen: `127.0.0.1:${healthPort}` },
        log: { level: 'debug', format: 'json' },
      }),
    );

    // Chaos from before the start: the first call to the service meets it too.
    const chaos = await emu.adminCall('/faults/chaos', {
      json: { probability: FAULT_PROBABILITY, seed: SEED, kinds: [{ status: 429, retry_after: 1 }, { status: 502 }, { reset: true }, { delay_ms: 2_000 }] },
    });
    expect(chaos.status).toBe(201);

    const daemon = startDaemon(cwd, ['--config', 'agent.json'], {
      LISTING_AGENT_SERVICE_TOKEN: fx.projectToken,
      WEBHOOK_SECRET: secrets['webhooks.secrets[0]'],
      HOOK_SECRET: secrets['votes.hooks[0].secret'],
    });

    // The bot's side: two shards push their counts every 2 s; the counts drift.
    const pushRandom = rng('soak-push');
    const shards = [1_000, 1_200];
    let pushing = true;
    let pushFailures = 0;
    let ready = false;
    const pushLoop = (async () => {
      while (pushing) {
        for (let i = 0; i < shards.length; i += 1) shards[i] = Math.max(1, shards[i]! + Math.floor(pushRandom() * 21) - 10);
        try {
          const res = await fetch(`http://127.0.0.1:${pushPort}/stats`, {
            method: 'POST',
            headers: { authorization: `Bearer ${secrets['stats.push.key']}`, 'content-type': 'application/json' },
            body: JSON.stringify(shards.map((count, id) => ({ shard_id: id, shard_count: shards.length, server_count: count }))),
          });
          await res.arrayBuffer();
          if (res.status !== 204 && ready) pushFailures += 1;
        } catch {
          if (ready) pushFailures += 1; // Before the start it is not listening yet.
        }
        await sleep(2_000);
      }
    })();

    // Health endpoints: watched for liveness, and their text goes to the secrets scan.
    const rss: number[] = [];
    let watching = true;
    const watchLoop = (async () => {
      while (watching) {
        const kib = ready ? rssKiB(daemon.pid) : undefined;
        if (kib !== undefined) rss.push(kib);
        for (const path of ['/readyz', '/metrics']) {
          try {
            const res = await fetch(`http://127.0.0.1:${healthPort}${path}`);
            transcript.add(`GET ${path}`, await res.text());
          } catch {
            // Not listening yet (or stopping).
          }
        }
        await sleep(3_000);
      }
    })();

    await daemon.waitFor('"msg":"agent ready"', 120_000);
    ready = true;

    // Votes stream in for the whole soak, each at a distinct millisecond; the emulator both delivers
    // them by webhook and lists them on the cursor.
    const voters = Array.from({ length: 100 }, (_, i) => emu.admin.createUser({ username: `soak-voter-${i}` }));
    const cast: string[] = [];
    let last = Date.now();
    const soakEnd = Date.now() + SOAK_MS;
    let forcedOutage = 0;
    const outageAt = SHORT ? Infinity : Date.now() + SOAK_MS / 4;
    while (Date.now() < soakEnd) {
      if (!daemon.alive()) break;
      if (Date.now() >= outageAt && forcedOutage === 0) {
        // Two failed posts in a row (4 attempts each): 30 s, then 60 s of backoff, samples buffered meanwhile.
        emu.admin.injectFault({ method: 'POST', path: '/api/v1/projects/@me/metrics/batch', status: 503, count: 8 });
        forcedOutage = 8;
      }
      last = Math.max(Date.now(), last + 1);
      const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[cast.length % voters.length]!.id, created_at: new Date(last).toISOString() });
      cast.push(voteKey(vote.user_id, vote.created_at));
      await sleep(VOTE_EVERY_MS);
    }
    const chaosOffAt = Date.now();
    const chaosStatus = emu.admin.chaos();
    emu.admin.clearChaos();

    // Drain: every vote fired, and a sample taken after the chaos ended is in the service's history
    // (batches go oldest first, so everything buffered before it went out too).
    const batchTimes = () =>
      emu.admin
        .metrics(fx.projectId)
        .filter((m) => m.source === 'v1-batch' && m.timestamp !== null)
        .map((m) => Date.parse(m.timestamp!));
    const drainDeadline = Date.now() + 150_000;
    const fired = () => new Set(hook.calls.map((c) => c.key));
    while (Date.now() < drainDeadline && daemon.alive()) {
      const allFired = cast.every((key) => fired().has(key));
      const times = batchTimes();
      if (allFired && times.length > 0 && Math.max(...times) >= chaosOffAt) break;
      await sleep(500);
    }
    // Late duplicates (a cursor page after a webhook, a delivery retry) would show within a poll.
    await sleep(6_000);
    const aliveAtEnd = daemon.alive();
    pushing = false;
    watching = false;
    await Promise.all([pushLoop, watchLoop]);
    const exit = await daemon.stop();
    transcript.add('daemon output', daemon.output());

    // Metrics: the history of timestamped batch entries, from the first sample to the end of the chaos.
    const times = batchTimes().sort((a, b) => a - b);
    const distinct = [...new Set(times)];
    const duplicatedSamples = times.length - distinct.length;
    const span = distinct.filter((t) => t <= chaosOffAt);
    const samplesInRun = span.length;
    // Beyond the buffer's bound the oldest half is thinned (every other sample dropped, repeatedly):
    // the allowed gap doubles for each halving the outage would need. This run stays far below it.
    const thinning = samplesInRun > BUFFER_LIMIT ? 2 ** Math.ceil(Math.log2(samplesInRun / BUFFER_LIMIT)) : 1;
    const allowedGap = SAMPLE_INTERVAL_MS * thinning + SAMPLE_SLACK_MS;
    const holes: string[] = [];
    let lostSamples = 0;
    for (let i = 1; i < span.length; i += 1) {
      const gap = span[i]! - span[i - 1]!;
      if (gap > allowedGap) {
        holes.push(`${new Date(span[i - 1]!).toISOString()} -> ${new Date(span[i]!).toISOString()} (${gap} ms)`);
        lostSamples += Math.ceil(gap / SAMPLE_INTERVAL_MS) - 1;
      }
    }
    const v0Posts = emu.admin.metrics(fx.projectId).filter((m) => m.source === 'v0').length;

    // Votes.
    const counts = hook.counts();
    const castSet = new Set(cast);
    const lostVotes = cast.filter((key) => !counts.has(key));
    const duplicatedVotes = [...counts].filter(([, n]) => n > 1).map(([key]) => key);
    const strangers = [...counts.keys()].filter((key) => !castSet.has(key));

    const output = daemon.output();
    const signs = crashSigns(output);
    const crashes = (aliveAtEnd ? 0 : 1) + (exit === 0 ? 0 : 1) + (signs.length > 0 ? 1 : 0);
    const hits = transcript.scan(secrets);
    const requests = emu.admin.requests().length;
    const deliveries = emu.admin.deliveries(fx.projectId).reduce((n, d) => n + d.attempts.length, 0);
    const injected = chaosStatus.injected + forcedOutage + hookFaults;
    const kinds = Object.entries(chaosStatus.by_kind)
      .map(([kind, n]) => `${kind}: ${n}`)
      .join(', ');
    console.log(
      `fault soak: ${requests + deliveries + hook.calls.length + hookFaults} requests (${requests} to the service, ${deliveries} deliveries, ${hook.calls.length + hookFaults} hook calls), ${injected} faults injected (${kinds}, forced outage: ${forcedOutage}, hook: ${hookFaults}), ` +
        `${crashes} crashes, ${samplesInRun} samples (${lostSamples} lost, ${duplicatedSamples} duplicated, ${v0Posts} v0 posts), ` +
        `${cast.length} votes (${lostVotes.length} lost, ${duplicatedVotes.length} duplicated), ${transcript.lines} lines scanned (${hits.length} secrets), ` +
        `RSS ${Math.round((rss[0] ?? 0) / 1024)} -> ${Math.round((rss.at(-1) ?? 0) / 1024)} MiB, ${Math.round((Date.now() - started) / 1000)} s (seed ${SEED})`,
    );

    expect(hits, 'secrets found in the captured output (source:line: secret name)').toEqual([]);
    expect(signs, 'crash signs in the daemon output').toEqual([]);
    expect(aliveAtEnd, `the daemon died during the soak; its output ends with:\n${output.slice(-3_000)}`).toBe(true);
    expect(exit, `the graceful stop ended with ${String(exit)}; output ends with:\n${output.slice(-2_000)}`).toBe(0);
    expect(chaosStatus.injected).toBeGreaterThan(0);
    expect(holes, 'holes in the metrics history').toEqual([]);
    expect(duplicatedSamples).toBe(0);
    expect(samplesInRun).toBeGreaterThanOrEqual(Math.floor(SOAK_MS / SAMPLE_INTERVAL_MS) - 1);
    expect(Math.max(...times)).toBeGreaterThanOrEqual(chaosOffAt);
    expect(v0Posts).toBeGreaterThan(0);
    expect(emu.admin.commands(fx.projectId)).toHaveLength(2);
    expect(lostVotes).toEqual([]);
    expect(duplicatedVotes).toEqual([]);
    expect(strangers).toEqual([]);
    expect(hook.refused).toEqual([]);
    expect(pushFailures).toBe(0);
  });
});
