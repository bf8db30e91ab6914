/**
 * The leader lease as a pure core: times and outcomes in, decisions out, no I/O and no timers. The
 * Redis adapter (`redis-lease.ts`) runs the requests and the timers around it.
 *
 * The lease is one Redis key with a TTL of `leaseMs`. The leader renews it every `leaseMs / 3`;
 * a standby tries to take it every `leaseMs / 5`, and sooner when the holder's remaining TTL says
 * the key expires before that (so a dead leader is usually replaced as soon as its key expires).
 *
 * Safety (never two agents believing they lead): every deadline counts from the moment a request
 * was SENT, never from when its answer came. Redis starts the key's TTL when it runs the command,
 * which is after it was sent, so by this agent's clock the key cannot expire before
 * `sentAt + leaseMs`. The leader believes it leads only until `sentAt + leaseMs - marginMs` of its
 * last successful acquire or renewal, and steps down then even with a renewal still in flight. The
 * margin (a tenth of the lease) absorbs a difference of clock rate between this host and Redis;
 * what no margin absorbs (a process frozen for longer than the lease, then writing) is what the
 * fencing token stops: the store refuses a write whose token is not the lease's current one.
 */

/** The periods of the lease, all derived from `leaseMs`. */
export interface LeaseTiming {
  /** The key's TTL (`state.redis.lease`). */
  leaseMs: number;
  /** How often the leader renews: a third of the lease, so two renewals can fail before it steps down. */
  renewEveryMs: number;
  /** After a failed renewal, the next try comes this soon (a tenth of the lease). */
  renewRetryMs: number;
  /** How often a standby tries to take the lease: a fifth of the lease. */
  tryEveryMs: number;
  /** The leader steps down this long before the key could expire (a tenth of the lease). */
  marginMs: number;
  /** A standby aiming at the holder's expiry tries this long after it. Default 10 ms. */
  expirySlackMs: number;
}

/** The periods for a lease of `leaseMs` (see {@link LeaseTiming} for each). */
export function leaseTiming(leaseMs: number): LeaseTiming {
  if (!Number.isFinite(leaseMs) || leaseMs < 100) throw new RangeError(`the lease must be at least 100 ms, not ${leaseMs}`);
  return {
    leaseMs,
    renewEveryMs: Math.floor(leaseMs / 3),
    renewRetryMs: Math.floor(leaseMs / 10),
    tryEveryMs: Math.floor(leaseMs / 5),
    marginMs: Math.floor(leaseMs / 10),
    expirySlackMs: 10,
  };
}

/** This agent does not lead: it tries to take the lease at `nextTryAt`. */
export interface StandbyState {
  role: 'standby';
  /** The holder's agent ID as last seen; undefined when none was seen (or Redis was not reached). */
  leaderId: string | undefined;
  nextTryAt: number;
  /**
   * The lease value this agent held last (`<agent id>|<token>`), so that after stepping down on a
   * slow Redis it can take back a lease that is still its own, under a new token, without waiting
   * for it to expire. Undefined when it never led or the lease is known to be gone.
   */
  previousValue: string | undefined;
}

/** This agent leads under `token` until `validUntil` (by its own clock), unless renewed. */
interface LeaderState {
  role: 'leader';
  token: number;
  /** The key's value, `<agent id>|<token>`. */
  value: string;
  /** When this agent stops believing it leads: last successful send + lease - margin. */
  validUntil: number;
  nextRenewAt: number;
}

/** Where the lease stands for this agent. */
export type LeaseState = StandbyState | LeaderState;

/** What to do now, and when to look again at the latest. */
export interface LeaseDecision {
  action: 'acquire' | 'renew' | 'stepDown' | 'wait';
  /** When to call {@link decide} again (after acting, or to act). */
  wakeAt: number;
}

/** What an acquire attempt found. */
export type AcquireOutcome =
  | { kind: 'acquired'; token: number; value: string }
  /** Another agent holds the lease, `ttlMs` more (negative: no TTL or no key). */
  | { kind: 'held'; holder: string; ttlMs: number }
  | { kind: 'failed' };

/** What a renewal found. */
export type RenewOutcome =
  | { kind: 'renewed' }
  /** The key is no longer ours: expired, or taken by `holder` (empty when nobody holds it). */
  | { kind: 'lost'; holder: string; ttlMs: number }
  | { kind: 'failed' };

/**
 * The state of an agent that has just started: it tries at once. `leaderId`: the holder it read
 * before starting (see `look` in `redis-lease.ts`), kept until its first try says otherwise.
 */
export function initialLeaseState(now: number, leaderId?: string): StandbyState {
  return { role: 'standby', leaderId, nextTryAt: now, previousValue: undefined };
}

/**
 * The state after reading who holds the lease (`holder`: undefined when no key): only a standby
 * learns from it, a leader's own requests say more.
 */
export function afterLook(state: LeaseState, holder: string | undefined): LeaseState {
  return state.role === 'standby' && state.leaderId !== holder ? { ...state, leaderId: holder } : state;
}

/** What to do at `now`. A leader past its `validUntil` steps down before anything else. */
export function decide(state: LeaseState, now: number): LeaseDecision {
  if (state.role === 'standby') {
    return now >= state.nextTryAt ? { action: 'acquire', wakeAt: now } : { action: 'wait', wakeAt: state.nextTryAt };
  }
  if (now >= state.validUntil) return { action: 'stepDown', wakeAt: now };
  if (now >= state.nextRenewAt) return { action: 'renew', wakeAt: now };
  return { action: 'wait', wakeAt: Math.min(state.nextRenewAt, state.validUntil) };
}

/** A standby's next try after seeing a holder with `ttlMs` left: at its expiry when that comes first. */
function nextTryAfterHeld(at: number, ttlMs: number, timing: LeaseTiming): number {
  const expiry = ttlMs >= 0 ? ttlMs + timing.expirySlackMs : timing.tryEveryMs;
  return at + Math.min(timing.tryEveryMs, expiry);
}

/**
 * The state after an acquire sent at `sentAt` and answered at `at` (both by this agent's clock).
 * A lease acquired is believed only until `sentAt + leaseMs - marginMs`; an answer that comes
 * after that (a very slow Redis) makes no leader, and the next try takes the lease back under a
 * new token.
 */
export function afterAcquire(state: LeaseState, outcome: AcquireOutcome, sentAt: number, at: number, timing: LeaseTiming): LeaseState {
  // A leader does not acquire; an answer for an old attempt changes nothing.
  if (state.role === 'leader') return state;
  switch (outcome.kind) {
    case 'acquired': {
      const validUntil = sentAt + timing.leaseMs - timing.marginMs;
      if (at >= validUntil) return { role: 'standby', leaderId: undefined, nextTryAt: at, previousValue: outcome.value };
      return { role: 'leader', token: outcome.token, value: outcome.value, validUntil, nextRenewAt: sentAt + timing.renewEveryMs };
    }
    case 'held':
      return {
        role: 'standby',
        leaderId: outcome.holder,
        nextTryAt: nextTryAfterHeld(at, outcome.ttlMs, timing),
        previousValue: undefined,
      };
    case 'failed':
      return { ...state, nextTryAt: at + timing.tryEveryMs };
  }
}

/**
 * The state after a renewal sent at `sentAt` and answered at `at`. Only the renewal of the lease
 * still held counts: after a step-down (the timer won the race with a late answer) it is ignored.
 */
export function afterRenew(
  state: LeaseState,
  outcome: RenewOutcome,
  token: number,
  sentAt: number,
  at: number,
  timing: LeaseTiming,
): LeaseState {
  if (state.role !== 'leader' || state.token !== token) return state;
  switch (outcome.kind) {
    case 'renewed': {
      const validUntil = Math.max(state.validUntil, sentAt + timing.leaseMs - timing.marginMs);
      if (at >= validUntil) return stepDown(state, at);
      return { ...state, validUntil, nextRenewAt: sentAt + timing.renewEveryMs };
    }
    case 'lost':
      return {
        role: 'standby',
        leaderId: outcome.holder === '' ? undefined : outcome.holder,
        nextTryAt: outcome.holder === '' ? at : nextTryAfterHeld(at, outcome.ttlMs, timing),
        previousValue: undefined,
      };
    case 'failed':
      return { ...state, nextRenewAt: Math.min(at + timing.renewRetryMs, state.validUntil) };
  }
}

/**
 * A leader that could not renew in time steps down: it tries again at once, since the lease may
 * still be its own (then it takes it back under a new token).
 */
export function stepDown(state: LeaseState, now: number): StandbyState {
  if (state.role === 'standby') return state;
  return { role: 'standby', leaderId: undefined, nextTryAt: now, previousValue: state.value };
}

/** `<agent id>|<token>` split at its last `|` (an agent ID may itself hold one). */
export function parseLeaseValue(value: string): { agentId: string; token: number } | undefined {
  const bar = value.lastIndexOf('|');
  if (bar <= 0) return undefined;
  const token = Number(value.slice(bar + 1));
  return Number.isSafeInteger(token) ? { agentId: value.slice(0, bar), token } : undefined;
}
