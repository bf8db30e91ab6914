import { setTimeout as delay } from 'node:timers/promises';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { clusterPrefix } from '../redis/cluster.js';
import {
  createRedisConnection,
  defaultAgentId,
  REDIS_CONNECTION_DEFAULTS,
  redisFailure,
  type RedisConnection,
  type RedisConnectionOptions,
} from '../redis/connection.js';
import { parseAutoClaimReply, parsePendingDeliveries, parseReadGroupReply, voteFromEntry, type StreamEntry } from './stream-entries.js';
import type { Vote } from './types.js';
import { timerDelay } from '../contract/timer-delay.js';
import { errorMessage } from '../errors.js';

/*
 * The reward stream, consumer side: bot processes read the votes the agent appended through one
 * consumer group, so each vote goes to exactly one live process. A process that dies holding a
 * vote leaves it pending; another process claims it once it has been idle `claimIdleMs`
 * (XAUTOCLAIM) and runs it. Two connections: blocking reads hold theirs for up to `blockMs`, and
 * an XACK queued behind a block would wait that long.
 */

/** What a stream consumer's handler gets besides the vote. */
export interface StreamVoteContext {
  /** The vote key: make the reward idempotent on it (a vote can be delivered twice, see {@link createVoteConsumer}). */
  idempotencyKey: string;
  /** The stream entry's ID. */
  entryId: string;
  /** How many times the entry was delivered: 1, or 2 and more when it was claimed again. */
  deliveries: number;
}

/** Options of {@link createVoteConsumer}: `sentinel` or `cluster` (with `username` and `password`) as `state.redis`'s, instead of `url`. */
export interface VoteConsumerOptions extends Pick<RedisConnectionOptions, 'sentinel' | 'cluster' | 'username' | 'password'> {
  /** A Redis URL (`state.redis.url`), or `sentinel`, or `cluster`; the consumer opens its own connections (blocking reads need one). */
  url?: string;
  /** `state.redis.prefix`. Default `listing-agent:`; with `cluster`, made a hash tag as the agent makes it (`{listing-agent}:`). */
  prefix?: string;
  /** `votes.stream.key`. Default `votes:stream`. */
  key?: string;
  /** The consumer group: every bot process of one bot uses the same. Default `rewards`. */
  group?: string;
  /** This process's name in the group, unique per live process. Default `<hostname>/<8 random hex digits>`. */
  consumer?: string;
  /** Gives the reward; resolve to acknowledge (XACK), reject to have it delivered again after `claimIdleMs`. */
  handler: (vote: Vote, context: StreamVoteContext) => Promise<void>;
  /**
   * An entry left unacknowledged this long is claimed (XAUTOCLAIM) and run again: from a consumer
   * that died, or after a handler failed. Keep it above the longest handler. Default 30 000 ms.
   */
  claimIdleMs?: number;
  /** How often pending entries are looked for. Default half of `claimIdleMs`, at most 5 000 ms. */
  claimEveryMs?: number;
  /** How long one XREADGROUP blocks. Default 5 000 ms. */
  blockMs?: number;
  /** Handler calls at once. Default 8. */
  concurrency?: number;
  /** Where a group created now starts: `start` (every entry still in the stream) or `new` (only later ones). Default `start`. */
  from?: 'start' | 'new';
  /** How long `stop()` waits for handlers in flight. Default 10 000 ms. */
  stopTimeoutMs?: number;
  /** How long `start()` waits for Redis. Default 10 000 ms. */
  startTimeoutMs?: number;
  /** TLS, as `state.redis.tls`. */
  tls?: RedisConnectionOptions['tls'];
  /** Waits between reconnection attempts. Default the connection's (100 ms up to 2 s). */
  reconnectDelaysMs?: readonly number[];
  logger?: AgentLogger;
}

/** The defaults of {@link VoteConsumerOptions}. */
export const VOTE_CONSUMER_DEFAULTS = {
  prefix: REDIS_CONNECTION_DEFAULTS.prefix,
  key: 'votes:stream',
  group: 'rewards',
  claimIdleMs: 30_000,
  blockMs: 5_000,
  concurrency: 8,
  from: 'start',
  stopTimeoutMs: 10_000,
  startTimeoutMs: 10_000,
} as const;

/** A running consumer: `stop()` finishes the handlers in flight and disconnects. */
export interface VoteConsumer {
  /**
   * Connects, creates the group if needed (XGROUP CREATE MKSTREAM) and starts reading. Rejects
   * with `RedisUnavailableError` when Redis cannot be reached within `startTimeoutMs`; nothing is
   * left running, and calling it again tries again. Later outages never reject: it reconnects.
   * After `stop()` it starts again, on new connections.
   */
  start(): Promise<void>;
  /** Stops reading, waits for the handlers in flight (at most `stopTimeoutMs`) and closes. `start()` may follow. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Consumes the reward stream through a consumer group: each vote goes to exactly one live
 * process. Reads with XREADGROUP BLOCK, runs `handler` (at most `concurrency` at once), XACKs on
 * success and leaves the entry pending on failure; every `claimEveryMs` it claims entries idle
 * longer than `claimIdleMs` (XAUTOCLAIM: a consumer that died, or a failed handler) and runs them.
 * It rides out a Redis outage (reading again, and creating the group again if Redis lost it).
 *
 * At least once, not exactly once: a process that dies after its reward but before the XACK, an
 * XACK lost to an outage, or a handler slower than `claimIdleMs` hands the vote to another run,
 * so make the reward idempotent on `idempotencyKey`. An entry that is not a vote (another
 * writer's, damaged, a newer format) is poison: it is logged at `error` and acknowledged, so it
 * cannot block the group. Entries read just as `stop()` begins are not run here; they stay
 * pending and another process claims them after `claimIdleMs`.
 */
export function createVoteConsumer(options: VoteConsumerOptions): VoteConsumer {
  const c = consumerState(options);
  const stop = () => stopConsumer(c);
  return {
    start() {
      if (c.starting) return c.starting;
      // After (or during) a stop: a new run on new connections once that stop is done.
      const starting: Promise<void> = (c.stopped ?? Promise.resolve()).then(() => startConsumer(c));
      c.starting = starting;
      // A failed start leaves nothing running: the next start() tries again.
      starting.catch(() => {
        if (c.starting === starting) c.starting = undefined;
      });
      return starting;
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** The state of one consumer. */
interface ConsumerState {
  readonly streamKey: string;
  readonly group: string;
  readonly consumer: string;
  readonly claimIdleMs: number;
  readonly claimEveryMs: number;
  readonly blockMs: number;
  readonly concurrency: number;
  readonly from: 'start' | 'new';
  readonly stopTimeoutMs: number;
  readonly startTimeoutMs: number;
  readonly handler: VoteConsumerOptions['handler'];
  readonly logger: AgentLogger;
  /** Makes the connections of one run (a closed connection does not open again). */
  readonly connect: () => { reader: RedisConnection; commands: RedisConnection };
  /** Blocking reads hold this connection for up to `blockMs`. */
  reader: RedisConnection;
  /** Acknowledgements and claims, never behind a blocked read. */
  commands: RedisConnection;
  /** Handlers in flight, by entry ID. */
  readonly inFlight: Map<string, Promise<void>>;
  slotWaiters: (() => void)[];
  stopping: AbortController;
  /** Whether the connections were started (a run needs fresh ones then). */
  used: boolean;
  running: boolean;
  starting: Promise<void> | undefined;
  stopped: Promise<void> | undefined;
  readLoop: Promise<void> | undefined;
  claimTimer: NodeJS.Timeout | undefined;
  claimCursor: string;
}

function consumerState(options: VoteConsumerOptions): ConsumerState {
  const given = options.prefix ?? VOTE_CONSUMER_DEFAULTS.prefix;
  const streamKey = (options.cluster === undefined ? given : clusterPrefix(given)) + (options.key ?? VOTE_CONSUMER_DEFAULTS.key);
  const group = options.group ?? VOTE_CONSUMER_DEFAULTS.group;
  const consumer = options.consumer ?? defaultAgentId();
  const claimIdleMs = options.claimIdleMs ?? VOTE_CONSUMER_DEFAULTS.claimIdleMs;
  const blockMs = options.blockMs ?? VOTE_CONSUMER_DEFAULTS.blockMs;
  const logger = (options.logger ?? silentLogger).child({ stream: streamKey, group, consumer });
  const base = {
    ...{ url: options.url, sentinel: options.sentinel, cluster: options.cluster, username: options.username, password: options.password },
    prefix: given,
    clientName: 'listing-agent-consumer',
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.reconnectDelaysMs ? { reconnectDelaysMs: options.reconnectDelaysMs } : {}),
  };
  const connect = () => ({
    // The reader's outages are logged by the read loop; its own logger would also speak at stop().
    reader: createRedisConnection({ ...base, commandTimeoutMs: blockMs + 5_000, logger: silentLogger }),
    commands: createRedisConnection({ ...base, logger }),
  });
  return {
    streamKey,
    group,
    consumer,
    claimIdleMs,
    claimEveryMs: options.claimEveryMs ?? Math.max(50, Math.min(5_000, Math.floor(claimIdleMs / 2))),
    blockMs,
    concurrency: Math.max(1, options.concurrency ?? VOTE_CONSUMER_DEFAULTS.concurrency),
    from: options.from ?? VOTE_CONSUMER_DEFAULTS.from,
    stopTimeoutMs: options.stopTimeoutMs ?? VOTE_CONSUMER_DEFAULTS.stopTimeoutMs,
    startTimeoutMs: options.startTimeoutMs ?? VOTE_CONSUMER_DEFAULTS.startTimeoutMs,
    handler: options.handler,
    logger,
    connect,
    ...connect(),
    inFlight: new Map(),
    slotWaiters: [],
    stopping: new AbortController(),
    used: false,
    running: false,
    starting: undefined,
    stopped: undefined,
    readLoop: undefined,
    claimTimer: undefined,
    claimCursor: '0-0',
  };
}

function wakeSlots(c: ConsumerState): void {
  const waiters = c.slotWaiters;
  c.slotWaiters = [];
  for (const wake of waiters) wake();
}

const slotFree = (c: ConsumerState) =>
  c.inFlight.size < c.concurrency || !c.running ? Promise.resolve() : new Promise<void>((resolve) => c.slotWaiters.push(resolve));

async function ensureGroup(c: ConsumerState): Promise<void> {
  try {
    await c.reader.client.sendCommand(['XGROUP', 'CREATE', c.streamKey, c.group, c.from === 'start' ? '0' : '$', 'MKSTREAM']);
    c.logger.info({ from: c.from }, 'reward stream consumer group created');
  } catch (error) {
    if (!errorMessage(error).startsWith('BUSYGROUP')) throw error;
  }
}

async function ack(c: ConsumerState, id: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await c.commands.client.sendCommand(['XACK', c.streamKey, c.group, id]);
      return;
    } catch (error) {
      if (attempt >= 2) {
        const again = 'it will be delivered again (rewards must be idempotent on idempotencyKey)';
        c.logger.warn({ entryId: id, err: errorMessage(error) }, `could not acknowledge a reward stream entry: ${again}`);
        return;
      }
      // A short outage: wait for the connection a little rather than hand the vote to another run.
      await c.commands.whenUp({ timeoutMs: Math.min(5_000, Math.max(100, Math.floor(c.claimIdleMs / 2))) }).catch(() => undefined);
    }
  }
}

async function handle(c: ConsumerState, entry: StreamEntry, deliveries: number): Promise<void> {
  const parsed = voteFromEntry(entry);
  if (!parsed.ok) {
    const skipped = `reward stream entry ${parsed.problem}: acknowledged and skipped (poison)`;
    c.logger.error({ entryId: entry.id, problem: parsed.problem }, skipped);
    await ack(c, entry.id);
    return;
  }
  const { vote } = parsed;
  try {
    await c.handler(vote, { idempotencyKey: vote.key, entryId: entry.id, deliveries });
  } catch (error) {
    const again = `reward handler failed; the vote stays pending and is delivered again after ${c.claimIdleMs} ms`;
    c.logger.warn({ entryId: entry.id, key: vote.key, deliveries, err: errorMessage(error) }, again);
    return;
  }
  await ack(c, entry.id);
}

function dispatch(c: ConsumerState, entry: StreamEntry, deliveries: number): void {
  // Our own entry, claimed back while its handler is still running: never run it twice here.
  if (c.inFlight.has(entry.id)) return;
  const work = handle(c, entry, deliveries)
    .catch((error: unknown) => c.logger.error({ entryId: entry.id, err: errorMessage(error) }, 'reward stream entry failed unexpectedly'))
    .finally(() => {
      c.inFlight.delete(entry.id);
      wakeSlots(c);
    });
  c.inFlight.set(entry.id, work);
}

async function runReadLoop(c: ConsumerState): Promise<void> {
  let needGroup = false;
  let outage: string | undefined;
  let backoffMs = 0;
  while (c.running) {
    while (c.running && c.inFlight.size >= c.concurrency) await slotFree(c);
    if (!c.running) break;
    try {
      if (needGroup) await ensureGroup(c);
      needGroup = false;
      const reply = await c.reader.client.sendCommand([
        ...['XREADGROUP', 'GROUP', c.group, c.consumer, 'COUNT', String(c.concurrency - c.inFlight.size)],
        ...['BLOCK', String(c.blockMs), 'STREAMS', c.streamKey, '>'],
      ]);
      if (outage !== undefined) c.logger.info('reward stream: reading again');
      outage = undefined;
      backoffMs = 0;
      // Read as stop() began: left pending, for another process to claim.
      if (!c.running) break;
      for (const entry of parseReadGroupReply(reply)) dispatch(c, entry, 1);
    } catch (error) {
      if (!c.running) break;
      const problem = errorMessage(error);
      if (outage === undefined) c.logger.warn({ err: problem }, 'reward stream: cannot read; trying again');
      outage = problem;
      // Redis may have come back without its data (no persistence): the group must exist again.
      needGroup = true;
      await c.reader.whenUp({ signal: c.stopping.signal }).catch(() => undefined);
      // A failure that lasts while connected (a key of another type) must not spin.
      backoffMs = Math.min(2_000, Math.max(50, backoffMs * 2));
      // Until the backoff passed, or stop() began.
      await delay(timerDelay(backoffMs), undefined, { signal: c.stopping.signal }).catch(() => undefined);
    }
  }
}

async function claimRound(c: ConsumerState): Promise<void> {
  const free = c.concurrency - c.inFlight.size;
  if (!c.running || free <= 0) return;
  const claim = ['XAUTOCLAIM', c.streamKey, c.group, c.consumer, String(c.claimIdleMs), c.claimCursor, 'COUNT', String(free)];
  const reply = await c.commands.client.sendCommand(claim);
  const { cursor, entries } = parseAutoClaimReply(reply);
  c.claimCursor = cursor;
  const claimed = entries.filter((entry) => !c.inFlight.has(entry.id));
  if (claimed.length === 0 || !c.running) return;
  let deliveries = new Map<string, number>();
  try {
    const range = [claimed[0]!.id, claimed.at(-1)!.id, String(claimed.length + c.inFlight.size)];
    deliveries = parsePendingDeliveries(await c.commands.client.sendCommand(['XPENDING', c.streamKey, c.group, ...range, c.consumer]));
  } catch {
    // Only the count in the context is lost: a claimed entry was delivered at least twice.
  }
  const why = 'reward stream: claimed entries left idle by a consumer that died or failed';
  c.logger.info({ entries: claimed.map((entry) => entry.id) }, why);
  for (const entry of claimed) dispatch(c, entry, deliveries.get(entry.id) ?? 2);
}

function scheduleClaims(c: ConsumerState): void {
  c.claimTimer = setTimeout(() => {
    claimRound(c)
      .catch((error: unknown) => c.logger.debug({ err: errorMessage(error) }, 'reward stream: claim round failed; trying again'))
      .finally(() => {
        if (c.running) scheduleClaims(c);
      });
  }, c.claimEveryMs);
  c.claimTimer.unref();
}

async function startConsumer(c: ConsumerState): Promise<void> {
  if (c.used) {
    // A run before this one (stopped, or failed to start): its connections are closed, and a closed one does not open again.
    Object.assign(c, c.connect());
    c.stopping = new AbortController();
  }
  c.used = true;
  const { reader, commands } = c;
  reader.start();
  commands.start();
  const timeoutMs = c.startTimeoutMs;
  try {
    await Promise.all([reader.whenUp({ timeoutMs }), commands.whenUp({ timeoutMs })]);
    await ensureGroup(c);
  } catch (error) {
    // Not connected: a graceful close would wait for a connection that may never come.
    for (const connection of [reader, commands]) if (connection.client.isOpen) connection.client.destroy();
    throw redisFailure(`start the reward stream consumer on ${reader.describe()}`, error);
  }
  c.running = true;
  c.readLoop = runReadLoop(c);
  scheduleClaims(c);
  c.logger.info({ claimIdleMs: c.claimIdleMs, concurrency: c.concurrency }, 'reward stream consumer started');
}

function stopConsumer(c: ConsumerState): Promise<void> {
  const starting = c.starting;
  // Not started (or stopped already): nothing to stop.
  if (starting === undefined) return c.stopped ?? Promise.resolve();
  c.starting = undefined;
  c.stopped = (async () => {
    await starting.catch(() => undefined);
    c.running = false;
    c.stopping.abort();
    clearTimeout(c.claimTimer);
    wakeSlots(c);
    // Ends a read blocked for up to blockMs at once; acknowledgements use the other connection.
    if (c.reader.client.isOpen) c.reader.client.destroy();
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      Promise.allSettled([...c.inFlight.values()]).then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), c.stopTimeoutMs))),
    ]);
    clearTimeout(timer);
    const again = 'reward stream: stopped with handlers still running; their votes will be delivered again';
    if (!waited) c.logger.warn({ entries: [...c.inFlight.keys()] }, again);
    await c.readLoop;
    await Promise.all([c.reader.close(), c.commands.close()]);
  })();
  return c.stopped;
}
