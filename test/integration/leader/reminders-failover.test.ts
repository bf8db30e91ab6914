import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusDocument } from '../../../src/status/document.js';
import { voteKey } from '../../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { freePort, sleep, tempDir, waitFor, webhooksFor } from '../agent/redis-fixture.js';
import { leads, loggedAt, readyz, startDaemon, startSlowHook, type Daemon, type SlowHookCall } from './daemons.js';

/**
 * Vote reminders across a leader failover, with real processes: three `listing-agent run` daemons
 * on one redis-server, every vote delivered by webhook to each (and the cursor polled by the
 * leader), votes that expire 3 s after they are cast (the emulator's vote lifetime: the daemons'
 * clock is the real one), and an http reminder hook that takes 150 ms to answer, recording each
 * call's idempotency key and caller. The leader is SIGKILLed while reminders are due and firing;
 * another agent takes the lease and fires the rest. Then the killed agent is started again: it
 * fires nothing more.
 */

const LEASE_MS = 2_000;
/** The emulator's vote lifetime: each reminder is due this long after its vote. */
const LIFETIME_MS = 3_000;
/** Voters, one vote each (a second vote of a voter would supersede the first's reminder). */
const VOTES = 60;
const VOTE_EVERY_MS = 50;
/** The reminder hook's answer time: the killed leader has calls in flight. */
const HOOK_MS = 150;
const TOOK_LEASE = 'took the leader lease: this agent posts stats, syncs commands and polls votes';

describe.skipIf(!programPath('redis-server'))('vote reminders: the leader is SIGKILLed while reminders fire', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('the next leader fires the rest: none lost, none twice beyond the calls in flight, none again from the restarted agent', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator({
      settings: {
        allowHttpLoopback: true,
        voteExpirySeconds: LIFETIME_MS / 1_000,
        v1RequestsPerSecond: 10_000,
        deliveryRetryDelaysMs: [300, 600, 1_200],
        deliveryTimeoutMs: 2_000,
      },
    });
    const fx = setupBot(emu);
    const voters = Array.from({ length: VOTES }, (_, i) => emu.admin.createUser({ username: `voter${i}` }));
    const rewards = await startSlowHook(0);
    const reminders = await startSlowHook(HOOK_MS);
    const dir = await tempDir('la-reminders-failover-');
    const names = ['a', 'b', 'c'];
    const { ports, secrets } = await webhooksFor(emu, fx, names.length);
    const healthPorts = await Promise.all(names.map(() => freePort()));
    const config = (i: number) => ({
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      state: { directory: `./state-${names[i]}`, redis: { url: redis.url, lease: `${LEASE_MS}ms`, agentId: names[i] } },
      votes: {
        enabled: true,
        pollInterval: '5s',
        lookback: '1h',
        hooks: [{ url: `${rewards.url}/${names[i]}`, name: 'reward' }],
        reminders: { enabled: true, hooks: [{ url: `${reminders.url}/${names[i]}`, name: 'dm', retries: 10 }] },
      },
      webhooks: { enabled: true, listen: `127.0.0.1:${ports[i]}`, secrets },
    });
    const daemons: Daemon[] = [];
    for (const i of names.keys()) daemons.push(await startDaemon(names[i]!, dir, healthPorts[i]!, config(i)));
    await waitFor('every agent ready', async () => (await Promise.all(daemons.map(readyz))).every((r) => r?.status === 200), 20_000, 50);
    await waitFor('a leader', async () => (await Promise.all(daemons.map(leads))).filter(Boolean).length === 1, 10_000, 20);
    const leaderIndex = (await Promise.all(daemons.map(leads))).indexOf(true);
    const leader = daemons[leaderIndex]!;
    const survivors = daemons.filter((d) => d !== leader);

    // One vote per voter every 50 ms: their reminders come due one after another, 3 s later.
    const due = new Map<string, number>();
    let last = Date.now();
    const streaming = (async () => {
      for (const voter of voters) {
        last = Math.max(Date.now(), last + 1);
        const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id, created_at: new Date(last).toISOString() });
        due.set(`reminder:${voteKey(vote.user_id, vote.created_at)}`, Date.parse(vote.expires_at));
        await sleep(VOTE_EVERY_MS);
      }
    })();

    // The kill: the leader has sent a few reminders and has calls in flight.
    await waitFor('reminders being sent', () => reminders.calls.filter((c) => c.agent === leader.name).length >= 15, 15_000, 5);
    const killedAt = Date.now();
    leader.child.kill('SIGKILL');
    expect(await leader.exited).toBe('SIGKILL');
    const before = reminders.calls.filter((c) => c.at <= killedAt);
    // Dead now: every call it made is in.
    const killedCalls = reminders.calls.filter((c) => c.agent === leader.name);
    // In flight at the kill: called, and its success not in the shared ledger (the killed agent writes nothing more):
    // neither the reminder complete (`c`, written for its last hook) nor the hook among those done (`d`).
    const recorded = async (key: string) => {
      const record = `listing-agent:reminders:vote:${key}`;
      return (await redis.command('HGET', record, 'c')).endsWith('\n1') || (await redis.command('HGET', record, 'd')).includes('"dm"');
    };
    const inFlight: SlowHookCall[] = [];
    for (const c of killedCalls) if (!(await recorded(c.key))) inFlight.push(c);
    const unanswered = killedCalls.filter((c) => c.answered === undefined).length;
    // Only the leader fired before the kill.
    expect(new Set(before.map((c) => c.agent))).toEqual(new Set([leader.name]));

    await waitFor('a new leader', () => survivors.some((d) => loggedAt(d, TOOK_LEASE, killedAt) !== undefined), 10_000, 10);
    const next = survivors.find((d) => loggedAt(d, TOOK_LEASE, killedAt) !== undefined)!;
    await streaming;
    await waitFor('every reminder sent', () => new Set(reminders.calls.map((c) => c.key)).size >= VOTES, 30_000, 50);
    // Every reminder finished in the shared ledger (the killed agent's pending ones swept), none left scheduled.
    await waitFor('the reminder ledger settled', async () => (await redis.command('HLEN', 'listing-agent:reminders:votes:pending')) === ':0', 15_000, 50);
    expect(await redis.command('ZCARD', 'listing-agent:reminders:due')).toBe(':0');
    await emu.admin.idle();

    // The killed agent again, on its own config and agent ID: it stands by and fires nothing.
    const restartedAt = Date.now();
    const restarted = await startDaemon(leader.name, dir, healthPorts[leaderIndex]!, config(leaderIndex));
    await waitFor('the restarted agent ready', async () => (await readyz(restarted))?.status === 200, 20_000, 50);
    // One lease and a look at the schedule: a reminder it took back would have fired by now.
    await sleep(LEASE_MS + 500);
    expect(reminders.calls.filter((c) => c.at >= restartedAt)).toEqual([]);
    expect(await leads(restarted)).toBe(false);

    // Every reminder sent; one twice only when the killed leader had it in flight, and then once more by another agent.
    const firings = new Map<string, SlowHookCall[]>();
    for (const c of reminders.calls) firings.set(c.key, [...(firings.get(c.key) ?? []), c]);
    expect([...due.keys()].filter((key) => !firings.has(key))).toEqual([]);
    expect([...firings.keys()].filter((key) => !due.has(key))).toEqual([]);
    const twice = [...firings].filter(([, calls]) => calls.length > 1);
    const inFlightKeys = new Set(inFlight.map((c) => c.key));
    for (const [key, calls] of twice) {
      expect({ key, by: calls.map((c) => c.agent) }).toEqual({ key, by: [leader.name, expect.not.stringMatching(new RegExp(`^${leader.name}$`))] });
      expect({ key, inFlight: inFlightKeys.has(key) }).toEqual({ key, inFlight: true });
    }
    expect(twice.length).toBeLessThanOrEqual(inFlight.length);
    const after = reminders.calls.filter((c) => c.at > killedAt);
    expect(after.some((c) => c.agent === next.name)).toBe(true);

    // The new leader's status page: nothing scheduled, the last sent listed.
    const status = (await call<StatusDocument>(`${next.health}/status.json`)).body.votes.reminders;
    expect(status).toMatchObject({ enabled: true, scheduled: 0, next: [] });
    expect(status.lastSent.length).toBeGreaterThan(0);
    expect(status.lastSent.every((r) => due.has(`reminder:${r.voteKey}`))).toBe(true);

    const lateness = reminders.calls.map((c) => c.at - due.get(c.key)!).sort((x, y) => x - y);
    const quantile = (q: number) => lateness[Math.min(lateness.length - 1, Math.floor(q * lateness.length))]!;
    console.log(
      `reminders failover: leader ${leader.name} killed after ${killedCalls.length} reminder calls (${inFlight.length} in flight, ${unanswered} unanswered); ` +
        `${next.name} took the lease after ${loggedAt(next, TOOK_LEASE, killedAt)! - killedAt} ms; ${reminders.calls.length} calls for ${VOTES} reminders, ` +
        `${twice.length} sent twice; sent after due: median ${quantile(0.5)} ms, max ${lateness.at(-1)} ms; restarted ${leader.name} sent 0`,
    );

    for (const daemon of [...survivors, restarted]) daemon.child.kill('SIGTERM');
    expect(await Promise.all([...survivors, restarted].map((d) => d.exited))).toEqual([0, 0, 0]);
  });
});
