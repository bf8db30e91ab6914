import { silentLogger, type AgentLogger } from '../../log/agent-logger.js';
import { defaultAgentId, redisFailure, type RedisConnection } from '../../redis/connection.js';
import { watchChannel } from '../../redis/channel.js';
import { REDIS_KEYS } from '../../redis/keys.js';
import type { CountReading, CountSource } from '../source.js';
import {
  hasOwnShards,
  ownShardsFromReading,
  parseStoredReport,
  REPORTER_WORDING,
  reportsFor,
  summariseRedisReports,
  type OwnShardsReading,
  type RedisShardReport,
  type ReportWording,
} from './redis-shards-reports.js';
import { errorMessage } from '../../errors.js';

/*
 * Shard aggregation on Redis, the adapters: every bot process (any machine, any bot shape) writes
 * its own shards' counts with a TTL; the leader reads them all back and posts the sum once every
 * expected shard has a fresh report. Keys (under the prefix):
 *
 * - `shards:<id>`: JSON {shard_id, shard_count, server_count, reportedAt, process}, PX = staleAfter.
 * - `shards:index`: sorted set of shard IDs, score = report time, so the reader needs no SCAN.
 * - channel `shards:changed`: each round of reports is announced there, so that a leader waiting
 *   for its last missing shard reads at once instead of at its next poll.
 */

/**
 * Writes one round of reports: every key and its index entry together, or none; then announces it
 * on the channel named by the last argument.
 */
const REPORT_SCRIPT = `
local ttl = ARGV[1]
local score = ARGV[2]
for i = 2, #KEYS do
  redis.call('SET', KEYS[i], ARGV[2 * i], 'PX', ttl)
  redis.call('ZADD', KEYS[1], score, ARGV[2 * i - 1])
end
redis.call('PUBLISH', ARGV[#ARGV], #KEYS - 1)
return #KEYS - 1
`;

/**
 * Index entries not refreshed for this many stale periods are dropped by the reader: their keys
 * expired long ago (a shard of an old layout). Far beyond any clock skew between machines, so a
 * report just written is never dropped from the index.
 */
const INDEX_KEEP_PERIODS = 10;

/** Options of {@link createRedisShardsSource}. */
export interface RedisShardsSourceOptions {
  connection: RedisConnection;
  /** A report older than this has expired (`stats.redis.staleAfter`); also bounds the index's clean-up. */
  staleAfterMs: number;
  /**
   * Shards expected in all (`stats.redis.shardCount`). Default: the `shard_count` of the most
   * recent report (each process reads it from Discord; a reshard is followed once the old
   * layout's reports expire).
   */
  shardCount?: number;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
}

/**
 * The sum of the shard reports bot processes wrote to Redis (`stats.source: redis`, or embedded
 * with `state.redis`): ready when every expected shard has a report that has not expired,
 * otherwise `ready: false` naming the missing shards (`no report from shards 3-7, 12`). A report
 * exists until its TTL runs out, so Redis's clock alone decides freshness. Redis being down is
 * a `ready: false` too (never a throw): the poster keeps what it has and tries again.
 *
 * `onChange` hears each round a reporter writes (channel `shards:changed`, subscribed on the same
 * connection, RESP3) and each time Redis comes back, so the first post follows the last missing
 * report by milliseconds. Reporters of agents older than this channel are still seen, at the
 * poster's next poll.
 */
export function createRedisShardsSource(options: RedisShardsSourceOptions): CountSource {
  return redisShardsSource(options);
}

/**
 * {@link createRedisShardsSource}, with the reasons worded for where the reports come from (the
 * agents' push endpoints, with `stats.source: push`). Not public: the wording is the agent's.
 */
export function redisShardsSource(options: RedisShardsSourceOptions, wording?: ReportWording): CountSource {
  const { connection, staleAfterMs } = options;
  const now = options.now ?? Date.now;
  const index = connection.key(REDIS_KEYS.shardIndex);
  const changes = watchChannel(connection, connection.key(REDIS_KEYS.shardsChanged));

  const readReports = async (): Promise<RedisShardReport[]> => {
    const client = connection.client;
    await client.zRemRangeByScore(index, '-inf', `(${now() - INDEX_KEEP_PERIODS * staleAfterMs}`);
    const ids = await client.zRange(index, 0, -1);
    if (ids.length === 0) return [];
    const texts = await client.mGet(ids.map((id) => connection.key(REDIS_KEYS.shard(Number(id)))));
    // An ID whose key is gone has expired: nothing to add up.
    return texts.map((text) => parseStoredReport(text as string | null)).filter((report) => report !== undefined);
  };

  return {
    get description() {
      return `${(wording ?? REPORTER_WORDING).what} in ` +
        `${connection.describe()}${options.shardCount !== undefined ? ` (${options.shardCount} shards expected)` : ''}`;
    },
    async read(signal): Promise<CountReading> {
      signal?.throwIfAborted();
      let reports: RedisShardReport[];
      try {
        reports = await readReports();
      } catch (error) {
        signal?.throwIfAborted();
        return { ready: false, reason: `counts not ready: ${redisFailure('read the shard reports', error).message}` };
      }
      return summariseRedisReports(reports, { now: now(), shardCount: options.shardCount, ...(wording ? { wording } : {}) });
    },
    onChange: changes,
  };
}

/** Options of {@link createShardReporter}. */
export interface ShardReporterOptions {
  connection: RedisConnection;
  /**
   * This process's counts. An {@link OwnShardsSource} (`ownShardsSourceFor(bot)`) reports only the
   * shards this process holds; any other source is taken as the whole bot's (every shard of its
   * reading, or the total under shard 0 when it has no per-shard counts).
   */
  source: CountSource;
  /** How often the reports are written (`stats.redis.reportEvery`). */
  everyMs: number;
  /** Each report's TTL (`stats.redis.staleAfter`): keep it several times `everyMs`. */
  ttlMs: number;
  /** Names this process in its reports. Default `<hostname>/<8 random hex digits>`. */
  process?: string;
  logger?: AgentLogger;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Unrefs the timer (library mode: the bot's process may exit without stopping it). Default true. */
  unref?: boolean;
}

/** Writes this process's shard counts to Redis on a timer (every agent, leader or not). */
export interface ShardReporter {
  /** Writes the first round now, then every `everyMs`. Safe to call more than once; after `stop()` it reports again. */
  start(): void;
  /**
   * Writes the reports now; resolves with the shard IDs written (none when the source is not
   * ready). Rejects with `RedisUnavailableError` when Redis refuses them.
   */
  reportNow(signal?: AbortSignal): Promise<number[]>;
  /**
   * Stops the timer and waits for a round in flight. The reports stay: a process that restarts
   * must not make the total drop; they expire after `ttlMs` if it does not come back.
   */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Reports the shards `source` holds to Redis, for the leader's {@link createRedisShardsSource}:
 * one Lua script per round writes every `shards:<id>` (PX `ttlMs`) and its `shards:index` entry
 * together. A source that is not ready writes nothing (a cache still filling is never a 0), so
 * the shard's last report ages out instead. Failures are logged and the next round tries again.
 */
export function createShardReporter(options: ShardReporterOptions): ShardReporter {
  const { connection, source, everyMs, ttlMs } = options;
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const processName = options.process ?? defaultAgentId();
  const script = connection.script(REPORT_SCRIPT);
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  /** Counts the starts: a round of an earlier run, finishing after a stop and a new start, arms nothing. */
  let runs = 0;
  let round: Promise<unknown> | undefined;
  /** The last problem logged, so a condition that lasts is logged once, not every round. */
  let lastProblem: string | undefined;

  const readOwn = async (signal?: AbortSignal): Promise<OwnShardsReading> =>
    hasOwnShards(source) ? source.readOwnShards(signal) : ownShardsFromReading(await source.read(signal));

  const reportNow = async (signal?: AbortSignal): Promise<number[]> => {
    const reading = await readOwn(signal);
    if (!reading.ready) {
      if (lastProblem !== reading.reason) logger.info({ reason: reading.reason }, 'shard reports to Redis wait for the counts');
      lastProblem = reading.reason;
      return [];
    }
    const reports = reportsFor(reading, now(), processName);
    if (reports.length === 0) return [];
    const keys = [connection.key(REDIS_KEYS.shardIndex), ...reports.map((r) => connection.key(REDIS_KEYS.shard(r.shard_id)))];
    const args: (string | number)[] = [Math.max(1, Math.round(ttlMs)), reports[0]!.reportedAt];
    for (const report of reports) args.push(report.shard_id, JSON.stringify(report));
    args.push(connection.key(REDIS_KEYS.shardsChanged));
    try {
      await script.run(keys, args);
    } catch (error) {
      throw redisFailure('write the shard reports', error);
    }
    if (lastProblem !== undefined) logger.info({ shards: reports.map((r) => r.shard_id) }, 'shard reports to Redis resumed');
    lastProblem = undefined;
    return reports.map((r) => r.shard_id);
  };

  const tick = async (run: number): Promise<void> => {
    try {
      await reportNow();
    } catch (error) {
      const problem = errorMessage(error);
      if (lastProblem !== problem) logger.warn({ err: problem }, 'could not write the shard reports to Redis; trying again next round');
      lastProblem = problem;
    }
    if (running && run === runs) schedule(everyMs);
  };

  function schedule(delayMs: number): void {
    clearTimeout(timer);
    const run = runs;
    timer = setTimeout(() => {
      timer = undefined;
      round = tick(run);
    }, delayMs);
    if (options.unref ?? true) timer.unref();
  }

  const stop = async (): Promise<void> => {
    running = false;
    clearTimeout(timer);
    timer = undefined;
    await round;
  };

  return {
    start() {
      if (running) return;
      running = true;
      runs += 1;
      schedule(0);
    },
    reportNow,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
