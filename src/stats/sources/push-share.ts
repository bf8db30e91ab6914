import { silentLogger, type AgentLogger } from '../../log/agent-logger.js';
import { redisFailure, type RedisConnection, type RedisScript } from '../../redis/connection.js';
import { REDIS_KEYS } from '../../redis/keys.js';
import { errorMessage } from '../../errors.js';
import type { StoredReport } from './push-reports.js';
import { dropExpired, planShare, recordNewest, type ShareWrite } from './push-share-plan.js';

/*
 * Pushed counts shared through Redis: with `state.redis`, every agent runs the push endpoint, and
 * each writes what the bot pushed to it as the same `shards:<id>` reports an embedded agent writes,
 * so the leader posts their sum (the redis source) whichever agent received which push. The
 * rules are in push-share-plan.ts; this is Redis, the timer and the logs.
 */

/**
 * Writes one round: per report, only when it is newer than the stored one (`replaces` in
 * push-share-plan.ts: a later `reportedAt`), the key with its own TTL and its index entry; then
 * announces the round on the channel when it wrote anything. Returns how many it wrote.
 * KEYS: the index, then each report's key. ARGV: the channel, then per report its shard ID, JSON,
 * `reportedAt` and TTL in ms.
 */
const SHARE_SCRIPT = `
local written = 0
for i = 2, #KEYS do
  local base = 2 + (i - 2) * 4
  local at = tonumber(ARGV[base + 2])
  local keep = false
  local current = redis.call('GET', KEYS[i])
  if current then
    local ok, stored = pcall(cjson.decode, current)
    if ok and type(stored) == 'table' and type(stored.reportedAt) == 'number' and stored.reportedAt >= at then keep = true end
  end
  if not keep then
    redis.call('SET', KEYS[i], ARGV[base + 1], 'PX', ARGV[base + 3])
    redis.call('ZADD', KEYS[1], at, ARGV[base])
    written = written + 1
  end
end
if written > 0 then redis.call('PUBLISH', ARGV[1], written) end
return written
`;

/** Where sharing stands, for the push endpoint's readiness detail. */
export interface PushShareState {
  /** Shards whose newest push this agent holds but could not write to Redis yet (not yet expired). */
  unshared: number;
  /** Why the last write failed, while it does (Redis unreachable); undefined once one succeeds. */
  problem: string | undefined;
}

/** Options of {@link createPushSharer}. */
export interface PushSharerOptions {
  /** The agent's Redis connection (started by the agent). */
  connection: RedisConnection;
  /** `stats.push.staleAfter`: each report expires this long after its push arrived. */
  staleAfterMs: number;
  /** How often everything held is written again (`stats.redis.reportEvery`): brings back reports a Redis restart lost. */
  everyMs: number;
  /** This agent's ID, in the stored reports. */
  process: string;
  logger?: AgentLogger;
  /** Epoch ms, the clock that stamped the reports' receive times. Default `Date.now`. */
  now?: () => number;
  /** Called when {@link PushShareState} changes. */
  onState?: (state: PushShareState) => void;
  /** Unrefs the timer. Default true. */
  unref?: boolean;
}

/** Shares one agent's pushes through Redis (see {@link createPushSharer}). */
export interface PushSharer {
  /**
   * Takes the reports of a push this agent just recorded and writes them; resolves true when
   * Redis has them (or a newer report of each shard), false when it could not be reached: they
   * are held and written when Redis returns. Never rejects.
   */
  share(reports: readonly StoredReport[]): Promise<boolean>;
  /** Writes everything held now (newest wins in Redis). Rejects with `RedisUnavailableError`. */
  shareAll(): Promise<void>;
  /** Starts the periodic round, and a round each time Redis comes back. Safe to call more than once. */
  start(): void;
  /** Stops the timer and waits for a round in flight. */
  stop(): Promise<void>;
  state(): PushShareState;
}

/** What a sharer holds: its settings, the reports pushed here, and where the writes stand. */
interface SharerState {
  readonly options: PushSharerOptions;
  readonly logger: AgentLogger;
  readonly now: () => number;
  readonly script: RedisScript;
  /** The newest push per shard this agent received. */
  readonly held: Map<number, StoredReport>;
  /** Shards whose newest report held here failed to be written: its receive time. */
  readonly unshared: Map<number, number>;
  problem: string | undefined;
  /** Pushes answered as held (202) since the last log line about them, and since the outage began. */
  heldAnswers: number;
  heldAnswersTotal: number;
  lastState: string;
  timer: NodeJS.Timeout | undefined;
  running: boolean;
  round: Promise<void> | undefined;
}

function shareState(s: SharerState): PushShareState {
  const at = s.now();
  let count = 0;
  for (const [id, receivedAt] of s.unshared) {
    if (receivedAt + s.options.staleAfterMs > at) count += 1;
    else s.unshared.delete(id);
  }
  return { unshared: count, problem: s.problem };
}

function tell(s: SharerState): void {
  const current = shareState(s);
  const text = JSON.stringify(current);
  if (text === s.lastState) return;
  s.lastState = text;
  s.options.onState?.(current);
}

/** Runs the script for `writes` (throws `RedisUnavailableError`), then marks them shared. */
async function write(s: SharerState, writes: readonly ShareWrite[]): Promise<void> {
  const { connection } = s.options;
  if (writes.length > 0) {
    const keys = [connection.key(REDIS_KEYS.shardIndex), ...writes.map((w) => connection.key(REDIS_KEYS.shard(w.report.shard_id)))];
    const args: (string | number)[] = [connection.key(REDIS_KEYS.shardsChanged)];
    for (const { report, ttlMs } of writes) args.push(report.shard_id, JSON.stringify(report), report.reportedAt, ttlMs);
    try {
      await s.script.run(keys, args);
    } catch (error) {
      throw redisFailure('share the pushed counts', error);
    }
  }
  for (const { report } of writes)
    if ((s.unshared.get(report.shard_id) ?? Infinity) <= report.reportedAt) s.unshared.delete(report.shard_id);
  if (s.problem !== undefined && shareState(s).unshared === 0) {
    s.logger.info(
      { heldPushes: s.heldAnswersTotal },
      'pushed counts shared through Redis again: every push held while it was unreachable is written',
    );
    s.problem = undefined;
    s.heldAnswers = 0;
    s.heldAnswersTotal = 0;
  }
  tell(s);
}

/** A failed write: logged once per outage (warn, with the cause and the fix); the rounds summarise the rest. */
function failed(s: SharerState, error: unknown): void {
  if (s.problem === undefined) {
    s.logger.warn(
      { err: errorMessage(error), unshared: shareState(s).unshared },
      'could not share pushed counts through Redis: pushes are answered 202 and held by this agent, and written to Redis when it ' +
        'returns (check that Redis runs and state.redis.url)',
    );
    s.heldAnswers = 0;
  }
  s.problem = errorMessage(error);
  tell(s);
}

const plan = (s: SharerState, reports: Iterable<StoredReport>) =>
  planShare(reports, { now: s.now(), staleAfterMs: s.options.staleAfterMs, process: s.options.process });

async function share(s: SharerState, reports: readonly StoredReport[]): Promise<boolean> {
  dropExpired(s.held, s.now(), s.options.staleAfterMs);
  const taken = recordNewest(s.held, reports);
  try {
    await write(s, plan(s, taken));
    return true;
  } catch (error) {
    for (const report of taken) s.unshared.set(report.shard_id, report.receivedAt);
    failed(s, error);
    s.heldAnswers += 1;
    s.heldAnswersTotal += 1;
    return false;
  }
}

async function shareAll(s: SharerState): Promise<void> {
  dropExpired(s.held, s.now(), s.options.staleAfterMs);
  await write(s, plan(s, s.held.values()));
}

async function tick(s: SharerState): Promise<void> {
  if (s.held.size > 0) {
    try {
      await shareAll(s);
    } catch (error) {
      failed(s, error);
    }
  }
  if (s.problem !== undefined && s.heldAnswers > 0) {
    // One line per round while Redis stays away, not one per push.
    s.logger.info(
      { pushes: s.heldAnswers, unshared: shareState(s).unshared, err: s.problem },
      'pushes held while Redis is unreachable (answered 202)',
    );
    s.heldAnswers = 0;
  }
}

/** One round at a time; a round asked for while one runs follows it. */
function runRound(s: SharerState): Promise<void> {
  const next: Promise<void> = (s.round ?? Promise.resolve()).then(() => tick(s)).finally(() => {
    if (s.round === next) s.round = undefined;
  });
  s.round = next;
  return next;
}

function schedule(s: SharerState): void {
  s.timer = setTimeout(() => {
    s.timer = undefined;
    void runRound(s).then(() => {
      if (s.running) schedule(s);
    });
  }, s.options.everyMs);
  if (s.options.unref ?? true) s.timer.unref();
}

/**
 * Shares the counts the bot pushed to this agent: each push is written at once (the answer to the
 * bot waits for it), everything held is written again each time Redis comes back and every
 * `everyMs`, and a report keeps its push's receive time and expiry however late it is written, so
 * a re-write never overwrites a newer push another agent received, nor outlives its push. A write
 * that fails is logged once (warn, with the cause), then summarised once per round while it lasts.
 */
export function createPushSharer(options: PushSharerOptions): PushSharer {
  const s: SharerState = {
    options,
    logger: options.logger ?? silentLogger,
    now: options.now ?? Date.now,
    script: options.connection.script(SHARE_SCRIPT),
    held: new Map(),
    unshared: new Map(),
    problem: undefined,
    heldAnswers: 0,
    heldAnswersTotal: 0,
    lastState: '',
    timer: undefined,
    running: false,
    round: undefined,
  };
  const onUp = () => void runRound(s);
  return {
    share: (reports) => share(s, reports),
    shareAll: () => shareAll(s),
    start() {
      if (s.running) return;
      s.running = true;
      options.connection.on('up', onUp);
      schedule(s);
    },
    async stop() {
      s.running = false;
      options.connection.off('up', onUp);
      clearTimeout(s.timer);
      s.timer = undefined;
      await s.round;
    },
    state: () => shareState(s),
  };
}
