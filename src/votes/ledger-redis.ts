import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { redisFailure, type RedisConnection } from '../redis/connection.js';
import { REDIS_KEYS } from '../redis/keys.js';
import { withDeadline } from '../redis/command-facade.js';
import { timerDelay } from '../contract/timer-delay.js';
import { createKnownKeys } from './ledger-redis-known.js';
import { beat, close, open } from './ledger-redis-life.js';
import type { WriteQueue } from './ledger-redis-queue.js';
import {
  APPLY_WRITES,
  CLAIM_PENDING,
  COMPACT,
  HOLDS,
  letterPayload,
  parseCounts,
  parseLetters,
  READ_HASH,
  RECORD_PENDING,
  RELEASE_HEARTBEAT,
  TAKE_DEAD_LETTERS,
} from './ledger-redis-scripts.js';
import { COMPACT_BATCH, forgetAt, MAX_UNCERTAIN, recordKey, requireOpen, run, type RedisVoteLedgerState } from './ledger-redis-state.js';
import type { DeadLetterFilter } from './ledger-state.js';
import type { DeadLetter, LedgerEntry, Vote, VoteLedger } from './types.js';

/** Options of {@link createRedisVoteLedger}. */
export interface RedisVoteLedgerOptions {
  /** The agent's Redis connection (started by the caller, who also closes it). */
  connection: RedisConnection;
  /** This agent's ID: pending votes are filed under it, and taken over when its heartbeat expires. Unique per live agent. */
  agentId: string;
  /** The lease period (`state.redis.lease`): heartbeat TTL (renewed every third of it), and how often orphans are looked for. */
  leaseMs: number;
  /** How long after a vote's `expiresAt` its key is kept (`votes.keepKeysFor`). */
  keepKeysForMs: number;
  /** Epoch ms: when finished records may be forgotten (their TTL). Default `Date.now`. */
  now?: () => number;
  /** How long `close()` keeps trying to write queued hook results while Redis is away. Default 5 000 ms. */
  closeTimeoutMs?: number;
  /** Keys `has()` remembers at most (the oldest are dropped first). Default 100 000. */
  maxKnownKeys?: number;
  /** Where queue and sweep trouble is logged. Default: silent. */
  logger?: AgentLogger;
  /**
   * Take over the pending votes of agents whose heartbeat expired. Default true; false for a
   * short-lived user such as `votes retry`, which would claim them only to leave them again.
   */
  adoptOrphans?: boolean;
  /**
   * Put before every key of this ledger (after `state.redis.prefix`): a second ledger beside the
   * rewards' (the reminders', `reminders:`) with pending votes, dead letters, heartbeats and sweeps
   * of its own, so neither claims the other's entries. Default: none (the rewards' keys).
   */
  namespace?: string;
}

/** The Redis {@link VoteLedger}: `onRecovered` and `holds` are always there, and it can be disposed. */
export interface RedisVoteLedger extends VoteLedger {
  onRecovered(listener: (entries: LedgerEntry[]) => void): void;
  /** Whether this agent still holds pending vote `key` (see `VoteLedger.holds`); asked before a hook retry. */
  holds(key: string): Promise<boolean>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The vote ledger in Redis: one dedupe point for every agent of a bot, so a vote seen by two
 * agents, or on both roads, fires its hooks once. See `ledger-redis-scripts.ts` for the keys.
 *
 * - `recordPending` is one Lua script per batch: a record that does not exist is created and filed
 *   pending under this agent; of two agents recording one vote at once exactly one gets it. It is
 *   never queued: while Redis is down it rejects with `RedisUnavailableError` (the webhook
 *   receiver answers 503, the service retries; the poller retries its page).
 * - Hook done, complete and dead letter writes go through an ordered in-memory queue: a write
 *   that fails for want of Redis is retried when the connection is back, and resolves only then.
 *   `close()` tries to write what is queued for `closeTimeoutMs` and rejects naming what it could
 *   not write (those hooks may then run again on the agent that takes the votes over). While a
 *   vote's completion is queued, this agent's sweep and `open()` leave the vote out: Redis still
 *   shows it pending here, but its hooks ran.
 * - Every agent keeps a heartbeat `agent:<id>` (TTL `leaseMs`, renewed every `leaseMs / 3`).
 *   `open()` returns the votes pending under this agent ID (a restart with the same ID) and claims
 *   those of agents whose heartbeat expired; every `leaseMs` a sweep claims more such orphans and
 *   hands them to the `onRecovered` listeners. Claims are atomic: two sweeping agents never both
 *   take one vote. After a Redis outage an agent beats at once and claims nothing for one lease,
 *   so that agents alive through the outage are not taken for dead. `close()` deletes the
 *   heartbeat, so a successor need not wait for it to expire.
 * - `has()` is synchronous, so it answers from a local memory of keys (those known at `open()`,
 *   then those this agent recorded or saw), at most `maxKnownKeys`: a miss only means that
 *   `recordPending` decides, which it always does.
 * - `stats()` are the sizes Redis gave with the last operation (all agents' pending votes and dead
 *   letters, every key in the ledger): approximate between operations; `bytes` is 0 (Redis's).
 * - Records of finished votes expire by themselves (`expiresAt + keepKeysForMs`, by `now`);
 *   `compact(now)` forgets those due by then at once and drops pending entries whose record is gone.
 *
 * **Limits.** The at-least-once guarantee holds across agents; a hook may run twice for one vote
 * when its agent lost Redis for longer than `leaseMs` while running it (another agent claimed the
 * vote meanwhile; the first agent's retries then ask `holds()` and are let go), or when queued
 * results could not be written before `close()`. Every call
 * carries the vote key as `idempotencyKey` for that. The durability is Redis's (`appendonly yes`).
 */
export function createRedisVoteLedger(options: RedisVoteLedgerOptions): RedisVoteLedger {
  const r = redisLedgerState(options);
  const ledger: RedisVoteLedger = {
    // The sweep claims this agent's own votes whose recordPending answer was lost (`uncertain`).
    recoversLostRecords: true,
    open: () => open(r),
    has: (key) => r.known.has(key),
    recordPending: (votes) => recordPending(r, votes),
    recordHookDone: (key, hook) => write(r, 'record a hook run in', `record that hook "${hook}" ran for vote ${key}`, ['h', key, hook, '']),
    recordComplete(key) {
      // Completed by this agent's hooks: a frozen agent's retry (`holds`) then knows another finished it.
      const promise = write(r, 'record a finished vote in', `record vote ${key} as finished`, ['c', key, r.agentId, '']);
      r.known.release(key);
      return promise;
    },
    recordDeadLetter(letter) {
      const what = `record the dead letter of hook "${letter.hook}" for vote ${letter.key}`;
      const payload = letterPayload(letter, forgetAt(r, letter.vote));
      const promise = write(r, 'record a dead letter in', what, ['d', letter.key, letter.hook, payload]);
      r.known.hold(letter.key, forgetAt(r, letter.vote), true);
      return promise;
    },
    holds: (key) => holds(r, key),
    takeDeadLetters: (filter) => takeDeadLetters(r, filter),
    deadLetters: () => deadLetters(r),
    compact: (time) => compact(r, time),
    stats: () => ({ ...r.counts, bytes: 0 }),
    onRecovered(listener) {
      r.listeners.add(listener);
    },
    close: () => close(r),
    [Symbol.asyncDispose]: () => ledger.close(),
    describe: () => r.description,
    warnings: () => [...r.warnings],
  };
  return ledger;
}

function redisLedgerState(options: RedisVoteLedgerOptions): RedisVoteLedgerState {
  const { connection, agentId, leaseMs } = options;
  const ns = options.namespace ?? '';
  const key = (name: string) => connection.key(ns + name);
  const r: RedisVoteLedgerState = {
    connection,
    agentId,
    leaseMs,
    keepKeysForMs: options.keepKeysForMs,
    now: options.now ?? Date.now,
    logger: options.logger ?? silentLogger,
    closeTimeoutMs: options.closeTimeoutMs ?? 5_000,
    description: `${connection.describe()} (prefix ${connection.prefix}${ns}, agent ${agentId})`,
    keys: [REDIS_KEYS.pending, REDIS_KEYS.deadLetters, REDIS_KEYS.voteIndex, REDIS_KEYS.voteSeq].map(key),
    recordPrefix: key(REDIS_KEYS.vote('')),
    agentPrefix: key(REDIS_KEYS.agent('')),
    adoptOrphans: options.adoptOrphans ?? true,
    heartbeatKey: key(REDIS_KEYS.agent(agentId)),
    releaseHeartbeat: connection.script(RELEASE_HEARTBEAT),
    holds: connection.script(HOLDS),
    readHash: connection.script(READ_HASH),
    scripts: {
      recordPending: connection.script(RECORD_PENDING),
      apply: connection.script(APPLY_WRITES),
      claim: connection.script(CLAIM_PENDING),
      take: connection.script(TAKE_DEAD_LETTERS),
      compact: connection.script(COMPACT),
    },
    phase: 'new',
    counts: { pending: 0, deadLetters: 0, keys: 0 },
    known: createKnownKeys(options.maxKnownKeys ?? 100_000),
    listeners: new Set(),
    uncertain: new Set(),
    queue: undefined,
    nonce: '',
    heartbeatTimer: undefined,
    sweepTimer: undefined,
    sweeping: false,
    beatFailing: false,
    quietUntil: 0,
    onRedisUp: () => {
      r.quietUntil = performance.now() + leaseMs;
      void beat(r);
    },
    warnings: [],
    closing: undefined,
  };
  return r;
}

function write(r: RedisVoteLedgerState, action: string, what: string, args: string[]): Promise<void> {
  try {
    requireOpen(r, action);
  } catch (error) {
    return Promise.reject(error);
  }
  // `c` finishes the vote: until Redis has it, the sweep and open() leave the vote alone (see claim()).
  return (r.queue as WriteQueue).push({ args, what, ...(args[0] === 'c' ? { finishes: args[1]! } : {}) });
}

async function recordPending(r: RedisVoteLedgerState, votes: readonly Vote[]): Promise<Vote[]> {
  requireOpen(r, 'record votes in');
  if (votes.length === 0) return [];
  // What this agent knew before Redis answers: a key it knew that Redis calls new was lost there.
  const knew = new Map(votes.filter((vote) => r.known.has(vote.key)).map((vote) => [vote.key, r.known.isHeld(vote.key)]));
  const args: (string | number)[] = [r.agentId];
  for (const vote of votes) args.push(vote.key, JSON.stringify(vote), forgetAt(r, vote));
  const keys = [...r.keys, ...votes.map((vote) => recordKey(r, vote.key))];
  let reply: [unknown[], unknown];
  try {
    const on = r.connection.server;
    reply = (await r.scripts.recordPending.run(keys, args)) as [unknown[], unknown];
    // Not taken (a webhook answered 2xx, the cursor moved past it) until the replicas have it:
    // a failover could take it back. A duplicate is confirmed too (the other agent's record).
    await r.connection.confirm(`the record of ${votes.length} vote(s)`, { on });
  } catch (error) {
    // The script may have run and its reply been lost, or its write not be confirmed: if so these
    // votes are pending under this agent, and nothing would run them until it restarts. The next
    // sweep looks them up.
    if (r.uncertain.size < MAX_UNCERTAIN) for (const vote of votes) r.uncertain.add(vote.key);
    throw redisFailure(`record ${votes.length} vote(s) as pending`, error);
  }
  r.counts = parseCounts(reply[1]);
  const fresh = new Set(reply[0].map(String));
  const accepted: Vote[] = [];
  for (const vote of votes) {
    if (fresh.has(vote.key) && knew.has(vote.key)) {
      fresh.delete(vote.key);
      forgottenByRedis(r, vote, knew.get(vote.key) === true);
    } else if (fresh.delete(vote.key)) {
      // Recorded by this call: an earlier call's uncertain outcome for it no longer matters (the
      // sweep would run it a second time, beside the job this call starts).
      r.uncertain.delete(vote.key);
      r.known.hold(vote.key, forgetAt(r, vote));
      accepted.push(vote);
    } else r.known.remember(vote.key, forgetAt(r, vote));
  }
  return accepted;
}

/**
 * A vote this agent knew (recorded, seen, or running here) that Redis took as new: Redis lost its
 * record (a failover that took back writes, a restart without its append-only file). The agent's
 * memory is the second duplicate check: the vote is not run again. Running here, its job finishes
 * it; known otherwise, its new record is marked finished at once, so no sweep runs it either.
 */
function forgottenByRedis(r: RedisVoteLedgerState, vote: Vote, runningHere: boolean): void {
  r.logger.warn(
    { vote: vote.key, runningHere },
    'vote ledger: Redis had lost the record of a vote this agent knew (a failover?): taken as a duplicate, not run again',
  );
  if (runningHere) return;
  r.known.remember(vote.key, forgetAt(r, vote));
  write(r, 'record a finished vote in', `record vote ${vote.key} as finished`, ['c', vote.key, '', '']).catch(() => undefined);
}

/**
 * See {@link VoteLedger.holds}. Asked by a hook retry, typically of an agent that was frozen (a
 * paused VM, a stopped process) past its lease while its first call was in flight: the sweep of
 * another agent took the vote over meanwhile and ran it. When Redis cannot answer, or the ledger is
 * not open, the answer is true: the retry goes ahead, as it always did (a repeat, never a loss).
 */
async function holds(r: RedisVoteLedgerState, key: string): Promise<boolean> {
  if (r.phase !== 'open') return true;
  let reply: unknown;
  try {
    const asked = r.holds.run([r.keys[0]!, recordKey(r, key), r.heartbeatKey], [key, r.agentId, r.nonce, r.leaseMs]);
    // The client's command timeout ends once a command is written: a server that takes it and never
    // answers (a frozen host, a silent network) would hold the retry forever. A lease is long enough.
    reply = await withDeadline(asked, timerDelay(r.leaseMs));
  } catch (error) {
    const err = redisFailure('ask whether this agent still holds a vote', error).message;
    // Debug: the retry that follows logs its own failure if Redis is away.
    r.logger.debug({ vote: key, err }, 'vote ledger: could not ask Redis who holds a vote; its hook is retried here');
    return true;
  }
  if (Number(reply) === 1) return true;
  // Finished elsewhere: known here as a finished vote, no longer one this agent runs.
  r.known.release(key);
  return false;
}

async function takeDeadLetters(r: RedisVoteLedgerState, filter: DeadLetterFilter | undefined): Promise<DeadLetter[]> {
  requireOpen(r, 'take dead letters from');
  const wanted = filter?.keys === undefined ? undefined : new Set(filter.keys);
  let fields: unknown;
  try {
    fields = await r.connection.client.sendCommand(['HKEYS', r.keys[1] as string]);
  } catch (error) {
    throw redisFailure('take dead letters', error);
  }
  // A field is `<vote key>|<hook>`; a vote key may hold `|`, a hook name does not.
  const chosen = (Array.isArray(fields) ? fields.map(String) : [])
    .map((field) => {
      const cut = field.lastIndexOf('|');
      return { field, key: field.slice(0, cut), hook: field.slice(cut + 1) };
    })
    .filter(({ key, hook }) => (filter?.hook === undefined || filter.hook === hook) && (wanted === undefined || wanted.has(key)));
  const args = [r.agentId, ...chosen.flatMap(({ field, key, hook }) => [field, key, hook])];
  const keys = [...r.keys, ...chosen.map(({ key }) => recordKey(r, key))];
  let reply: [unknown[], unknown];
  try {
    reply = (await r.scripts.take.run(keys, args)) as [unknown[], unknown];
  } catch (error) {
    throw redisFailure('take dead letters', error);
  }
  r.counts = parseCounts(reply[1]);
  const letters = parseLetters(reply[0]);
  for (const letter of letters) r.known.hold(letter.key, forgetAt(r, letter.vote));
  return letters;
}

async function deadLetters(r: RedisVoteLedgerState): Promise<DeadLetter[]> {
  let values: unknown;
  try {
    values = await r.connection.client.sendCommand(['HVALS', r.keys[1] as string]);
  } catch (error) {
    throw redisFailure('read the dead letters', error);
  }
  return parseLetters(values);
}

async function compact(r: RedisVoteLedgerState, time: number): Promise<void> {
  requireOpen(r, 'compact');
  const now = Math.floor(time);
  const compactWith = async (due: readonly string[], pending: readonly string[]) => {
    const keys = [...r.keys, ...[...due, ...pending].map((key) => recordKey(r, key))];
    r.counts = parseCounts(await run(r, 'compact', keys, [now, due.length, ...due, ...pending], 'compact the vote ledger'));
  };
  for (;;) {
    const range = ['ZRANGEBYSCORE', r.keys[2]!, '-inf', `(${now}`, 'LIMIT', '0', String(COMPACT_BATCH)];
    const due = await readList(r, range, 'compact the vote ledger');
    await compactWith(due, []);
    if (due.length < COMPACT_BATCH) break;
  }
  // Pending entries whose record is gone (a flushed or hand-edited Redis): nothing to run.
  const pending = await readList(r, ['HKEYS', r.keys[0]!], 'compact the vote ledger');
  for (let first = 0; first < pending.length; first += COMPACT_BATCH) await compactWith([], pending.slice(first, first + COMPACT_BATCH));
  r.known.forget(time);
}


/** A command's reply as a list of strings. */
async function readList(r: RedisVoteLedgerState, command: string[], doing: string): Promise<string[]> {
  try {
    const reply = await r.connection.client.sendCommand(command);
    return Array.isArray(reply) ? reply.map(String) : [];
  } catch (error) {
    throw redisFailure(doing, error);
  }
}
