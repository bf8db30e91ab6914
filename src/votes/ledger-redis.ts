import { randomBytes } from 'node:crypto';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { redisFailure, type RedisConnection } from '../redis/connection.js';
import { REDIS_KEYS } from '../redis/keys.js';
import { StoreError } from '../store/errors.js';
import { createKnownKeys } from './ledger-redis-known.js';
import { createWriteQueue, type WriteQueue } from './ledger-redis-queue.js';
import {
  APPLY_WRITES,
  CLAIM_PENDING,
  COMPACT,
  letterPayload,
  parseCounts,
  parseEntries,
  parseLetters,
  RECORD_PENDING,
  RELEASE_HEARTBEAT,
  TAKE_DEAD_LETTERS,
  type LedgerCounts,
} from './ledger-redis-scripts.js';
import { copyVote, expiresAtMs } from './ledger-state.js';
import type { LedgerEntry, Vote, VoteLedger } from './types.js';

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
}

/** The Redis {@link VoteLedger}: `onRecovered` is always there, and it can be disposed. */
export interface RedisVoteLedger extends VoteLedger {
  onRecovered(listener: (entries: LedgerEntry[]) => void): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * `[member, score]` pairs of a `WITHSCORES` reply: RESP3 gives pairs with numbers, RESP2 a flat
 * list of strings (`inf` for infinity).
 */
function scoredMembers(reply: readonly unknown[]): Array<[string, number]> {
  const toScore = (value: unknown) => (value === 'inf' || value === '+inf' ? Infinity : Number(value));
  if (reply.length > 0 && Array.isArray(reply[0])) return (reply as unknown[][]).map((pair) => [String(pair[0]), toScore(pair[1])]);
  const pairs: Array<[string, number]> = [];
  for (let i = 0; i + 1 < reply.length; i += 2) pairs.push([String(reply[i]), toScore(reply[i + 1])]);
  return pairs;
}

/** Vote keys of one `recordPending` whose outcome is unknown (a lost reply), looked up by the sweep. */
const MAX_UNCERTAIN = 10_000;
/** Index entries one compaction round trip looks at (keeps each script short for Redis). */
const COMPACT_BATCH = 1_000;

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
 *   not write (those hooks may then run again on the agent that takes the votes over).
 * - Every agent keeps a heartbeat `agent:<id>` (TTL `leaseMs`, renewed every `leaseMs / 3`).
 *   `open()` returns the votes pending under this agent ID (a restart with the same ID) and claims
 *   those of agents whose heartbeat expired; every `leaseMs` a sweep claims more such orphans and
 *   hands them to the `onRecovered` listeners. Claims are atomic: two sweeping agents never both
 *   take one vote. After a Redis outage an agent beats at once and claims nothing for one lease,
 *   so that agents alive through the outage are not taken for dead. `close()` deletes the heartbeat, so a successor need not wait for it to expire.
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
 * vote meanwhile), or when queued results could not be written before `close()`. Every call
 * carries the vote key as `idempotencyKey` for that. The durability is Redis's (`appendonly yes`).
 */
export function createRedisVoteLedger(options: RedisVoteLedgerOptions): RedisVoteLedger {
  const { connection, agentId, leaseMs, keepKeysForMs } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
  const description = `${connection.describe()} (prefix ${connection.prefix}, agent ${agentId})`;

  const keys = [REDIS_KEYS.pending, REDIS_KEYS.deadLetters, REDIS_KEYS.voteIndex, REDIS_KEYS.voteSeq].map((key) => connection.key(key));
  const recordPrefix = connection.key(REDIS_KEYS.vote(''));
  const agentPrefix = connection.key(REDIS_KEYS.agent(''));
  const adoptOrphans = options.adoptOrphans ?? true;
  const heartbeatKey = connection.key(REDIS_KEYS.agent(agentId));
  const releaseHeartbeat = connection.script(RELEASE_HEARTBEAT);
  const scripts = {
    recordPending: connection.script(RECORD_PENDING),
    apply: connection.script(APPLY_WRITES),
    claim: connection.script(CLAIM_PENDING),
    take: connection.script(TAKE_DEAD_LETTERS),
    compact: connection.script(COMPACT),
  };

  let phase: 'new' | 'opening' | 'open' | 'closing' | 'closed' = 'new';
  let counts: LedgerCounts = { pending: 0, deadLetters: 0, keys: 0 };
  const known = createKnownKeys(options.maxKnownKeys ?? 100_000);
  const listeners = new Set<(entries: LedgerEntry[]) => void>();
  const uncertain = new Set<string>();
  let queue: WriteQueue | undefined;
  let nonce = '';
  let heartbeatTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping = false;
  let beatFailing = false;
  // After Redis comes back, every agent's heartbeat may have expired during the outage: claim
  // nothing until the others had one lease to beat again, or live agents' votes would be taken.
  let quietUntil = 0;
  const onRedisUp = (): void => {
    quietUntil = performance.now() + leaseMs;
    void beat();
  };
  let warnings: string[] = [];
  let closing: Promise<void> | undefined;

  const forgetAt = (vote: Vote) => expiresAtMs(vote) + keepKeysForMs;

  function requireOpen(action: string): void {
    if (phase === 'open') return;
    const why = phase === 'new' || phase === 'opening' ? 'call open() first' : 'the ledger is closed';
    throw new StoreError(`cannot ${action} the vote ledger in ${description}: ${why}`, description);
  }

  async function run(script: keyof typeof scripts, args: readonly (string | number)[], doing: string): Promise<unknown> {
    try {
      return await scripts[script].run(keys, args);
    } catch (error) {
      throw redisFailure(doing, error);
    }
  }

  /** Claims orphans (and with `own`, re-reads this agent's pending votes); keeps the sizes. */
  async function claim(own: boolean, also: readonly string[] = []): Promise<LedgerEntry[]> {
    const reply = (await run('claim', [recordPrefix, agentId, adoptOrphans ? agentPrefix : '', own ? '1' : '0', ...also], 'read the pending votes')) as [unknown[], unknown];
    counts = parseCounts(reply[1]);
    const entries = parseEntries(reply[0]);
    for (const entry of entries) known.hold(entry.vote.key, forgetAt(entry.vote));
    return entries;
  }

  async function beat(): Promise<void> {
    try {
      await connection.client.sendCommand(['SET', heartbeatKey, nonce, 'PX', String(leaseMs)]);
      beatFailing = false;
    } catch (error) {
      // Once per outage, not every third of a lease.
      if (beatFailing) return;
      beatFailing = true;
      logger.warn({ agentId, err: redisFailure('renew the heartbeat', error).message }, 'vote ledger: could not renew this agent\'s heartbeat; past the lease, another agent takes over its pending votes');
    }
  }

  async function sweep(): Promise<void> {
    if (sweeping || phase !== 'open' || listeners.size === 0 || !connection.isUp || performance.now() < quietUntil) return;
    sweeping = true;
    try {
      const also = [...uncertain];
      const entries = await claim(false, also);
      for (const key of also) uncertain.delete(key);
      if (entries.length === 0 || phase !== 'open') return;
      for (const listener of listeners) listener(entries.map((entry) => ({ ...entry, vote: copyVote(entry.vote), done: [...entry.done], deadLettered: [...(entry.deadLettered ?? [])] })));
    } catch (error) {
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'vote ledger: could not look for votes left by stopped agents; trying again');
    } finally {
      sweeping = false;
    }
  }

  async function loadKnownKeys(): Promise<void> {
    // Newest first (pending and lettered, then by forget-at), so the cap drops the oldest.
    for (let offset = 0; offset < known.capacity; offset += COMPACT_BATCH) {
      const reply = (await connection.client.sendCommand(['ZREVRANGEBYSCORE', keys[2] as string, '+inf', '-inf', 'WITHSCORES', 'LIMIT', String(offset), String(COMPACT_BATCH)])) as unknown[];
      const pairs = scoredMembers(reply);
      for (const [key, score] of pairs) {
        if (score === Infinity) known.hold(key, Infinity);
        else known.remember(key, score);
      }
      if (pairs.length < COMPACT_BATCH) return;
    }
  }

  function write(action: string, what: string, args: string[]): Promise<void> {
    try {
      requireOpen(action);
    } catch (error) {
      return Promise.reject(error);
    }
    return (queue as WriteQueue).push({ args, what });
  }

  function stopTimers(): void {
    connection.off('up', onRedisUp);
    clearInterval(heartbeatTimer);
    clearInterval(sweepTimer);
    heartbeatTimer = undefined;
    sweepTimer = undefined;
  }

  const ledger: RedisVoteLedger = {
    // The sweep claims this agent's own votes whose recordPending answer was lost (`uncertain`).
    recoversLostRecords: true,
    async open() {
      if (phase === 'open') return claim(true);
      if (phase === 'opening' || phase === 'closing') throw new StoreError(`cannot open the vote ledger in ${description} while it is ${phase}`, description);
      phase = 'opening';
      warnings = [];
      nonce = randomBytes(8).toString('hex');
      try {
        const previous = await connection.client.sendCommand(['SET', heartbeatKey, nonce, 'PX', String(leaseMs), 'GET']).catch((error: unknown) => {
          throw redisFailure('write this agent\'s heartbeat', error);
        });
        if (previous !== null && previous !== undefined) {
          warnings.push(`the heartbeat of agent ID "${agentId}" was still alive: this agent restarted within ${leaseMs} ms of a crash, or another running agent uses the same state.redis.agentId (give each agent its own)`);
        }
        const entries = await claim(true);
        known.clear();
        await loadKnownKeys().catch((error: unknown) => {
          throw redisFailure('read the vote keys', error);
        });
        for (const entry of entries) known.hold(entry.vote.key, forgetAt(entry.vote));
        queue = createWriteQueue({ connection, logger, apply: async (args) => void (counts = parseCounts(await scripts.apply.run(keys, [recordPrefix, now(), keepKeysForMs, ...args]))) });
        heartbeatTimer = setInterval(() => void beat(), Math.max(10, Math.floor(leaseMs / 3)));
        heartbeatTimer.unref();
        sweepTimer = setInterval(() => void sweep(), leaseMs);
        sweepTimer.unref();
        connection.on('up', onRedisUp);
        phase = 'open';
        return entries;
      } catch (error) {
        phase = 'new';
        stopTimers();
        throw error;
      }
    },

    has: (key) => known.has(key),

    async recordPending(votes) {
      requireOpen('record votes in');
      if (votes.length === 0) return [];
      const args: (string | number)[] = [recordPrefix, agentId];
      for (const vote of votes) args.push(vote.key, JSON.stringify(vote), forgetAt(vote));
      let reply: [unknown[], unknown];
      try {
        reply = (await scripts.recordPending.run(keys, args)) as [unknown[], unknown];
      } catch (error) {
        // The script may have run and its reply been lost: if so these votes are pending under this
        // agent, and nothing would run them until it restarts. The next sweep looks them up.
        if (uncertain.size < MAX_UNCERTAIN) for (const vote of votes) uncertain.add(vote.key);
        throw redisFailure(`record ${votes.length} vote(s) as pending`, error);
      }
      counts = parseCounts(reply[1]);
      const fresh = new Set(reply[0].map(String));
      const accepted: Vote[] = [];
      for (const vote of votes) {
        if (fresh.delete(vote.key)) {
          known.hold(vote.key, forgetAt(vote));
          accepted.push(vote);
        } else known.remember(vote.key, forgetAt(vote));
      }
      return accepted;
    },

    recordHookDone: (key, hook) => write('record a hook run in', `record that hook "${hook}" ran for vote ${key}`, ['h', key, hook, '']),

    recordComplete(key) {
      const promise = write('record a finished vote in', `record vote ${key} as finished`, ['c', key, '', '']);
      known.release(key);
      return promise;
    },

    recordDeadLetter(letter) {
      const promise = write('record a dead letter in', `record the dead letter of hook "${letter.hook}" for vote ${letter.key}`, ['d', letter.key, letter.hook, letterPayload(letter, forgetAt(letter.vote))]);
      known.hold(letter.key, forgetAt(letter.vote), true);
      return promise;
    },

    async takeDeadLetters(filter) {
      requireOpen('take dead letters from');
      const args = [recordPrefix, agentId, filter?.hook ?? '', filter?.keys === undefined ? '0' : '1', ...(filter?.keys ?? [])];
      const reply = (await run('take', args, 'take dead letters')) as [unknown[], unknown];
      counts = parseCounts(reply[1]);
      const letters = parseLetters(reply[0]);
      for (const letter of letters) known.hold(letter.key, forgetAt(letter.vote));
      return letters;
    },

    async deadLetters() {
      let values: unknown;
      try {
        values = await connection.client.sendCommand(['HVALS', keys[1] as string]);
      } catch (error) {
        throw redisFailure('read the dead letters', error);
      }
      return parseLetters(values);
    },

    async compact(time) {
      requireOpen('compact');
      for (let first = true; ; first = false) {
        const reply = (await run('compact', [recordPrefix, Math.floor(time), COMPACT_BATCH, first ? '1' : '0'], 'compact the vote ledger')) as [number, unknown];
        counts = parseCounts(reply[1]);
        if (Number(reply[0]) < COMPACT_BATCH) break;
      }
      known.forget(time);
    },

    stats: () => ({ ...counts, bytes: 0 }),

    onRecovered(listener) {
      listeners.add(listener);
    },

    close() {
      if (phase !== 'open') return closing ?? Promise.resolve();
      phase = 'closing';
      stopTimers();
      closing = (async () => {
        const left = (await queue?.drain(closeTimeoutMs)) ?? [];
        queue = undefined;
        // The votes still pending here become orphans now, not after the heartbeat's TTL.
        if (connection.isUp) await releaseHeartbeat.run([heartbeatKey], [nonce]).catch(() => undefined);
        phase = 'closed';
        if (left.length > 0) {
          const shown = left.slice(0, 5).map((write) => write.what).join('; ');
          throw redisFailure(
            'finish closing the vote ledger',
            new Error(`${left.length} change(s) could not be written before closing (${shown}${left.length > 5 ? '; ...' : ''}): the agent that takes these votes over may run those hooks again`),
          );
        }
      })().finally(() => (closing = undefined));
      return closing;
    },

    [Symbol.asyncDispose]: () => ledger.close(),
    describe: () => description,
    warnings: () => [...warnings],
  };
  return ledger;
}
