import type { CountReading, CountSource } from '../source.js';
import { parsePushBody, summarise, type ShardCountReport } from './push-reports.js';

/*
 * The pure core of shard aggregation in Redis: what a bot process writes for each of its shards,
 * which shards a reading lets it write, and what the reports read back add up to. No Redis and no
 * clock here (time is passed in). The adding up is the push source's `summarise`: one set of rules
 * for "every shard reported", whichever road the reports came by.
 */

/** One shard's report as stored at `shards:<id>` (JSON). */
export interface RedisShardReport extends ShardCountReport {
  /** Epoch ms the reporting process wrote it (its own clock: only shown in reasons). */
  reportedAt: number;
  /** Which process wrote it (`<hostname>/<pid>` by default), for operators reading Redis. */
  process: string;
}

/** The shards one process holds and their server counts. */
export type OwnShardsReading =
  | {
      ready: true;
      /** Shards the whole bot runs. */
      shardCount: number;
      /** Server count of each shard this process holds, by shard ID. */
      shards: ReadonlyMap<number, number>;
    }
  | { ready: false; reason: string };

/**
 * A count source that can also say which shards its own process holds: what a shard reporter
 * wants from a process that runs only some of the bot's shards (`read()` keeps the whole-bot
 * meaning of {@link CountSource}, and so is never ready in such a process).
 */
export interface OwnShardsSource extends CountSource {
  /** This process's shards only; never throws for an expected condition. */
  readOwnShards(signal?: AbortSignal): Promise<OwnShardsReading>;
}

/** True when `source` can read its own process's shards ({@link OwnShardsSource}). */
export function hasOwnShards(source: CountSource): source is OwnShardsSource {
  return typeof (source as Partial<OwnShardsSource>).readOwnShards === 'function';
}

/**
 * The shards a whole-bot reading lets a process report: every shard when the reading has per-shard
 * counts (a Client with internal sharding, a ShardingManager or ClusterManager running every
 * shard). A reading without per-shard counts cannot be split: the total goes under shard 0 and the
 * other shards report 0, so the sum stays right as long as this one process reports them all.
 */
export function ownShardsFromReading(reading: CountReading): OwnShardsReading {
  if (!reading.ready) return reading;
  const shards = new Map<number, number>();
  if (reading.shards !== undefined && reading.shards.length === reading.shardCount) {
    reading.shards.forEach((servers, id) => shards.set(id, servers));
  } else {
    for (let id = 0; id < reading.shardCount; id += 1) shards.set(id, id === 0 ? reading.serverCount : 0);
  }
  return { ready: true, shardCount: reading.shardCount, shards };
}

/** The reports of one round, in shard ID order. */
export function reportsFor(reading: Extract<OwnShardsReading, { ready: true }>, reportedAt: number, process: string): RedisShardReport[] {
  return [...reading.shards.entries()]
    .filter(([id]) => id >= 0 && id < reading.shardCount)
    .sort(([a], [b]) => a - b)
    .map(([id, servers]) => ({ shard_id: id, shard_count: reading.shardCount, server_count: servers, reportedAt, process }));
}

/**
 * A stored report read back, or undefined when it is not one (written by something else, or by a
 * newer version with another shape): data from outside is checked before it is added up.
 */
export function parseStoredReport(text: string | null | undefined): RedisShardReport | undefined {
  if (typeof text !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const parsed = parsePushBody({ shard_id: record.shard_id, shard_count: record.shard_count, server_count: record.server_count });
  if (!parsed.ok || typeof record.reportedAt !== 'number' || !Number.isFinite(record.reportedAt)) return undefined;
  return { ...parsed.reports[0]!, reportedAt: record.reportedAt, process: typeof record.process === 'string' ? record.process : 'unknown' };
}

/**
 * The shard count the reports say, when none is configured: that of the most recent report. A
 * bot that reshards reports the new count from its restarted processes, and the old layout's
 * reports expire on their own; until they do, the summary names them as out of layout.
 */
export function reportedShardCount(reports: readonly RedisShardReport[]): number | undefined {
  let newest: RedisShardReport | undefined;
  for (const report of reports) if (newest === undefined || report.reportedAt > newest.reportedAt) newest = report;
  return newest?.shard_count;
}

/** How a summary of Redis reports names where they come from, in its reasons. */
export interface ReportWording {
  /** What the reports are, for the source's description (`shard reports`). */
  what: string;
  /** The reason when no shard has a report. */
  empty: string;
  /** The setting of the expected shard count. */
  shardCountSetting: string;
  /** How long a report counts, appended to a not-ready reason. */
  expiry: string;
}

/** The wording of shard reports written by bot processes (`stats.source: redis`, or embedded). */
export const REPORTER_WORDING: ReportWording = {
  what: 'shard reports',
  empty:
    'no bot process has reported its shards to Redis (each embedded agent with state.redis reports every stats.redis.reportEvery; ' +
      'reports expire after stats.redis.staleAfter)',
  shardCountSetting: 'stats.redis.shardCount',
  expiry: 'a report expires stats.redis.staleAfter after its process last wrote it',
};

/** The wording of shard counts the bot pushed to the agents' push endpoints, shared through Redis. */
export const PUSH_WORDING: ReportWording = {
  what: 'shard counts pushed to the agents, shared',
  empty:
    'no shard has pushed its counts to any agent yet: the bot must POST them to the push endpoint of any agent (stats.push.listen), ' +
      'which shares them through Redis',
  shardCountSetting: 'stats.push.shardCount',
  expiry: 'a pushed report counts for stats.push.staleAfter after it reached an agent',
};

/** What {@link summariseRedisReports} needs besides the reports. */
export interface RedisSummaryOptions {
  /** Epoch ms now (the reader's clock). */
  now: number;
  /** `stats.redis.shardCount` (or `stats.push.shardCount`); undefined: {@link reportedShardCount}. */
  shardCount: number | undefined;
  /** How the reasons name the reports' origin. Default {@link REPORTER_WORDING}. */
  wording?: ReportWording;
}

/**
 * What the fresh reports add up to: ready with the sum when every expected shard has one,
 * otherwise `ready: false` naming the missing shards (`no report from shards 3-7, 12`).
 *
 * Freshness is Redis's TTL alone (a report that exists has not expired): the processes' clocks
 * never decide it, so machines whose clocks disagree still add up.
 */
export function summariseRedisReports(reports: readonly RedisShardReport[], options: RedisSummaryOptions): CountReading {
  const wording = options.wording ?? REPORTER_WORDING;
  if (reports.length === 0) return { ready: false, reason: `counts not ready: ${wording.empty}` };
  const configured = options.shardCount !== undefined;
  const summary = summarise(
    reports.map((report) => ({ ...report, receivedAt: Math.min(report.reportedAt, options.now) })),
    // Never stale by age: the TTL already removed every expired report.
    { now: options.now, staleAfterMs: Number.POSITIVE_INFINITY, shardCount: options.shardCount ?? reportedShardCount(reports), configured },
  );
  if (summary.ready) return summary;
  // summarise speaks of the push source's setting; name the one that sets the expected count here.
  const reason = summary.reason.replace('stats.push.shardCount', wording.shardCountSetting);
  return { ready: false, reason: `counts not ready: ${reason} (${wording.expiry})` };
}
