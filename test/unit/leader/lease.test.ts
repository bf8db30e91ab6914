import { describe, expect, it } from 'vitest';
import {
  afterAcquire,
  afterLook,
  afterRenew,
  decide,
  initialLeaseState,
  leaseTiming,
  parseLeaseValue,
  stepDown,
  type AcquireOutcome,
  type LeaseState,
  type RenewOutcome,
} from '../../../src/leader/lease.js';
import { seededRandom } from '../../../src/emulator/faults.js';

const LEASE = 2_000;
const timing = leaseTiming(LEASE);

describe('leaseTiming', () => {
  it('renews every third, tries every fifth, steps down a tenth early', () => {
    expect(timing).toEqual({ leaseMs: 2_000, renewEveryMs: 666, renewRetryMs: 200, tryEveryMs: 400, marginMs: 200, expirySlackMs: 10 });
    expect(() => leaseTiming(0)).toThrow(RangeError);
  });
});

describe('the lease core', () => {
  it('a look at the lease tells a standby who holds it, and a start keeps that; a leader learns nothing from it', () => {
    const standby = afterLook(initialLeaseState(0), 'a');
    expect(standby).toEqual({ role: 'standby', leaderId: 'a', nextTryAt: 0, previousValue: undefined });
    expect(afterLook(standby, undefined)).toMatchObject({ leaderId: undefined });
    expect(afterLook(standby, 'a')).toBe(standby);
    expect(initialLeaseState(5, 'a')).toEqual({ role: 'standby', leaderId: 'a', nextTryAt: 5, previousValue: undefined });
    const leader = afterAcquire(initialLeaseState(0), { kind: 'acquired', token: 1, value: 'b|1' }, 0, 5, timing);
    expect(afterLook(leader, 'a')).toBe(leader);
  });

  it('a new agent tries at once; a free lease makes it leader until sent + lease - margin', () => {
    let state: LeaseState = initialLeaseState(1_000);
    expect(decide(state, 1_000)).toEqual({ action: 'acquire', wakeAt: 1_000 });
    // Sent at 1000, answered at 1050: the deadline counts from the send.
    state = afterAcquire(state, { kind: 'acquired', token: 7, value: 'a|7' }, 1_000, 1_050, timing);
    expect(state).toEqual({ role: 'leader', token: 7, value: 'a|7', validUntil: 2_800, nextRenewAt: 1_666 });
    expect(decide(state, 1_100)).toEqual({ action: 'wait', wakeAt: 1_666 });
    expect(decide(state, 1_666).action).toBe('renew');
  });

  it('renews every third of the lease and keeps leading while renewals succeed', () => {
    let state: LeaseState = afterAcquire(initialLeaseState(0), { kind: 'acquired', token: 1, value: 'a|1' }, 0, 5, timing);
    for (let sent = 666; sent < 20_000; sent += 666) {
      expect(decide(state, sent).action).toBe('renew');
      state = afterRenew(state, { kind: 'renewed' }, 1, sent, sent + 20, timing);
      expect(state).toMatchObject({ role: 'leader', validUntil: sent + 1_800, nextRenewAt: sent + 666 });
    }
  });

  it('steps down by its own clock before the key could expire when renewals keep failing', () => {
    let state: LeaseState = afterAcquire(initialLeaseState(0), { kind: 'acquired', token: 3, value: 'a|3' }, 0, 5, timing);
    const failed: RenewOutcome = { kind: 'failed' };
    let t = 666;
    const tries: number[] = [];
    while (decide(state, t).action !== 'stepDown') {
      const decision = decide(state, t);
      if (decision.action === 'renew') {
        tries.push(t);
        state = afterRenew(state, failed, 3, t, t + 1, timing);
      }
      t = decide(state, t + 1).wakeAt;
    }
    // Retries every tenth of the lease after the first failure, then gives up at 1800 < 2000.
    expect(tries).toEqual([666, 867, 1_068, 1_269, 1_470, 1_671]);
    expect(t).toBe(1_800);
    expect(t).toBeLessThan(LEASE);
    const down = stepDown(state, t);
    // It tries again at once: the key may still be its own, taken back under a new token.
    expect(down).toEqual({ role: 'standby', leaderId: undefined, nextTryAt: 1_800, previousValue: 'a|3' });
  });

  it('a renewal answered too late to count steps down; a late answer after a step-down is ignored', () => {
    const leader = afterAcquire(initialLeaseState(0), { kind: 'acquired', token: 1, value: 'a|1' }, 0, 5, timing);
    // Sent at 666, answered at 2500 (a Redis stuck for 1.8 s): the deadline 2466 is already past.
    expect(afterRenew(leader, { kind: 'renewed' }, 1, 666, 2_500, timing)).toMatchObject({ role: 'standby', previousValue: 'a|1' });
    const down = stepDown(leader, 1_800);
    expect(afterRenew(down, { kind: 'renewed' }, 1, 666, 1_900, timing)).toBe(down);
    // An acquire answered after its own deadline makes no leader either.
    expect(afterAcquire(initialLeaseState(0), { kind: 'acquired', token: 2, value: 'a|2' }, 0, 1_900, timing)).toMatchObject({ role: 'standby', previousValue: 'a|2' });
  });

  it('a lost lease (taken or expired) makes a standby at once', () => {
    const leader = afterAcquire(initialLeaseState(0), { kind: 'acquired', token: 1, value: 'a|1' }, 0, 5, timing);
    expect(afterRenew(leader, { kind: 'lost', holder: 'b', ttlMs: 1_500 }, 1, 666, 670, timing)).toEqual({
      role: 'standby',
      leaderId: 'b',
      nextTryAt: 670 + 400,
      previousValue: undefined,
    });
    expect(afterRenew(leader, { kind: 'lost', holder: '', ttlMs: -2 }, 1, 666, 670, timing)).toMatchObject({ role: 'standby', nextTryAt: 670 });
  });

  it('a standby tries every fifth of the lease, and right after the holder expires when that is sooner', () => {
    const held = (ttlMs: number): AcquireOutcome => ({ kind: 'held', holder: 'b', ttlMs });
    expect(afterAcquire(initialLeaseState(0), held(1_900), 0, 3, timing)).toEqual({ role: 'standby', leaderId: 'b', nextTryAt: 403, previousValue: undefined });
    expect(afterAcquire(initialLeaseState(0), held(120), 0, 3, timing)).toMatchObject({ nextTryAt: 3 + 120 + 10 });
    // No TTL reported (-1, -2): the period.
    expect(afterAcquire(initialLeaseState(0), held(-1), 0, 3, timing)).toMatchObject({ nextTryAt: 403 });
    // Redis down: the period, remembering the last lease held.
    const down = { role: 'standby' as const, leaderId: 'b', nextTryAt: 0, previousValue: 'a|4' };
    expect(afterAcquire(down, { kind: 'failed' }, 0, 2_000, timing)).toEqual({ ...down, nextTryAt: 2_400 });
  });

  it('parses lease values, agent IDs with a bar included', () => {
    expect(parseLeaseValue('host/12|42')).toEqual({ agentId: 'host/12', token: 42 });
    expect(parseLeaseValue('a|b|3')).toEqual({ agentId: 'a|b', token: 3 });
    expect(parseLeaseValue('nobar')).toBeUndefined();
    expect(parseLeaseValue('a|x')).toBeUndefined();
  });
});

interface SimRequest {
  kind: 'acquire' | 'renew';
  token: number;
  sentAt: number;
  /** When Redis runs it (undefined: lost on the way, the client times out). */
  runAt: number | undefined;
  answerAt: number;
  result?: AcquireOutcome | RenewOutcome;
}

interface SimAgent {
  id: string;
  state: LeaseState;
  request: SimRequest | undefined;
  deadAt: number;
  /** Frozen (a GC pause, a stopped VM) until then: no timer fires, no answer is read. */
  frozenUntil: number;
}

/**
 * Several agents running the core against a simulated Redis (one key with a TTL, INCR fence) on
 * one clock, with random latencies, lost requests, Redis outages, freezes and deaths; every
 * millisecond checks that an agent believing it leads holds the key in Redis, so two never do.
 */
function simulate(seed: number, agentsCount: number, durationMs: number) {
  const random = seededRandom(seed);
  let key: { value: string; expiresAt: number } | undefined;
  let fence = 0;
  let redisDownUntil = -1;
  const agents: SimAgent[] = Array.from({ length: agentsCount }, (_, i) => ({
    id: `agent-${i}`,
    state: initialLeaseState(Math.floor(random() * 50)),
    request: undefined,
    deadAt: Number.POSITIVE_INFINITY,
    frozenUntil: -1,
  }));
  const takeovers: number[] = [];
  let leaderDiedAt: number | undefined;
  let violations = 0;
  let maxLeaders = 0;

  const runOnRedis = (agent: SimAgent, request: SimRequest, t: number) => {
    if (key && t >= key.expiresAt) key = undefined;
    if (request.kind === 'acquire') {
      const previous = agent.state.role === 'standby' ? agent.state.previousValue : undefined;
      if (key && key.value !== previous) {
        request.result = { kind: 'held', holder: key.value.split('|')[0]!, ttlMs: key.expiresAt - t };
      } else {
        fence += 1;
        key = { value: `${agent.id}|${fence}`, expiresAt: t + LEASE };
        request.result = { kind: 'acquired', token: fence, value: key.value };
      }
    } else if (key && key.value === `${agent.id}|${request.token}`) {
      key.expiresAt = t + LEASE;
      request.result = { kind: 'renewed' };
    } else {
      request.result = { kind: 'lost', holder: key ? key.value.split('|')[0]! : '', ttlMs: key ? key.expiresAt - t : -2 };
    }
  };

  for (let t = 0; t < durationMs; t += 1) {
    if (key && t >= key.expiresAt) key = undefined;
    // Faults, now and then.
    if (random() < 0.0002) redisDownUntil = t + Math.floor(random() * 3_000);
    for (const agent of agents) {
      if (t >= agent.deadAt) continue;
      if (random() < 0.0001) agent.frozenUntil = t + Math.floor(random() * 4_000);
      if (agent.state.role === 'leader' && random() < 0.00005 && agents.filter((a) => a.deadAt > t).length > 1) {
        agent.deadAt = t;
        leaderDiedAt = t;
        continue;
      }
      const request = agent.request;
      if (request?.runAt === t) {
        if (t < redisDownUntil) request.result = { kind: 'failed' };
        else runOnRedis(agent, request, t);
      }
      if (t < agent.frozenUntil) continue;
      if (request && t >= request.answerAt) {
        agent.request = undefined;
        const outcome = request.result ?? { kind: 'failed' as const };
        agent.state =
          request.kind === 'acquire'
            ? afterAcquire(agent.state, outcome as AcquireOutcome, request.sentAt, t, timing)
            : afterRenew(agent.state, outcome as RenewOutcome, request.token, request.sentAt, t, timing);
      }
      const decision = decide(agent.state, t);
      if (decision.action === 'stepDown') agent.state = stepDown(agent.state, t);
      else if ((decision.action === 'acquire' || decision.action === 'renew') && !agent.request) {
        const lost = random() < 0.02;
        const there = 1 + Math.floor(random() * (random() < 0.05 ? 1_500 : 20));
        const back = 1 + Math.floor(random() * 20);
        agent.request = {
          kind: decision.action,
          token: agent.state.role === 'leader' ? agent.state.token : 0,
          sentAt: t,
          runAt: lost ? undefined : t + there,
          // The client's command timeout: 2 s.
          answerAt: lost ? t + 2_000 : Math.min(t + there + back, t + 2_000),
        };
        if (!lost && t + there + back > t + 2_000) agent.request.runAt = t + there; // runs, but the answer times out
      }
    }
    const believing = agents.filter((a) => t < a.deadAt && a.state.role === 'leader' && t < a.state.validUntil);
    maxLeaders = Math.max(maxLeaders, believing.length);
    for (const leader of believing) {
      if (leader.state.role === 'leader' && key?.value !== leader.state.value) violations += 1;
    }
    if (leaderDiedAt !== undefined && believing.length === 1) {
      takeovers.push(t - leaderDiedAt);
      leaderDiedAt = undefined;
    }
  }
  return { maxLeaders, violations, takeovers, fence };
}

describe('the lease core in a simulation with faults', () => {
  it('never lets two agents believe they lead, and replaces a dead leader', () => {
    const allTakeovers: number[] = [];
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const result = simulate(seed, 3, 120_000);
      expect({ seed, violations: result.violations, maxLeaders: result.maxLeaders }).toEqual({ seed, violations: 0, maxLeaders: 1 });
      expect(result.fence).toBeGreaterThan(1);
      allTakeovers.push(...result.takeovers);
    }
    expect(allTakeovers.length).toBeGreaterThan(0);
  });

  it('with no faults but a death, takes over within lease + lease / 5 (aiming at the expiry: about the lease)', () => {
    let key: { value: string; expiresAt: number } | undefined;
    let fence = 0;
    const states: LeaseState[] = [initialLeaseState(0), initialLeaseState(3)];
    let deadAt: number | undefined;
    let takeover: number | undefined;
    for (let t = 0; t < 20_000 && takeover === undefined; t += 1) {
      if (key && t >= key.expiresAt) key = undefined;
      for (const [i, state] of states.entries()) {
        if (deadAt !== undefined && i === 0) continue;
        const decision = decide(state, t);
        if (decision.action === 'stepDown') states[i] = stepDown(state, t);
        else if (decision.action === 'acquire') {
          if (key) states[i] = afterAcquire(state, { kind: 'held', holder: key.value, ttlMs: key.expiresAt - t }, t, t + 1, timing);
          else {
            fence += 1;
            key = { value: `a${i}|${fence}`, expiresAt: t + LEASE };
            states[i] = afterAcquire(state, { kind: 'acquired', token: fence, value: key.value }, t, t + 1, timing);
          }
        } else if (decision.action === 'renew' && state.role === 'leader') {
          key!.expiresAt = t + LEASE;
          states[i] = afterRenew(state, { kind: 'renewed' }, state.token, t, t + 1, timing);
        }
      }
      // The first agent leads; it dies at 5.5 s, just before a renewal (the worst case).
      if (deadAt === undefined && t === 5_327) deadAt = t;
      if (deadAt !== undefined && states[1]!.role === 'leader') takeover = t - deadAt;
    }
    expect(states[0]!.role).toBe('leader');
    expect(takeover).toBeDefined();
    expect(takeover!).toBeLessThanOrEqual(LEASE + LEASE / 5);
    expect(takeover!).toBeLessThanOrEqual(LEASE + timing.expirySlackMs + 1);
  });
});
