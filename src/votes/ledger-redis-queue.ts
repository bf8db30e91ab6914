import { isRedisErrorReply } from '../redis/client-module.js';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { redisFailure, RedisUnavailableError, type RedisConnection } from '../redis/connection.js';

/**
 * The ordered queue of the Redis vote ledger's writes that follow a hook run (hook done, vote
 * finished, dead letter). Such a write must not be lost to a short Redis outage: a lost "done"
 * makes the agent that takes the vote over pay the reward again. So a write that fails for want of
 * Redis stays queued, in order, and is retried when the connection is back; its promise resolves
 * only once Redis has it (the ledger's "resolves when durable" promise), or rejects when the
 * queue is stopped with it unwritten.
 */

/** One write: its arguments to the apply script, and what it is, in words, for errors. */
export interface QueuedWrite {
  args: readonly string[];
  what: string;
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

/** Creates an empty {@link WriteQueue} on `connection`. */
export function createWriteQueue(options: WriteQueueOptions): WriteQueue {
  const { connection } = options;
  const maxBatch = options.maxBatch ?? 256;
  const delays = options.retryDelaysMs ?? [100, 250, 500, 1_000];
  const logger = options.logger ?? silentLogger;
  let queue: Entry[] = [];
  let flushing: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let failures = 0;
  let lastError: unknown;
  let stopped = false;

  const onUp = () => {
    if (queue.length === 0) return;
    clearTimeout(retryTimer);
    retryTimer = undefined;
    start();
  };
  connection.on('up', onUp);

  function start(): void {
    if (flushing !== undefined || retryTimer !== undefined || queue.length === 0) return;
    flushing = flush().finally(() => {
      flushing = undefined;
      // A write pushed after the loop saw an empty queue, but before this ran, found it still flushing.
      start();
    });
  }

  async function flush(): Promise<void> {
    // Writes made in the same tick (a burst of hook results) share this round trip.
    await Promise.resolve();
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      try {
        await options.apply(batch.flatMap((entry) => entry.args));
      } catch (error) {
        if (isDefinite(error)) {
          queue.splice(0, batch.length);
          const failure = redisFailure(`record ${batch.length} vote ledger change(s)`, error);
          for (const entry of batch) entry.reject(failure);
          continue;
        }
        lastError = error;
        failures += 1;
        if (failures === 1) logger.warn({ queued: queue.length, err: redisFailure('record vote ledger changes', error).message }, 'vote ledger: Redis is unavailable; hook results are queued and written when it is back');
        if (!stopped) {
          // While down, the `up` event restarts the flush; the timer covers a Redis that answers but fails.
          retryTimer = setTimeout(() => {
            retryTimer = undefined;
            start();
          }, delays[Math.min(failures - 1, delays.length - 1)] ?? 1_000);
          retryTimer.unref();
        }
        return;
      }
      queue.splice(0, batch.length);
      if (failures > 0) logger.info({ afterFailures: failures }, 'vote ledger: queued hook results written to Redis');
      failures = 0;
      lastError = undefined;
      for (const entry of batch) entry.resolve();
    }
  }

  return {
    push(write) {
      if (stopped) return Promise.reject(new RedisUnavailableError(`Redis: could not ${write.what}: the vote ledger is closed`));
      return new Promise<void>((resolve, reject) => {
        queue.push({ ...write, resolve, reject });
        start();
      });
    },
    get length() {
      return queue.length;
    },
    async drain(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (queue.length > 0 && Date.now() < deadline) {
        clearTimeout(retryTimer);
        retryTimer = undefined;
        if (!connection.isUp) await connection.whenUp({ timeoutMs: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
        if (!connection.isUp) break;
        start();
        await flushing;
        if (queue.length > 0) await sleep(Math.min(100, Math.max(0, deadline - Date.now())));
      }
      stopped = true;
      await flushing;
      clearTimeout(retryTimer);
      retryTimer = undefined;
      connection.off('up', onUp);
      const left = queue;
      queue = [];
      if (left.length > 0) {
        const why = lastError === undefined ? connection.downReason ?? 'no answer in time' : redisFailure('write', lastError).message.replace(/^Redis: could not write: /, '');
        const error = new RedisUnavailableError(`Redis: could not ${left[0]?.what ?? 'write'} (${why}); the vote ledger closed with it unwritten`);
        for (const entry of left) entry.reject(error);
      }
      return left.map(({ args, what }) => ({ args, what }));
    },
  };
}
