import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import type { RedisConnection, RedisScript } from '../redis/connection.js';
import { REDIS_KEYS } from '../redis/keys.js';
import { afterAcquire, afterLook, afterRenew, decide, initialLeaseState, leaseTiming, parseLeaseValue, stepDown } from './lease.js';
import type { AcquireOutcome, LeaseState, LeaseTiming, RenewOutcome } from './lease.js';
import type { Leadership, LeadershipEvents } from '../runtime/leadership.js';
import { errorMessage } from '../errors.js';
import { timerDelay } from '../contract/timer-delay.js';

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
  /**
   * Starts trying to take the lease (in the background). Safe to call more than once; after
   * `stop()` (or during one, once it is done) it tries again as a standby.
   */
  start(): void;
  /**
   * Reads who holds the lease, without trying to take it: an agent that has not started yet (or a
   * standby between two tries) then names the leader at once, and `leaderId` stays undefined only
   * when no agent holds the lease. Emits `leader` when that changes what this agent saw. Resolves
   * false when Redis could not be read (never rejects).
   */
  look(): Promise<boolean>;
  /**
   * Stops trying and renewing; releases the lease if it is still ours, so that a standby takes
   * over at its next try instead of waiting for the key to expire. Emits `change(false)` when
   * it led. Safe to call more than once; `start()` may follow.
   */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Reads an integer from a script's reply (RESP integers come back as numbers). */
function integer(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** A running lease: its settings, its scripts, and where it stands. */
interface LeaseRun {
  readonly connection: RedisConnection;
  readonly agentId: string;
  readonly timing: LeaseTiming;
  readonly logger: AgentLogger;
  readonly now: () => number;
  readonly leaderKey: string;
  readonly fenceKey: string;
  readonly scripts: { acquire: RedisScript; renew: RedisScript; release: RedisScript };
  readonly emitter: EventEmitter<LeadershipEvents>;
  /** Try at once when Redis comes back, instead of waiting for the next period. */
  readonly onUp: () => void;
  /** Step down at once when the connection finds itself on a replica: it leads nothing from there. */
  readonly onDown: () => void;
  /** Another server than before (a failover, a restart): the lease is renewed at once, or given up. */
  readonly onServer: () => void;
  lease: LeaseState;
  running: boolean;
  inFlight: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
  stopping: Promise<void> | undefined;
  /** `start()` was called during a stop: start again once it is done. */
  restart: boolean;
  /** Why the lease could not be taken or renewed last (logged at debug when it changes). */
  lastFailure: string | undefined;
}

function leaderIdOf(run: LeaseRun, current: LeaseState): string | undefined {
  return current.role === 'leader' ? run.agentId : current.leaderId;
}

/** Whether this agent leads now: it holds the lease and its own deadline has not passed. */
function leading(run: LeaseRun): boolean {
  return run.lease.role === 'leader' && run.now() < run.lease.validUntil;
}

/** Moves to `next`, emitting `change` and `leader` for what changed. */
function transition(run: LeaseRun, next: LeaseState): void {
  const { logger, agentId, emitter } = run;
  const before = run.lease;
  run.lease = next;
  const wasLeader = before.role === 'leader';
  const isLeader = next.role === 'leader';
  if (wasLeader !== isLeader || (wasLeader && isLeader && before.token !== next.token)) {
    if (isLeader)
      logger.info({ agentId, token: next.token }, 'took the leader lease: this agent posts stats, syncs commands and polls votes');
    else logger.warn({ agentId, leader: next.leaderId ?? null, reason: run.lastFailure ?? null }, 'no longer the leader: standing by');
    emitter.emit('change', isLeader);
  }
  const previousLeader = leaderIdOf(run, before);
  const leaderNow = leaderIdOf(run, next);
  if (previousLeader !== leaderNow) {
    if (!isLeader && !wasLeader)
      logger.info({ agentId, leader: leaderNow ?? null }, leaderNow === undefined ? 'no leader seen' : 'standing by');
    emitter.emit('leader', leaderNow);
  }
}

/** Applies a request's outcome: with events while running, silently once stop() began (it tidies up). */
function settle(run: LeaseRun, next: LeaseState): void {
  if (run.running) transition(run, next);
  else run.lease = next;
}

function schedule(run: LeaseRun, at: number): void {
  clearTimeout(run.timer);
  if (!run.running) return;
  run.timer = setTimeout(() => void tick(run), timerDelay(at - run.now()));
  run.timer.unref();
}

/** Remembers why the lease could not be taken or renewed (logged at debug when it changes). */
function failed(run: LeaseRun, doing: string, error: unknown): void {
  const detail = errorMessage(error);
  if (run.lastFailure !== detail) run.logger.debug({ err: detail }, `leader lease: could not ${doing}`);
  run.lastFailure = detail;
}

async function acquire(run: LeaseRun): Promise<AcquireOutcome> {
  const previous = run.lease.role === 'standby' ? (run.lease.previousValue ?? '') : '';
  const on = run.connection.server;
  const reply = (await run.scripts.acquire.run([run.leaderKey, run.fenceKey], [run.agentId, run.timing.leaseMs, previous])) as unknown[];
  if (integer(reply[0]) === 1) {
    const value = String(reply[1]);
    try {
      // A token a failover could take back could be handed out twice: not led on until confirmed.
      await run.connection.confirm(`the leader lease (fencing token ${integer(reply[2])})`, { on });
    } catch (error) {
      await run.scripts.release.run([run.leaderKey], [value]).catch(() => undefined);
      throw error;
    }
    return { kind: 'acquired', value, token: integer(reply[2]) };
  }
  const value = String(reply[1]);
  return { kind: 'held', holder: parseLeaseValue(value)?.agentId ?? value, ttlMs: integer(reply[2]) };
}

async function renew(run: LeaseRun, value: string): Promise<RenewOutcome> {
  const reply = (await run.scripts.renew.run([run.leaderKey], [value, run.timing.leaseMs])) as unknown[];
  if (integer(reply[0]) === 1) return { kind: 'renewed' };
  const current = String(reply[1] ?? '');
  return { kind: 'lost', holder: current === '' ? '' : (parseLeaseValue(current)?.agentId ?? current), ttlMs: integer(reply[2]) };
}

/** One step: decide, act (one request at a time), apply, and arm the next wake-up. */
async function tick(run: LeaseRun): Promise<void> {
  if (!run.running) return;
  const decision = decide(run.lease, run.now());
  if (decision.action === 'stepDown') {
    transition(run, stepDown(run.lease, run.now()));
    return tick(run);
  }
  if (run.inFlight !== undefined) {
    // The request's end arms the next step; a leader's step-down deadline stays armed meanwhile.
    if (run.lease.role === 'leader') schedule(run, run.lease.validUntil);
    return;
  }
  if (decision.action === 'wait') {
    schedule(run, decision.wakeAt);
    return;
  }
  await tickNow(run, decision.action);
}

/** One renewal (or acquire) now, out of the timer's turn; then the next step is armed as usual. */
async function tickNow(run: LeaseRun, action: 'acquire' | 'renew'): Promise<void> {
  run.inFlight = act(run, action).finally(() => (run.inFlight = undefined));
  await run.inFlight;
  if (run.running) schedule(run, decide(run.lease, run.now()).wakeAt);
}

/** Runs one acquire or renewal and applies its outcome (also while stopping: stop() waits for it). */
async function act(run: LeaseRun, action: 'acquire' | 'renew'): Promise<void> {
  const sentAt = run.now();
  if (action === 'acquire') {
    // No check of the connection first: while Redis is down a command fails at once.
    let outcome: AcquireOutcome = { kind: 'failed' };
    try {
      outcome = await acquire(run);
      run.lastFailure = undefined;
    } catch (error) {
      failed(run, 'take the lease', error);
    }
    settle(run, afterAcquire(run.lease, outcome, sentAt, run.now(), run.timing));
    return;
  }
  if (run.lease.role !== 'leader') return;
  const { token, value } = run.lease;
  schedule(run, run.lease.validUntil);
  let outcome: RenewOutcome = { kind: 'failed' };
  try {
    outcome = await renew(run, value);
    run.lastFailure = undefined;
    if (outcome.kind === 'lost')
      run.lastFailure = outcome.holder === '' ? 'the lease expired in Redis' : `the lease was taken by ${outcome.holder}`;
  } catch (error) {
    failed(run, 'renew the lease', error);
  }
  settle(run, afterRenew(run.lease, outcome, token, sentAt, run.now(), run.timing));
}

function start(run: LeaseRun): void {
  if (run.running) return;
  if (run.stopping) {
    // Started again while stopping: once the lease is released, try for it anew.
    run.restart = true;
    return;
  }
  run.running = true;
  run.connection.on('up', run.onUp);
  run.connection.on('down', run.onDown);
  run.connection.on('server', run.onServer);
  // The holder read before the start is still the best knowledge until the first try answers.
  run.lease = initialLeaseState(run.now(), run.lease.role === 'standby' ? run.lease.leaderId : undefined);
  void tick(run);
}

/** Reads the lease's holder (see `RedisLeadership.look`). */
async function look(run: LeaseRun): Promise<boolean> {
  if (run.stopping) return false;
  const before = run.lease;
  let value: string | null;
  try {
    value = await run.connection.client.get(run.leaderKey);
  } catch (error) {
    failed(run, 'read the lease', error);
    return false;
  }
  // A try that answered meanwhile knows better.
  if (run.lease !== before || run.stopping) return true;
  transition(run, afterLook(run.lease, value === null ? undefined : (parseLeaseValue(value)?.agentId ?? value)));
  return true;
}

async function stopAndRelease(run: LeaseRun): Promise<void> {
  const wasRunning = run.running;
  run.running = false;
  clearTimeout(run.timer);
  run.connection.off('up', run.onUp);
  run.connection.off('down', run.onDown);
  run.connection.off('server', run.onServer);
  if (!wasRunning) return;
  // An acquire in flight may take the lease: wait for its answer, so that it is released too.
  await run.inFlight?.catch(() => undefined);
  const held = run.lease;
  if (held.role === 'leader') {
    run.lastFailure = 'stopping';
    transition(run, { role: 'standby', leaderId: undefined, nextTryAt: Number.POSITIVE_INFINITY, previousValue: undefined });
  }
  const value = held.role === 'leader' ? held.value : held.previousValue;
  if (value === undefined) return;
  try {
    if (integer(await run.scripts.release.run([run.leaderKey], [value])) === 1)
      run.logger.info({ agentId: run.agentId }, 'released the leader lease');
  } catch (error) {
    // It expires by itself within one lease period.
    run.logger.warn({ err: errorMessage(error) }, 'could not release the leader lease; it expires by itself');
  }
}

function stop(run: LeaseRun): Promise<void> {
  run.restart = false;
  run.stopping ??= stopAndRelease(run).finally(() => {
    run.stopping = undefined;
    if (run.restart) {
      run.restart = false;
      start(run);
    }
  });
  return run.stopping;
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
  const now = options.now ?? (() => performance.now());
  const run: LeaseRun = {
    connection,
    agentId,
    timing: leaseTiming(options.leaseMs),
    logger: options.logger ?? silentLogger,
    now,
    leaderKey: connection.key(REDIS_KEYS.leader),
    fenceKey: connection.key(REDIS_KEYS.fence),
    scripts: { acquire: connection.script(ACQUIRE), renew: connection.script(RENEW), release: connection.script(RELEASE) },
    emitter: new EventEmitter<LeadershipEvents>(),
    onUp: () => {
      if (run.running && run.lease.role === 'standby') schedule(run, now());
    },
    onDown: () => {
      const server = connection.server;
      if (!run.running || run.lease.role !== 'leader' || server === undefined || server.role === 'primary') return;
      run.lastFailure = `Redis at ${server.address} is a ${server.role} now, not the primary`;
      transition(run, stepDown(run.lease, now()));
      schedule(run, now());
    },
    onServer: () => {
      // The lease may be gone with the old server: a renewal at once says (it steps down when
      // lost). Meanwhile its writes are fenced in their scripts; a lease that survived kept its
      // token's INCR too (one script, confirmed before the lease was used).
      if (run.running && run.lease.role === 'leader' && run.inFlight === undefined) void tickNow(run, 'renew');
    },
    lease: initialLeaseState(now()),
    running: false,
    inFlight: undefined,
    timer: undefined,
    stopping: undefined,
    restart: false,
    lastFailure: undefined,
  };
  const halt = () => stop(run);
  // Getters defined on the emitter itself (Object.assign would copy their values once).
  return Object.defineProperties(run.emitter, {
    agentId: { value: agentId, enumerable: true },
    timing: { value: run.timing, enumerable: true },
    isLeader: { get: () => leading(run), enumerable: true },
    fencingToken: { get: () => (run.lease.role === 'leader' && leading(run) ? run.lease.token : undefined), enumerable: true },
    leaderId: { get: () => leaderIdOf(run, run.lease), enumerable: true },
    start: { value: () => start(run) },
    look: { value: () => look(run) },
    stop: { value: halt },
    [Symbol.asyncDispose]: { value: halt },
  }) as unknown as RedisLeadership;
}
