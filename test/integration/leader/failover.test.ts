import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { voteKey } from '../../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { freePort, sleep, tempDir, waitFor, webhooksFor } from '../agent/redis-fixture.js';
import { leads, loggedAt, readyz, startDaemon, startSlowHook, type Daemon } from './daemons.js';

/**
 * Failover with agents as child processes: three agents on one Redis, each receiving every vote
 * by webhook, the leader also polling the cursor. The leader is SIGKILLed while votes stream in;
 * another takes over within lease + lease / 5, and every vote's hook fires, a vote twice only when
 * the killed agent was running its hook at the kill.
 */

const LEASE_MS = 2_000;
/** The pipeline runs at most this many hooks at once (its default). */
const PIPELINE_CONCURRENCY = 16;
/** How close to the end of the killed agent's firings a repeated one must be (see crash.test.ts). */
const TAIL = 4 * PIPELINE_CONCURRENCY;
const VOTES = 150;

describe.skipIf(!programPath('redis-server'))('failover: the leader is SIGKILLed while votes stream in', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('another agent leads within lease + lease / 5, and every vote fires, none twice beyond the kill', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator({
      settings: { allowHttpLoopback: true, votesPageSize: 20, v1RequestsPerSecond: 10_000, deliveryRetryDelaysMs: [300, 600, 1_200], deliveryTimeoutMs: 2_000 },
    });
    const fx = setupBot(emu);
    const voters = Array.from({ length: 20 }, (_, i) => emu.admin.createUser({ username: `voter${i}` }));
    // 150 ms per call: the killed agent has hooks in flight.
    const hook = await startSlowHook(150);
    const dir = await tempDir('la-failover-');
    const names = ['a', 'b', 'c'];
    const { ports, secrets } = await webhooksFor(emu, fx, names.length);
    const daemons: Daemon[] = [];
    for (const [i, name] of names.entries()) {
      daemons.push(
        await startDaemon(name, dir, await freePort(), {
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: `./state-${name}`, redis: { url: redis.url, lease: `${LEASE_MS}ms`, agentId: name } },
          votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ url: `${hook.url}/${name}`, name: 'reward', retries: 10 }] },
          webhooks: { enabled: true, listen: `127.0.0.1:${ports[i]}`, secrets },
        }),
      );
    }
    await waitFor('every agent ready', async () => (await Promise.all(daemons.map(readyz))).every((r) => r?.status === 200), 20_000, 50);
    await waitFor('a leader', async () => (await Promise.all(daemons.map(leads))).filter(Boolean).length === 1, 10_000, 20);
    const leaderIndex = (await Promise.all(daemons.map(leads))).indexOf(true);
    const leader = daemons[leaderIndex]!;
    const survivors = daemons.filter((d) => d !== leader);

    // Votes stream in, one every 30 ms, each created_at a distinct millisecond.
    const cast: string[] = [];
    let last = Date.now();
    const streaming = (async () => {
      while (cast.length < VOTES) {
        last = Math.max(Date.now(), last + 1);
        const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[cast.length % voters.length]!.id, created_at: new Date(last).toISOString() });
        cast.push(voteKey(vote.user_id, vote.created_at));
        await sleep(30);
      }
    })();

    // The kill, a third of the way in: the leader is running hooks for webhook votes.
    await waitFor('votes being rewarded', () => hook.calls.some((c) => c.agent === leader.name), 10_000, 5);
    await sleep(300);
    const killedAt = Date.now();
    leader.child.kill('SIGKILL');
    expect(await leader.exited).toBe('SIGKILL');
    const killedFirings = hook.calls.filter((c) => c.agent === leader.name).length;

    await waitFor('a new leader', () => survivors.some((d) => loggedAt(d, 'took the leader lease: this agent posts stats, syncs commands and polls votes', killedAt) !== undefined), 10_000, 10);
    const [next] = survivors.filter((d) => loggedAt(d, 'took the leader lease: this agent posts stats, syncs commands and polls votes', killedAt) !== undefined);
    const takeover = loggedAt(next!, 'took the leader lease: this agent posts stats, syncs commands and polls votes', killedAt)! - killedAt;
    await streaming;
    await waitFor('every vote rewarded', () => new Set(hook.calls.map((c) => c.key)).size >= VOTES, 30_000, 50);
    await emu.admin.idle();
    // A little longer: a repeat would show now.
    await sleep(500);

    // Exactly one leader again, and the survivors agree on who.
    const leading = await Promise.all(survivors.map(leads));
    expect(leading.filter(Boolean)).toHaveLength(1);
    expect(survivors[leading.indexOf(true)]).toBe(next);
    for (const survivor of survivors) {
      const ready = await readyz(survivor);
      expect(ready?.status).toBe(200);
      if (survivor !== next) expect(ready?.body.components.leader?.detail).toContain(`standing by (leader: ${next!.name})`);
    }

    // Every vote fired; a vote fired twice only when the killed agent fired it first, among its last firings.
    const firings = new Map<string, string[]>();
    for (const call of hook.calls) firings.set(call.key, [...(firings.get(call.key) ?? []), call.agent]);
    const missing = cast.filter((key) => !firings.has(key));
    expect(missing).toEqual([]);
    const castSet = new Set(cast);
    expect([...firings.keys()].filter((key) => !castSet.has(key))).toEqual([]);
    const killedOrder = hook.calls.filter((c) => c.agent === leader.name).map((c) => c.key);
    const twice = [...firings].filter(([, by]) => by.length > 1);
    for (const [key, by] of twice) {
      expect({ key, by }).toEqual({ key, by: [leader.name, expect.not.stringMatching(new RegExp(`^${leader.name}$`))] });
      expect(killedOrder.length - killedOrder.lastIndexOf(key)).toBeLessThanOrEqual(TAIL);
    }
    console.log(
      `failover: leader ${leader.name} killed after ${killedFirings} of its firings; ${next!.name} took over after ${takeover} ms ` +
        `(lease ${LEASE_MS} ms, bound ${LEASE_MS + LEASE_MS / 5} ms); ${hook.calls.length} hook calls for ${VOTES} votes, ${twice.length} fired twice`,
    );
    expect(takeover).toBeLessThanOrEqual(LEASE_MS + LEASE_MS / 5);

    for (const survivor of survivors) survivor.child.kill('SIGTERM');
    expect(await Promise.all(survivors.map((s) => s.exited))).toEqual([0, 0]);
  });
});
