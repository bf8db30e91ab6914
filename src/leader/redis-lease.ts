import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import type { RedisConnection } from '../redis/connection.js';
import { REDIS_KEYS } from '../redis/keys.js';
import {
  afterAcquire,
  afterRenew,
  decide,
  initialLeaseState,
  leaseTiming,
  parseLeaseValue,
  stepDown,
  type AcquireOutcome,
  type LeaseState,
  type LeaseTiming,
  type RenewOutcome,
} from './lease.js';
import type { Leadership, LeadershipEvents } from '../runtime/leadership.js';

/**
 * Takes the lease when it is free: a new fencing token (INCR) and the key set with the lease as
 * its TTL, in one script so no token is handed out without a lease, nor a lease without a token.
 * ARGV[3] is the value this agent held last: a lease still its own is taken back under a new token.
 * Answers `{1, value, token}`, or `{0, holder value, PTTL}` when another agent holds it.
 */
const ACQUIRE = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[3] then
  return {0, current, redis.call('PTTL', KEYS[1])}
end
local token = redis.call('INCR', KEYS[2])
local value = ARGV[1] .. '|' .. token
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
return {1, value, token}
`;

/** Renews only our own lease: `{1}`, or `{0, holder value or '', PTTL}` when it is not ours any more. */
const RENEW = `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
return {0, current or '', redis.call('PTTL', KEYS[1])}
`;

/** Deletes the lease only if it is still ours (a graceful stop hands over at once). */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

/** Options of {@link createRedisLeadership}. */
export interface RedisLeadershipOptions {
  /** The agent's Redis connection (started by the caller; the lease waits for it while it is down). */
  connection: RedisConnection;
  /** This agent's ID in the lease value (`state.redis.agentId`). Must not contain a newline. */
  agentId: string;
  /** The lease period (`state.redis.lease`, default 15 s; the config allows 2 s to 5 min). */
  leaseMs: number;
  /** Default: silent. Logs each change of leadership at info. */
  logger?: AgentLogger;
  /**
   * A monotonic clock in ms for the lease deadlines. Default `performance.now()`: a wall clock
   * that jumps (NTP, a VM resumed) must not stretch a lease this agent believes it holds.
   */
  now?: () => number;
}

/** A {@link Leadership} backed by a Redis lease, with its lifecycle. */
export interface RedisLeadership extends Leadership {
  /** The lease periods in use. */
  readonly timing: LeaseTiming;
  /** Starts trying to take the lease (in the background). Safe to call more than once. */
  start(): void;
  /**
   * Stops trying and renewing; releases the lease if it is still ours, so that a standby takes
   * over at its next try instead of waiting for the key to expire. Emits `change(false)` when
   * it led. Safe to call more than once.
   */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Reads an integer from a script's reply (RESP integers come back as numbers). */
function integer(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/**
 * The leader lease in Redis (key `leader`, fencing counter `leader:fence`, both under the
 * prefix), run on timers around the pure core in `lease.ts`.
 *
 * - A standby tries `SET leader <agentId>|<token> NX PX lease` (token = `INCR leader:fence`, in one
 *   Lua script) every lease / 5, and right after the holder's key is due to expire when that is
 *   sooner. So a leader that dies is replaced within lease + lease / 5 at worst (its last renewal
 *   was at most a renewal period before it died, so in practice within lease + one round trip).
 *   A leader that stops gracefully releases the key and is replaced within lease / 5.
 * - The leader renews (PEXPIRE, only while the value is still its own) every lease / 3, and steps
 *   down by its own clock at lease - lease / 10 after its last successful renewal was sent: before
 *   Redis could hand the lease to anyone else.
 * - Every new lease carries a larger fencing token; the state store checks it on every write of a
 *   leader-only key, so a leader that was frozen past its lease cannot overwrite its successor.
 */
export function createRedisLeadership(options: RedisLeadershipOptions): RedisLeadership {
  const { connection, agentId } = options;
  const timing = leaseTiming(options.leaseMs);
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? (() => performance.now());
  const leaderKey = connection.key(REDIS_KEYS.leader);
  const fenceKey = connection.key(REDIS_KEYS.fence);
  const acquireScript = connection.script(ACQUIRE);
  const renewScript = connection.script(RENEW);
  const releaseScript = connection.script(RELEASE);

  const emitter = new EventEmitter<LeadershipEvents>();
  let state: LeaseState = initialLeaseState(now());
  let running = false;
  let inFlight: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopping: Promise<void> | undefined;
  let lastFailure: string | undefined;

  function leaderIdOf(current: LeaseState): string | undefined {
    return current.role === 'leader' ? agentId : current.leaderId;
  }

  /** Moves to `next`, emitting `change` and `leader` for what changed. */
  function transition(next: LeaseState): void {
    const before = state;
    state = next;
    const wasLeader = before.role === 'leader';
    const isLeader = next.role === 'leader';
    if (wasLeader !== isLeader || (wasLeader && isLeader && before.token !== next.token)) {
      if (isLeader) logger.info({ agentId, token: next.token }, 'took the leader lease: this agent posts stats, syncs commands and polls votes');
      else logger.warn({ agentId, leader: next.leaderId ?? null, reason: lastFailure ?? null }, 'no longer the leader: standing by');
      emitter.emit('change', isLeader);
    }
    const previousLeader = leaderIdOf(before);
    const leaderNow = leaderIdOf(next);
    if (previousLeader !== leaderNow) {
      if (!isLeader && !wasLeader) logger.info({ agentId, leader: leaderNow ?? null }, leaderNow === undefined ? 'no leader seen' : 'standing by');
      emitter.emit('leader', leaderNow);
    }
  }

  /** Applies a request's outcome: with events while running, silently once stop() began (it tidies up). */
  function settle(next: LeaseState): void {
    if (running) transition(next);
    else state = next;
  }

  function schedule(at: number): void {
    clearTimeout(timer);
    if (!running) return;
    timer = setTimeout(() => void tick(), Math.max(0, at - now()));
    timer.unref();
  }

  /** Remembers why the lease could not be taken or renewed (logged at debug when it changes). */
  function failed(doing: string, error: unknown): void {
    const detail = error instanceof Error ? error.message : String(error);
    if (lastFailure !== detail) logger.debug({ err: detail }, `leader lease: could not ${doing}`);
    lastFailure = detail;
  }

  async function acquire(): Promise<AcquireOutcome> {
    const previous = state.role === 'standby' ? (state.previousValue ?? '') : '';
    const reply = (await acquireScript.run([leaderKey, fenceKey], [agentId, timing.leaseMs, previous])) as unknown[];
    if (integer(reply[0]) === 1) return { kind: 'acquired', value: String(reply[1]), token: integer(reply[2]) };
    const value = String(reply[1]);
    return { kind: 'held', holder: parseLeaseValue(value)?.agentId ?? value, ttlMs: integer(reply[2]) };
  }

  async function renew(value: string): Promise<RenewOutcome> {
    const reply = (await renewScript.run([leaderKey], [value, timing.leaseMs])) as unknown[];
    if (integer(reply[0]) === 1) return { kind: 'renewed' };
    const current = String(reply[1] ?? '');
    return { kind: 'lost', holder: current === '' ? '' : (parseLeaseValue(current)?.agentId ?? current), ttlMs: integer(reply[2]) };
  }

  /** One step: decide, act (one request at a time), apply, and arm the next wake-up. */
  async function tick(): Promise<void> {
    if (!running) return;
    const decision = decide(state, now());
    if (decision.action === 'stepDown') {
      transition(stepDown(state, now()));
      return tick();
    }
    if (inFlight !== undefined) {
      // The request's end arms the next step; a leader's step-down deadline stays armed meanwhile.
      if (state.role === 'leader') schedule(state.validUntil);
      return;
    }
    if (decision.action === 'wait') {
      schedule(decision.wakeAt);
      return;
    }
    inFlight = act(decision.action).finally(() => (inFlight = undefined));
    await inFlight;
    if (running) schedule(decide(state, now()).wakeAt);
  }

  /** Runs one acquire or renewal and applies its outcome (also while stopping: stop() waits for it). */
  async function act(action: 'acquire' | 'renew'): Promise<void> {
    const sentAt = now();
    if (action === 'acquire') {
      // No check of the connection first: while Redis is down a command fails at once.
      let outcome: AcquireOutcome = { kind: 'failed' };
      try {
        outcome = await acquire();
        lastFailure = undefined;
      } catch (error) {
        failed('take the lease', error);
      }
      settle(afterAcquire(state, outcome, sentAt, now(), timing));
      return;
    }
    if (state.role !== 'leader') return;
    const { token, value } = state;
    schedule(state.validUntil);
    let outcome: RenewOutcome = { kind: 'failed' };
    try {
      outcome = await renew(value);
      lastFailure = undefined;
      if (outcome.kind === 'lost') lastFailure = outcome.holder === '' ? 'the lease expired in Redis' : `the lease was taken by ${outcome.holder}`;
    } catch (error) {
      failed('renew the lease', error);
    }
    settle(afterRenew(state, outcome, token, sentAt, now(), timing));
  }

  /** Try at once when Redis comes back, instead of waiting for the next period. */
  const onUp = () => {
    if (running && state.role === 'standby') schedule(now());
  };

  function start(): void {
    if (running || stopping) return;
    running = true;
    connection.on('up', onUp);
    state = initialLeaseState(now());
    void tick();
  }

  function stop(): Promise<void> {
    stopping ??= (async () => {
      const wasRunning = running;
      running = false;
      clearTimeout(timer);
      connection.off('up', onUp);
      if (!wasRunning) return;
      // An acquire in flight may take the lease: wait for its answer, so that it is released too.
      await inFlight?.catch(() => undefined);
      const held = state;
      if (held.role === 'leader') {
        lastFailure = 'stopping';
        transition({ role: 'standby', leaderId: undefined, nextTryAt: Number.POSITIVE_INFINITY, previousValue: undefined });
      }
      const value = held.role === 'leader' ? held.value : held.previousValue;
      if (value === undefined) return;
      try {
        if (integer(await releaseScript.run([leaderKey], [value])) === 1) logger.info({ agentId }, 'released the leader lease');
      } catch (error) {
        // It expires by itself within one lease period.
        logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not release the leader lease; it expires by itself');
      }
    })();
    return stopping;
  }

  // Getters defined on the emitter itself (Object.assign would copy their values once).
  const leading = () => state.role === 'leader' && now() < state.validUntil;
  const leadership = Object.defineProperties(emitter, {
    agentId: { value: agentId, enumerable: true },
    timing: { value: timing, enumerable: true },
    isLeader: { get: leading, enumerable: true },
    fencingToken: { get: () => (state.role === 'leader' && leading() ? state.token : undefined), enumerable: true },
    leaderId: { get: () => leaderIdOf(state), enumerable: true },
    start: { value: start },
    stop: { value: stop },
    [Symbol.asyncDispose]: { value: stop },
  }) as unknown as RedisLeadership;
  return leadership;
}
