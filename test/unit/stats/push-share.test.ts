import { describe, expect, it } from 'vitest';
import type { StoredReport } from '../../../src/stats/sources/push-reports.js';
import { dropExpired, planShare, recordNewest, replaces, type ShareWrite } from '../../../src/stats/sources/push-share-plan.js';
import type { RedisShardReport } from '../../../src/stats/sources/redis-shards-reports.js';

const STALE = 600_000;
const held = (shard_id: number, server_count: number, receivedAt: number, shard_count = 4): StoredReport => ({ shard_id, shard_count, server_count, receivedAt });

/** Redis as the write script treats it: a key per shard, each write applied by the newest-wins rule. */
function applyToRedis(redis: Map<number, RedisShardReport>, writes: readonly ShareWrite[]): void {
  for (const { report } of writes) if (replaces(redis.get(report.shard_id), report)) redis.set(report.shard_id, report);
}

describe('sharing pushed counts through Redis: the pure core', () => {
  it('writes each held report with its push\'s receive time, expiring staleAfter after the push, however late', () => {
    const writes = planShare([held(2, 30, 1_000), held(0, 10, 5_000)], { now: 100_000, staleAfterMs: STALE, process: 'agent-b' });
    expect(writes).toEqual([
      { report: { shard_id: 0, shard_count: 4, server_count: 10, reportedAt: 5_000, process: 'agent-b' }, ttlMs: 505_000 },
      { report: { shard_id: 2, shard_count: 4, server_count: 30, reportedAt: 1_000, process: 'agent-b' }, ttlMs: 501_000 },
    ]);
  });

  it('leaves out a report whose push is staleAfter old: a late write never brings a stale count back', () => {
    const writes = planShare([held(0, 10, 1_000), held(1, 20, 1_001)], { now: 1_000 + STALE, staleAfterMs: STALE, process: 'a' });
    expect(writes.map((w) => [w.report.shard_id, w.ttlMs])).toEqual([[1, 1]]);
  });

  it('a newer push replaces a stored one; an older one or the same one does not; an empty key takes anything', () => {
    expect(replaces(undefined, { reportedAt: 1 })).toBe(true);
    expect(replaces({ reportedAt: 1_000 }, { reportedAt: 1_001 })).toBe(true);
    expect(replaces({ reportedAt: 1_001 }, { reportedAt: 1_000 })).toBe(false);
    expect(replaces({ reportedAt: 1_000 }, { reportedAt: 1_000 })).toBe(false);
  });

  it('two agents with overlapping shards and different ages: Redis ends with the newest of each shard, in any order of writes', () => {
    // A load balancer spread the bot's pushes: agent A got shards 0-2 early and shard 1 again
    // late; agent B got shards 1-3 in between.
    const a = new Map<number, StoredReport>();
    recordNewest(a, [held(0, 100, 1_000), held(1, 110, 1_000), held(2, 120, 1_000)]);
    recordNewest(a, [held(1, 111, 3_000)]);
    const b = new Map<number, StoredReport>();
    recordNewest(b, [held(1, 210, 2_000), held(2, 220, 2_000), held(3, 230, 2_000)]);
    const plan = (agent: Map<number, StoredReport>, name: string, now: number) => planShare(agent.values(), { now, staleAfterMs: STALE, process: name });

    const orders = [
      ['a', 'b', 'a'],
      ['b', 'a', 'b'],
      ['a', 'a', 'b'],
      ['b', 'b', 'a'],
    ];
    for (const order of orders) {
      const redis = new Map<number, RedisShardReport>();
      // Each agent writes again and again (periodic rounds, Redis coming back): later rounds are re-writes of older pushes.
      order.forEach((who, round) => applyToRedis(redis, plan(who === 'a' ? a : b, who, 4_000 + round)));
      const result = [...redis.values()].sort((x, y) => x.shard_id - y.shard_id).map((r) => [r.shard_id, r.server_count, r.process]);
      expect(result, `order ${order.join(', ')}`).toEqual([
        [0, 100, 'a'],
        [1, 111, 'a'],
        [2, 220, 'b'],
        [3, 230, 'b'],
      ]);
    }
  });

  it('an agent keeps the latest push per shard; a report from an earlier receive time does not replace it', () => {
    const mine = new Map<number, StoredReport>();
    expect(recordNewest(mine, [held(0, 1, 2_000)])).toHaveLength(1);
    expect(recordNewest(mine, [held(0, 2, 2_000)])).toHaveLength(1); // same millisecond: the later push
    expect(recordNewest(mine, [held(0, 3, 1_999), held(1, 4, 1_999)]).map((r) => r.shard_id)).toEqual([1]);
    expect([...mine.values()].map((r) => r.server_count)).toEqual([2, 4]);
  });

  it('forgets what has expired', () => {
    const mine = new Map<number, StoredReport>([
      [0, held(0, 1, 1_000)],
      [1, held(1, 1, 2_000)],
    ]);
    dropExpired(mine, 1_000 + STALE, STALE);
    expect([...mine.keys()]).toEqual([1]);
  });
});
