import { isRedisErrorReply } from '../redis/client-module.js';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { redisFailure, RedisUnavailableError, type RedisConnection } from '../redis/connection.js';
import { timerDelay } from '../contract/timer-delay.js';

/**
 * The ordered queue of the Redis vote ledger's writes that follow a hook run (hook done, vote
 * finished, dead letter). Such a write must not be lost to a short Redis outage: a lost "done"
 * makes the agent that takes the vote over pay the reward again. So a write that fails for want of
 * Redis stays queued, in order, and is retried when the connection is back; its promise resolves
 * only once Redis has it (the ledger's "resolves when durable" promise), or rejects when the
 * queue is stopped with it unwritten.
 */

/** One write: its arguments to the apply script, what it is, in words, for errors, and the vote it finishes, if it does. */
interface QueuedWrite {
  args: readonly string[];
  what: string;
  finishes?: string;
}

/** Options of {@link createWriteQueue}. */
export interface WriteQueueOptions {
  connection: RedisConnection;
  /** Writes a batch (the arguments of its writes, in order) in one round trip; must be idempotent. */
  apply(args: string[]): Promise<void>;
  /** Writes per round trip. Default 256. */
  maxBatch?: number;
  /** Waits between retries while Redis answers but fails (the last repeats). Default 100, 250, 500, 1 000 ms. */
  retryDelaysMs?: readonly number[];
  logger?: AgentLogger;
}

/** A {@link createWriteQueue} queue. */
export interface WriteQueue {
  /** Queues `write`; resolves once Redis has it. */
  push(write: QueuedWrite): Promise<void>;
  /** Writes not yet in Redis. */
  readonly length: number;
  /**
   * Whether a write that finishes vote `key` is not yet in Redis (nor confirmed on its replicas).
   * Such a vote ran its hooks here: Redis may still show it pending under this agent, and a sweep
   * that took that for work left undone would reward it again.
   */
  finishing(key: string): boolean;
  /**
   * Tries to write everything queued within `timeoutMs` (waiting for Redis to come back), then
   * stops: the writes left are rejected with a `RedisUnavailableError` and returned.
   */
  drain(timeoutMs: number): Promise<QueuedWrite[]>;
}

interface Entry extends QueuedWrite {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * A reply error that retrying cannot fix (a script error, a key of the wrong type): the batch is
 * rejected rather than blocking every later write. `LOADING`, `BUSY`, `OOM`, `READONLY`... pass.
 */
function isDefinite(error: unknown): boolean {
  return isRedisErrorReply(error) && /^(ERR|WRONGTYPE)\b/.test(error.message);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** The state of one queue. */
interface QueueState {
  readonly connection: RedisConnection;
  readonly apply: (args: string[]) => Promise<void>;
  readonly maxBatch: number;
  readonly delays: readonly number[];
  readonly logger: AgentLogger;
  queue: Entry[];
  /** How many writes of `queue` finish each vote key (`finishes`). */
  readonly finishing: Map<string, number>;
  flushing: Promise<void> | undefined;
  retryTimer: NodeJS.Timeout | undefined;
  failures: number;
  lastError: unknown;
  stopped: boolean;
  /** Listens for the connection coming back (made once, removed by `drain`). */
  readonly onUp: () => void;
}

/** Creates an empty {@link WriteQueue} on `connection`. */
export function createWriteQueue(options: WriteQueueOptions): WriteQueue {
  const q: QueueState = {
    connection: options.connection,
    apply: (args) => options.apply(args),
    maxBatch: options.maxBatch ?? 256,
    delays: options.retryDelaysMs ?? [100, 250, 500, 1_000],
    logger: options.logger ?? silentLogger,
    queue: [],
    finishing: new Map(),
    flushing: undefined,
    retryTimer: undefined,
    failures: 0,
    lastError: undefined,
    stopped: false,
    onUp: () => {
      if (q.queue.length === 0) return;
      clearTimeout(q.retryTimer);
      q.retryTimer = undefined;
      start(q);
    },
  };
  q.connection.on('up', q.onUp);
  return {
    push(write) {
      if (q.stopped) return Promise.reject(new RedisUnavailableError(`Redis: could not ${write.what}: the vote ledger is closed`));
      return new Promise<void>((resolve, reject) => {
        q.queue.push({ ...write, resolve, reject });
        if (write.finishes !== undefined) q.finishing.set(write.finishes, (q.finishing.get(write.finishes) ?? 0) + 1);
        start(q);
      });
    },
    get length() {
      return q.queue.length;
    },
    finishing: (key) => q.finishing.has(key),
    drain: (timeoutMs) => drain(q, timeoutMs),
  };
}

/** Takes the first `count` writes off the queue (written, or failed for good). */
function shift(q: QueueState, count: number): void {
  for (const { finishes } of q.queue.splice(0, count)) {
    if (finishes === undefined) continue;
    const left = (q.finishing.get(finishes) ?? 1) - 1;
    if (left > 0) q.finishing.set(finishes, left);
    else q.finishing.delete(finishes);
  }
}

function start(q: QueueState): void {
  if (q.flushing !== undefined || q.retryTimer !== undefined || q.queue.length === 0) return;
  q.flushing = flush(q).finally(() => {
    q.flushing = undefined;
    // A write pushed after the loop saw an empty queue, but before this ran, found it still flushing.
    start(q);
  });
}

async function flush(q: QueueState): Promise<void> {
  // Writes made in the same tick (a burst of hook results) share this round trip.
  await Promise.resolve();
  while (q.queue.length > 0) {
    const batch = q.queue.slice(0, q.maxBatch);
    try {
      await q.apply(batch.flatMap((entry) => entry.args));
    } catch (error) {
      if (isDefinite(error)) {
        shift(q, batch.length);
        const failure = redisFailure(`record ${batch.length} vote ledger change(s)`, error);
        for (const entry of batch) entry.reject(failure);
        continue;
      }
      failedBatch(q, error);
      return;
    }
    shift(q, batch.length);
    if (q.failures > 0) q.logger.info({ afterFailures: q.failures }, 'vote ledger: queued hook results written to Redis');
    q.failures = 0;
    q.lastError = undefined;
    for (const entry of batch) entry.resolve();
  }
}

/** A batch Redis did not take: it stays queued, and is tried again when Redis is back or after a delay. */
function failedBatch(q: QueueState, error: unknown): void {
  q.lastError = error;
  q.failures += 1;
  if (q.failures === 1) {
    const err = redisFailure('record vote ledger changes', error).message;
    const what = 'vote ledger: Redis is unavailable; hook results are queued and written when it is back';
    q.logger.warn({ queued: q.queue.length, err }, what);
  }
  if (q.stopped) return;
  // While down, the `up` event restarts the flush; the timer covers a Redis that answers but fails.
  q.retryTimer = setTimeout(() => {
    q.retryTimer = undefined;
    start(q);
  }, timerDelay(q.delays[Math.min(q.failures - 1, q.delays.length - 1)] ?? 1_000));
  q.retryTimer.unref();
}

async function drain(q: QueueState, timeoutMs: number): Promise<QueuedWrite[]> {
  const { connection } = q;
  const deadline = Date.now() + timeoutMs;
  while (q.queue.length > 0 && Date.now() < deadline) {
    clearTimeout(q.retryTimer);
    q.retryTimer = undefined;
    if (!connection.isUp) await connection.whenUp({ timeoutMs: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
    if (!connection.isUp) break;
    start(q);
    await q.flushing;
    if (q.queue.length > 0) await sleep(Math.min(100, Math.max(0, deadline - Date.now())));
  }
  q.stopped = true;
  await q.flushing;
  clearTimeout(q.retryTimer);
  q.retryTimer = undefined;
  connection.off('up', q.onUp);
  const left = q.queue;
  q.queue = [];
  q.finishing.clear();
  if (left.length > 0) {
    const why =
      q.lastError === undefined
        ? (connection.downReason ?? 'no answer in time')
        : redisFailure('write', q.lastError).message.replace(/^Redis: could not write: /, '');
    const doing = left[0]?.what ?? 'write';
    const error = new RedisUnavailableError(`Redis: could not ${doing} (${why}); the vote ledger closed with it unwritten`);
    for (const entry of left) entry.reject(error);
  }
  return left.map(({ args, what }) => ({ args, what }));
}
