import type { StoredReport } from './push-reports.js';
import type { RedisShardReport } from './redis-shards-reports.js';

/*
 * The pure core of sharing pushed counts through Redis (several agents on one Redis, each with a
 * push endpoint): which reports an agent writes, with what expiry, and which report of a shard
 * wins when agents hold different ages of it. No Redis and no clock here (time is passed in); the
 * write script in push-share.ts applies {@link replaces} inside Redis, atomically per round.
 */

/** One shard report to write to `shards:<id>`, with the time it has left to live. */
export interface ShareWrite {
  /** The stored form; `reportedAt` is when the bot's push reached this agent, not when it is written. */
  report: RedisShardReport;
  /** The key's TTL: `receivedAt + staleAfter - now`, so re-writing a report never makes it live longer. */
  ttlMs: number;
}

/** What {@link planShare} needs besides the reports. */
export interface ShareOptions {
  /** Epoch ms now (this agent's clock, the one that stamped `receivedAt`). */
  now: number;
  /** `stats.push.staleAfter`: a push is counted this long after it arrived, not longer. */
  staleAfterMs: number;
  /** This agent's ID, stored as the report's `process` for operators reading Redis. */
  process: string;
}

/**
 * The writes that share `held` (the newest push per shard this agent received): each report keeps
 * the time its push arrived as `reportedAt` and expires `staleAfter` after it, however late it is
 * written (after a Redis outage, or in a periodic re-write); a report already past that is left
 * out. In shard ID order.
 */
export function planShare(held: Iterable<StoredReport>, options: ShareOptions): ShareWrite[] {
  const writes: ShareWrite[] = [];
  for (const { receivedAt, ...report } of held) {
    const ttlMs = receivedAt + options.staleAfterMs - options.now;
    if (ttlMs <= 0) continue;
    writes.push({ report: { ...report, reportedAt: receivedAt, process: options.process }, ttlMs: Math.ceil(ttlMs) });
  }
  return writes.sort((a, b) => a.report.shard_id - b.report.shard_id);
}

/**
 * The newest-wins rule: whether `incoming` replaces what Redis holds for its shard. Only a push
 * that arrived later (at whichever agent) replaces one: an agent re-writing an older push never
 * overwrites a newer one another agent received, and on a tie the stored one stays (the same push
 * written twice changes nothing). Nothing stored (never written, or expired): it is written.
 */
export function replaces(
  stored: Pick<RedisShardReport, 'reportedAt'> | undefined,
  incoming: Pick<RedisShardReport, 'reportedAt'>,
): boolean {
  return stored === undefined || incoming.reportedAt > stored.reportedAt;
}

/**
 * Records `incoming` in `held`, an agent's own copy: the newest report per shard. Pushes reach one
 * agent in order, so of two with the same receive time the later one is kept (unlike in Redis,
 * where a tie between two agents keeps the first written). Returns the reports it took.
 */
export function recordNewest(held: Map<number, StoredReport>, incoming: readonly StoredReport[]): StoredReport[] {
  const taken: StoredReport[] = [];
  for (const report of incoming) {
    const current = held.get(report.shard_id);
    if (current !== undefined && current.receivedAt > report.receivedAt) continue;
    held.set(report.shard_id, report);
    taken.push(report);
  }
  return taken;
}

/** Drops the reports of `held` that are `staleAfterMs` old at `now`: nothing can share them any more. */
export function dropExpired(held: Map<number, StoredReport>, now: number, staleAfterMs: number): void {
  for (const [id, report] of held) if (report.receivedAt + staleAfterMs <= now) held.delete(id);
}
