import { randomBytes } from 'node:crypto';
import { redisFailure } from '../redis/connection.js';
import type { RedisServer } from '../redis/server.js';
import { StoreError } from '../store/errors.js';
import { createWriteQueue } from './ledger-redis-queue.js';
import { parseCounts } from './ledger-redis-scripts.js';
import { claim, COMPACT_BATCH, forgetAt, MAX_UNCERTAIN, recordKey, type RedisVoteLedgerState } from './ledger-redis-state.js';
import { copyVote } from './ledger-state.js';
import type { LedgerEntry } from './types.js';
import { timerDelay } from '../contract/timer-delay.js';
import { errorMessage } from '../errors.js';

/**
 * The life of a Redis vote ledger: open (heartbeat, the votes pending under this agent, the known
 * keys), the heartbeat and the sweep for orphans while open, and close (the queued writes, then
 * the heartbeat released).
 */

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

export async function beat(r: RedisVoteLedgerState): Promise<void> {
  try {
    await r.connection.client.sendCommand(['SET', r.heartbeatKey, r.nonce, 'PX', String(r.leaseMs)]);
    r.beatFailing = false;
  } catch (error) {
    // Once per outage, not every third of a lease.
    if (r.beatFailing) return;
    r.beatFailing = true;
    const err = redisFailure('renew the heartbeat', error).message;
    const what = 'vote ledger: could not renew this agent\'s heartbeat; past the lease, another agent takes over its pending votes';
    r.logger.warn({ agentId: r.agentId, err }, what);
  }
}

async function sweep(r: RedisVoteLedgerState): Promise<void> {
  if (r.sweeping || r.phase !== 'open' || r.listeners.size === 0 || !r.connection.isUp || performance.now() < r.quietUntil) return;
  r.sweeping = true;
  try {
    const also = [...r.uncertain];
    const on = r.connection.server;
    const entries = await claim(r, false, also);
    for (const key of also) r.uncertain.delete(key);
    if (entries.length === 0 || r.phase !== 'open') return;
    await confirmClaim(r, entries, on);
    const copy = (entry: LedgerEntry): LedgerEntry => ({
      ...entry,
      vote: copyVote(entry.vote),
      done: [...entry.done],
      deadLettered: [...(entry.deadLettered ?? [])],
    });
    for (const listener of r.listeners) listener(entries.map(copy));
  } catch (error) {
    const err = errorMessage(error);
    r.logger.warn({ err }, 'vote ledger: could not look for votes left by stopped agents; trying again');
  } finally {
    r.sweeping = false;
  }
}

/**
 * The claim of `entries` is this agent's to act on only once the replicas have it: a failover
 * that took it back would leave the votes pending under their old owner, which runs them again
 * when it comes back (an agent frozen past its lease, thawed after the failover). Unconfirmed,
 * they are looked up again by the next sweep (pending here, or taken back by the failover).
 */
async function confirmClaim(r: RedisVoteLedgerState, entries: readonly LedgerEntry[], on: RedisServer | undefined): Promise<void> {
  try {
    await r.connection.confirm(`the claim of ${entries.length} vote(s) left by stopped agents`, { on });
  } catch (error) {
    for (const entry of entries) if (r.uncertain.size < MAX_UNCERTAIN) r.uncertain.add(entry.vote.key);
    throw error;
  }
}

/**
 * This agent's pending votes, and the orphans it takes over: those only once the replicas have
 * the claim (as the sweep's). Unconfirmed, they are left out (a warning says so) for the first
 * sweep to look up again; the start goes on.
 */
async function claimAtOpen(r: RedisVoteLedgerState): Promise<LedgerEntry[]> {
  const adopted = new Set<string>();
  const on = r.connection.server;
  const entries = await claim(r, true, [], adopted);
  const taken = entries.filter((entry) => adopted.has(entry.vote.key));
  if (taken.length === 0) return entries;
  try {
    await confirmClaim(r, taken, on);
    return entries;
  } catch (error) {
    const err = errorMessage(error);
    r.warnings.push(`${taken.length} vote(s) left by stopped agents are run once the replicas confirm this agent's claim (${err})`);
    return entries.filter((entry) => !adopted.has(entry.vote.key));
  }
}

async function loadKnownKeys(r: RedisVoteLedgerState): Promise<void> {
  // Newest first (pending and lettered, then by forget-at), so the cap drops the oldest.
  for (let offset = 0; offset < r.known.capacity; offset += COMPACT_BATCH) {
    const range = ['ZREVRANGEBYSCORE', r.keys[2] as string, '+inf', '-inf', 'WITHSCORES', 'LIMIT', String(offset), String(COMPACT_BATCH)];
    const reply = (await r.connection.client.sendCommand(range)) as unknown[];
    const pairs = scoredMembers(reply);
    for (const [key, score] of pairs) {
      if (score === Infinity) r.known.hold(key, Infinity);
      else r.known.remember(key, score);
    }
    if (pairs.length < COMPACT_BATCH) return;
  }
}

function stopTimers(r: RedisVoteLedgerState): void {
  r.connection.off('up', r.onRedisUp);
  clearInterval(r.heartbeatTimer);
  clearInterval(r.sweepTimer);
  r.heartbeatTimer = undefined;
  r.sweepTimer = undefined;
}

export async function open(r: RedisVoteLedgerState): Promise<LedgerEntry[]> {
  if (r.phase === 'open') return claimAtOpen(r);
  if (r.phase === 'opening' || r.phase === 'closing') {
    throw new StoreError(`cannot open the vote ledger in ${r.description} while it is ${r.phase}`, r.description);
  }
  r.phase = 'opening';
  r.warnings = [];
  r.nonce = randomBytes(8).toString('hex');
  const { connection, leaseMs } = r;
  try {
    const heartbeat = ['SET', r.heartbeatKey, r.nonce, 'PX', String(leaseMs), 'GET'];
    const previous = await connection.client.sendCommand(heartbeat).catch((error: unknown) => {
      throw redisFailure('write this agent\'s heartbeat', error);
    });
    if (previous !== null && previous !== undefined) {
      r.warnings.push(
        `the heartbeat of agent ID "${r.agentId}" was still alive: this agent restarted within ${leaseMs} ms of a crash, ` +
          'or another running agent uses the same state.redis.agentId (give each agent its own)',
      );
    }
    const entries = await claimAtOpen(r);
    r.known.clear();
    await loadKnownKeys(r).catch((error: unknown) => {
      throw redisFailure('read the vote keys', error);
    });
    for (const entry of entries) r.known.hold(entry.vote.key, forgetAt(r, entry.vote));
    const apply = async (args: readonly (string | number)[]) => {
      // Each write is `op, key, hook, payload`: its record is declared after the ledger's keys.
      const records = args.filter((_, i) => i % 4 === 1).map((key) => recordKey(r, String(key)));
      const on = r.connection.server;
      r.counts = parseCounts(await r.scripts.apply.run([...r.keys, ...records], [r.now(), r.keepKeysForMs, ...args]));
      // A hook's completion is final only once the replicas have it; unconfirmed, it stays queued.
      await r.connection.confirm(`${args.length / 4} vote ledger change(s)`, { on });
    };
    r.queue = createWriteQueue({ connection, logger: r.logger, apply });
    r.heartbeatTimer = setInterval(() => void beat(r), timerDelay(Math.max(10, Math.floor(leaseMs / 3))));
    r.heartbeatTimer.unref();
    r.sweepTimer = setInterval(() => void sweep(r), leaseMs);
    r.sweepTimer.unref();
    connection.on('up', r.onRedisUp);
    r.phase = 'open';
    return entries;
  } catch (error) {
    r.phase = 'new';
    stopTimers(r);
    throw error;
  }
}

export function close(r: RedisVoteLedgerState): Promise<void> {
  if (r.phase !== 'open') return r.closing ?? Promise.resolve();
  r.phase = 'closing';
  stopTimers(r);
  r.closing = (async () => {
    const left = (await r.queue?.drain(r.closeTimeoutMs)) ?? [];
    r.queue = undefined;
    // The votes still pending here become orphans now, not after the heartbeat's TTL.
    if (r.connection.isUp) await r.releaseHeartbeat.run([r.heartbeatKey], [r.nonce]).catch(() => undefined);
    r.phase = 'closed';
    if (left.length > 0) {
      const shown = left.slice(0, 5).map((queued) => queued.what).join('; ');
      throw redisFailure(
        'finish closing the vote ledger',
        new Error(
          `${left.length} change(s) could not be written before closing (${shown}${left.length > 5 ? '; ...' : ''}): ` +
            'the agent that takes these votes over may run those hooks again',
        ),
      );
    }
  })().finally(() => (r.closing = undefined));
  return r.closing;
}
