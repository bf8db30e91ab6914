import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { voteKey } from '../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { startTestRedis } from '../helpers/redis.js';
import { crashSigns, freePort, rng, secretValue, SEED, SHORT, sleep, startDaemon, tokenSecrets, Transcript, type Daemon } from '../helpers/reliability.js';
import { programPath } from '../setup/provided.js';
import { webhooksFor } from '../integration/agent/redis-fixture.js';
import { startSlowHook } from '../integration/leader/daemons.js';

/**
 * A Redis outage longer than the leader lease, with stats from the push source and two agents:
 * two `listing-agent run` daemons on one redis-server, the bot pushing its two shards' counts to
 * both (round robin, as a load balancer would), votes delivered by signed webhook to both and
 * polled from the cursor by the leader, an http reward hook that answers slowly (so calls are in
 * flight when Redis goes). Redis is stopped for longer than the lease (both agents step down),
 * the bot keeps pushing (the agents answer 202 and hold the counts), then Redis comes back.
 *
 * Asserted, after each outage: a post whose counts are the last ones pushed during the outage
 * (the held pushes reached Redis, the newest of each shard won, and the agent that leads again
 * posts); posts go on with later pushes. At the end: every push answered 204 or 202, never
 * refused; every vote fired its hook; a vote fired twice only when its first call was in flight
 * at an outage; both daemons alive, exactly one leader, no crash sign, no secret in the output.
 */

const LEASE_MS = SHORT ? 2_000 : 4_000;
/** Longer than the lease: every agent steps down. */
const OUTAGE_MS = SHORT ? 3_500 : 9_000;
const OUTAGES = SHORT ? 1 : 3;
const PUSH_EVERY_MS = 250;
const VOTE_EVERY_MS = 100;
/** The reward hook's answer time: calls are in flight when Redis stops. */
const HOOK_DELAY_MS = 100;
/** Each agent's vote pipeline runs at most this many hooks at once (its default). */
const PIPELINE_CONCURRENCY = 16;

describe.skipIf(!programPath('redis-server'))('reliability: Redis outage longer than the lease, push stats, two agents', () => {
  it('posts resume with the counts pushed during the outage; nothing lost, nothing fired twice beyond calls in flight', { timeout: 240_000 }, async () => {
    const started = Date.now();
    const redis = await startTestRedis();
    const emu = await startTestEmulator({
      settings: {
        allowHttpLoopback: true,
        requestLogSize: 1_000_000,
        v1RequestsPerSecond: 10_000,
        v1ProjectWritesPerMinute: 10_000,
        votesPageSize: 20,
        // Deliveries refused with 503 while Redis is away come again after it.
        deliveryRetryDelaysMs: [500, 1_000, 2_000, 4_000, 8_000, 8_000],
        deliveryTimeoutMs: 3_000,
      },
    });
    const fx = setupBot(emu);
    const hook = await startSlowHook(HOOK_DELAY_MS);
    const cwd = await mkdtemp(join(tmpdir(), 'la-reliability-outage-'));
    const transcript = new Transcript();
    const names = ['a', 'b'];
    const { ports: webhookPorts, secrets: webhookSecrets } = await webhooksFor(emu, fx, names.length);
    const secrets: Record<string, string> = { ...tokenSecrets('service.token', fx.projectToken), 'stats.push.key': secretValue('pushkey') };
    webhookSecrets.forEach((secret, i) => (secrets[`webhooks.secrets[${i}]`] = secret));

    const pushUrls: string[] = [];
    const healthUrls: string[] = [];
    const daemons: Daemon[] = [];
    for (const [i, name] of names.entries()) {
      const [pushPort, healthPort] = [await freePort(), await freePort()];
      pushUrls.push(`http://127.0.0.1:${pushPort}/stats`);
      healthUrls.push(`http://127.0.0.1:${healthPort}`);
      await writeFile(
        join(cwd, `${name}.json`),
        JSON.stringify({
          service: { v1: emu.urls.v1, v0: emu.urls.v0 },
          stats: { enabled: true, source: 'push', schedule: '* * * * * *', push: { listen: `127.0.0.1:${pushPort}`, key: '${PUSH_KEY}' } },
          votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ type: 'http', name: 'reward', url: `${hook.url}/${name}`, timeout: '5s', retries: 10 }] },
          webhooks: { enabled: true, listen: `127.0.0.1:${webhookPorts[i]}`, secrets: webhookSecrets },
          state: { directory: `./state-${name}`, redis: { url: redis.url, lease: `${LEASE_MS}ms`, agentId: name } },
          health: { listen: `127.0.0.1:${healthPort}` },
          log: { level: 'info', format: 'json' },
        }),
      );
      daemons.push(startDaemon(cwd, ['--config', `${name}.json`], { LISTING_AGENT_SERVICE_TOKEN: fx.projectToken, PUSH_KEY: secrets['stats.push.key']! }));
    }

    try {
      await Promise.all(daemons.map((daemon) => daemon.waitFor('"msg":"agent ready"', 60_000)));

      // The bot: both shards' counts, to one agent after the other, every PUSH_EVERY_MS.
      const drift = rng('outage-push');
      // Counts a shard can hold: the push endpoint refuses more than 5,000 on one.
      const shards = [2_000, 1_500];
      const statuses = new Map<string, number>();
      let pushes = 0;
      let pushing = true;
      let paused: (() => void) | undefined;
      let resume: (() => void) | undefined;
      const pushLoop = (async () => {
        while (pushing) {
          if (paused) {
            paused();
            paused = undefined;
            await new Promise<void>((resolve) => (resume = resolve));
            continue;
          }
          for (let i = 0; i < shards.length; i += 1) shards[i] = shards[i]! + 1 + Math.floor(drift() * 10);
          const url = pushUrls[pushes % pushUrls.length]!;
          pushes += 1;
          let outcome: string;
          try {
            const res = await fetch(url, {
              method: 'POST',
              headers: { authorization: `Bearer ${secrets['stats.push.key']}`, 'content-type': 'application/json' },
              body: JSON.stringify({ shards }),
            });
            transcript.add(`push answer ${res.status}`, await res.text());
            outcome = String(res.status);
          } catch (error) {
            outcome = `network error: ${(error as Error).message}`;
          }
          statuses.set(outcome, (statuses.get(outcome) ?? 0) + 1);
          await sleep(PUSH_EVERY_MS);
        }
      })();
      const pause = () => new Promise<void>((resolve) => (paused = resolve));
      const unpause = () => {
        resume?.();
        resume = undefined;
      };

      // Votes for the whole run, each at a distinct millisecond: by webhook to both agents, and on the cursor.
      const voters = Array.from({ length: 50 }, (_, i) => emu.admin.createUser({ username: `outage-voter-${i}` }));
      const cast: string[] = [];
      let voting = true;
      let lastVoteAt = Date.now();
      const voteLoop = (async () => {
        while (voting) {
          lastVoteAt = Math.max(Date.now(), lastVoteAt + 1);
          const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[cast.length % voters.length]!.id, created_at: new Date(lastVoteAt).toISOString() });
          cast.push(voteKey(vote.user_id, vote.created_at));
          await sleep(VOTE_EVERY_MS);
        }
      })();

      const posted = () => emu.admin.metrics(fx.projectId).filter((m) => m.source === 'v1-batch');
      const sum = () => shards.reduce((a, b) => a + b, 0);
      const waitForPost = async (what: string, servers: number, after: number, timeoutMs: number) => {
        const deadline = Date.now() + timeoutMs;
        while (!posted().slice(after).some((m) => m.metrics.server_count === servers)) {
          if (Date.now() > deadline) {
            const last = posted().slice(-3).map((m) => m.metrics.server_count);
            throw new Error(`no post of ${servers} servers (${what}) within ${timeoutMs} ms; the last posts: ${last.join(', ')}; daemon a ends with:\n${daemons[0]!.output().slice(-2_000)}`);
          }
          await sleep(100);
        }
      };

      // Before any outage: the pushes add up and the leader posts.
      await sleep(1_500);
      await pause();
      await waitForPost('before the outage', sum(), 0, 20_000);
      unpause();

      const outages: { downAt: number; backAt: number; heldPushes: number; postedAfterMs: number }[] = [];
      for (let round = 0; round < OUTAGES; round += 1) {
        await sleep(1_500);
        const before202 = statuses.get('202') ?? 0;
        const downAt = Date.now();
        await redis.stop();
        await sleep(OUTAGE_MS);
        // The last pushes of the outage are held by the agents; Redis comes back with no push after them.
        await pause();
        const expected = sum();
        const postsBefore = posted().length;
        await redis.start();
        const backAt = Date.now();
        await waitForPost(`the counts pushed during outage ${round + 1}`, expected, postsBefore, 30_000);
        const postedAfterMs = Date.now() - backAt;
        outages.push({ downAt, backAt, heldPushes: (statuses.get('202') ?? 0) - before202, postedAfterMs });
        // Posts go on with the pushes that follow.
        unpause();
        await sleep(1_500);
        await pause();
        await waitForPost(`a push after outage ${round + 1}`, sum(), postsBefore, 15_000);
        unpause();
      }

      // Drain: every vote fired; late repeats (a retried delivery, a cursor page) would show within a poll.
      voting = false;
      await voteLoop;
      const fired = () => new Set(hook.calls.map((c) => c.key));
      const drainDeadline = Date.now() + 60_000;
      while (Date.now() < drainDeadline && !cast.every((key) => fired().has(key))) await sleep(250);
      await sleep(6_000);
      pushing = false;
      unpause();
      await pushLoop;

      const ready = await Promise.all(healthUrls.map(async (url) => (await fetch(`${url}/readyz`)).json() as Promise<{ ready: boolean; components: Record<string, { detail: string }> }>));
      const leaders = ready.filter((r) => r.components.leader?.detail.startsWith('leading')).length;
      const alive = daemons.map((daemon) => daemon.alive());
      const exits = await Promise.all(daemons.map((daemon) => daemon.stop()));
      for (const [i, daemon] of daemons.entries()) transcript.add(`daemon ${names[i]} output`, daemon.output());

      // Votes: each fired; a repeat only for a call in flight at an outage (first call before Redis was back).
      const firings = new Map<string, { agent: string; at: number }[]>();
      for (const call of hook.calls) firings.set(call.key, [...(firings.get(call.key) ?? []), { agent: call.agent, at: call.at }]);
      const lost = cast.filter((key) => !firings.has(key));
      const twice = [...firings].filter(([, calls]) => calls.length > 1);
      const inFlight = (at: number) => outages.some((o) => at >= o.downAt - 5_000 && at <= o.backAt + 1_000);
      const badRepeats = twice.filter(([, calls]) => calls.length > 2 || !inFlight(calls[0]!.at)).map(([key, calls]) => `${key}: ${calls.map((c) => `${c.agent}@${c.at}`).join(', ')}`);
      const refusedPushes = [...statuses].filter(([status]) => status !== '204' && status !== '202');
      const signs = daemons.flatMap((daemon, i) => crashSigns(daemon.output()).map((sign) => `${names[i]}: ${sign}`));
      const hits = transcript.scan(secrets);
      // One warning per outage for the pushes that could not be shared, not one per push.
      const shareWarnings = daemons.map((daemon) => daemon.output().split('\n').filter((line) => line.includes('could not share pushed counts through Redis')).length);
      const shareResumed = daemons.map((daemon) => daemon.output().split('\n').filter((line) => line.includes('pushed counts shared through Redis again')).length);
      const errorLines = daemons.map((daemon) => daemon.output().split('\n').filter((line) => line.includes('"level":"error"') || line.includes('"level":50')).length);

      console.log(
        `redis outage with push stats: ${OUTAGES} outage(s) of ${OUTAGE_MS} ms (lease ${LEASE_MS} ms); ${pushes} pushes (${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}), ` +
          `held pushes per outage ${outages.map((o) => o.heldPushes).join('/')}, posted the held counts ${outages.map((o) => o.postedAfterMs).join('/')} ms after Redis returned, ${posted().length} batch entries; ` +
          `${cast.length} votes (${lost.length} lost, ${twice.length} fired twice, ${badRepeats.length} not in flight), ${hook.calls.length} hook calls; ` +
          `${leaders} leader(s) at the end, share warnings ${shareWarnings.join('/')} (resumed ${shareResumed.join('/')}), error lines ${errorLines.join('/')}, ${signs.length} crash signs, ${transcript.lines} lines scanned (${hits.length} secrets), ${Math.round((Date.now() - started) / 1000)} s (seed ${SEED})`,
      );

      expect(alive, 'both daemons alive at the end').toEqual([true, true]);
      expect(exits, 'graceful stops').toEqual([0, 0]);
      expect(signs).toEqual([]);
      expect(hits, 'secrets in the captured output').toEqual([]);
      expect(refusedPushes, 'every push answered 204 (shared) or 202 (held while Redis was away)').toEqual([]);
      for (const outage of outages) expect(outage.heldPushes).toBeGreaterThan(0);
      for (const [i, warnings] of shareWarnings.entries()) {
        expect(warnings, `share warnings of ${names[i]}`).toBeLessThanOrEqual(OUTAGES);
        expect(shareResumed[i], `'shared again' lines of ${names[i]}`).toBe(warnings);
      }
      expect(leaders).toBe(1);
      expect(lost).toEqual([]);
      expect(badRepeats).toEqual([]);
      expect(twice.length).toBeLessThanOrEqual(OUTAGES * names.length * PIPELINE_CONCURRENCY);
      expect([...firings.keys()].filter((key) => !cast.includes(key))).toEqual([]);
    } finally {
      for (const daemon of daemons) if (daemon.alive()) await daemon.kill();
      await redis.close();
    }
  });
});
