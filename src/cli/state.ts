import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { RedisServerError, RedisUnavailableError, type RedisConnection } from '../redis/connection.js';
import { agentClientName, redisConnectionFor } from '../redis/from-config.js';
import { createFileStore } from '../store/file.js';
import { createStateFileReader } from '../store/state-file-reader.js';
import { createRedisStore } from '../store/redis.js';
import type { StateStore } from '../store/types.js';
import { stateDirectory } from '../config/state-directory.js';
import { configuredVoteHooks, readDeadLetters, votesLedgerFor, type ConfiguredVoteHooksOptions } from '../votes/configured.js';
import type { DeadLetter, VoteHook, VoteLedger } from '../votes/types.js';
import type { CliIo } from './io.js';

/**
 * The state a CLI command works on, as the configuration names it: the state directory, or Redis
 * when `state.redis` is set (then the state, the vote ledger and the dead letters are there, as
 * for `listing-agent run`). One place, so that `votes`, `webhooks` and `commands` never act on
 * the empty state directory of a Redis user.
 */

/** How long a command waits for Redis before it gives up with one line naming the host. */
const CLI_REDIS_WAIT_MS = 5_000;

/** Options of {@link cliState}. */
export interface CliStateOptions {
  /**
   * This command's agent ID in the Redis vote ledger (its heartbeat, the votes it runs). Default
   * {@link cliAgentId}: `<host>/<pid>`, unique per process.
   */
  agentId?: string;
  /** Where the Redis connection logs (connected, lost). Default: silent. */
  logger?: AgentLogger;
}

/** What {@link CliState.deadLetters} found. */
interface CliDeadLetters {
  /** Where they were read: the journal's path, or the Redis server and prefix. */
  where: string;
  /** False when there is no vote journal yet (the file state only; Redis always says true). */
  exists: boolean;
  letters: DeadLetter[];
  /** Damaged journal lines skipped (the file state only). */
  corruptLines: number;
}

/** The state of one CLI command. Call {@link CliState.close} when done (or `await using`). */
export interface CliState extends AsyncDisposable {
  /** `file` (the state directory) or `redis` (`state.redis`). */
  readonly kind: 'file' | 'redis';
  /** Where the state is, for messages; never a password (`redis redis://host:6379 (prefix listing-agent:)`). */
  readonly description: string;
  /**
   * The configured vote hooks (`votes.hooks`, then the reward stream hook on this state's Redis
   * when `votes.stream.enabled`). No I/O: call it before anything is opened, so that a bad hook
   * is a configuration error before a lock, a port or a connection is taken.
   */
  hooks(options?: Omit<ConfiguredVoteHooksOptions, 'redis' | 'listeners'>): VoteHook[];
  /**
   * The state store, opened (once; {@link CliState.close} closes it). File: the file store, which
   * takes the state directory's lock (a running agent holds it: this throws naming it). Redis: the
   * Redis store *without* the leader's fence, so leader-only keys (`commands:lastSync`) are written
   * as an operator's explicit action, whoever leads.
   */
  store(): Promise<StateStore>;
  /** Reads the state without a lock and without writing anything (beside a running agent). */
  reader(): Promise<Pick<StateStore, 'get'>>;
  /**
   * The vote ledger, not opened (its user opens and closes it, before {@link CliState.close}).
   * File: the journal, after taking the state lock through {@link CliState.store}. Redis: the
   * shared ledger under this command's agent ID (no lock: every agent of the bot shares it);
   * `adoptOrphans: false` leaves dead agents' pending votes to the running agents (default true).
   */
  ledger(options?: { adoptOrphans?: boolean }): Promise<VoteLedger>;
  /** The dead letters, read without opening the ledger or taking a lock (beside a running agent). */
  deadLetters(): Promise<CliDeadLetters>;
  /** The Redis connection, started and up (`state.redis` only: undefined for the file state). */
  redis(): Promise<RedisConnection | undefined>;
  /** Closes the store, then the Redis connection. Safe to call more than once. */
  close(): Promise<void>;
}

/** A CLI process's agent ID: `<host>/<pid>`, or `<host>/<pid>/<role>` to keep it apart from the daemon's. */
export function cliAgentId(io: Pick<CliIo, 'owner'>, role?: string): string {
  return `${io.owner.host}/${io.owner.pid}${role === undefined ? '' : `/${role}`}`;
}

/** What a CLI command's state holds: the config, where the state is, and what it opened. */
interface CliStateRun {
  readonly config: ListingAgentConfig;
  readonly io: Pick<CliIo, 'cwd' | 'owner' | 'isProcessAlive'>;
  readonly directory: string;
  readonly agentId: string;
  /** The Redis connection of `state.redis`, not started until a method needs it. */
  readonly connection: RedisConnection | undefined;
  readonly description: string;
  connecting: Promise<RedisConnection> | undefined;
  opened: Promise<StateStore> | undefined;
  closing: Promise<void> | undefined;
}

/** The started connection, once Redis answered (within {@link CLI_REDIS_WAIT_MS}). */
function connected(run: CliStateRun): Promise<RedisConnection> {
  const { connection } = run;
  if (connection === undefined) throw new Error('no state.redis: the file state needs no connection');
  if (run.closing !== undefined) return Promise.reject(new Error('the CLI state is closed'));
  run.connecting ??= (async () => {
    connection.start();
    try {
      await connection.whenUp({ timeoutMs: CLI_REDIS_WAIT_MS });
    } catch (error) {
      // A Sentinel at the URL: its own message names the settings to change.
      if (error instanceof RedisServerError) throw error;
      const why = connection.downReason ?? 'no answer';
      const redis = run.config.state.redis;
      const other = redis?.cluster !== undefined ? 'state.redis.cluster' : 'state.redis.url';
      const setting = redis?.sentinel !== undefined ? 'state.redis.sentinel' : other;
      throw new RedisUnavailableError(
        `cannot reach ${connection.describe()} (${setting}) ` +
          `within ${CLI_REDIS_WAIT_MS / 1000} s: ${why}; is Redis running and reachable from here?`,
        { cause: error },
      );
    }
    return connection;
  })();
  return run.connecting;
}

/** See {@link CliState.store}. */
function openStore(run: CliStateRun): Promise<StateStore> {
  const { connection, directory, io } = run;
  run.opened ??= (async () => {
    const store =
      connection === undefined
        ? createFileStore({ directory, owner: io.owner, isProcessAlive: io.isProcessAlive })
        : createRedisStore({ connection: await connected(run) });
    await store.open();
    return store;
  })();
  return run.opened;
}

/** See {@link CliState.ledger}. */
async function ledgerOf(run: CliStateRun, options: { adoptOrphans?: boolean }): Promise<VoteLedger> {
  if (run.connection === undefined) {
    // The lock keeps a running agent and this command from appending to one journal at once.
    await openStore(run);
    return votesLedgerFor(run.config, 'file', { cwd: run.io.cwd });
  }
  return votesLedgerFor(run.config, 'redis', { redis: { connection: await connected(run), agentId: run.agentId, ...options } });
}

/** See {@link CliState.deadLetters}. */
async function deadLettersOf(run: CliStateRun): Promise<CliDeadLetters> {
  if (run.connection === undefined) {
    const reading = await readDeadLetters(run.directory);
    return { where: reading.path, exists: reading.exists, letters: reading.letters, corruptLines: reading.corruptLines };
  }
  // Read straight from Redis: opening the ledger would beat a heartbeat and claim orphaned votes.
  const ledger = votesLedgerFor(run.config, 'redis', { redis: { connection: await connected(run), agentId: run.agentId } });
  return { where: run.description, exists: true, letters: await ledger.deadLetters(), corruptLines: 0 };
}

/** See {@link CliState.close}. */
function closeState(run: CliStateRun): Promise<void> {
  run.closing ??= (async () => {
    try {
      if (run.opened !== undefined) {
        const store = await run.opened.catch(() => undefined);
        await store?.close();
      }
    } finally {
      await run.connection?.close().catch(() => undefined);
    }
  })();
  return run.closing;
}

/**
 * The state `config` names for a CLI command run by `io`. Nothing is opened yet: the Redis
 * connection starts at the first method that needs it, and waits up to {@link CLI_REDIS_WAIT_MS}
 * for Redis; a Redis that does not answer fails that method with a one-line
 * `RedisUnavailableError` naming the server (never its password).
 */
export function cliState(
  config: ListingAgentConfig,
  io: Pick<CliIo, 'cwd' | 'owner' | 'isProcessAlive'>,
  options: CliStateOptions = {},
): CliState {
  const directory = stateDirectory(config, io.cwd);
  const redisConfig = config.state.redis;
  const agentId = options.agentId ?? cliAgentId(io);
  const connection =
    redisConfig === undefined
      ? undefined
      : redisConnectionFor(redisConfig, { clientName: agentClientName(agentId), logger: options.logger ?? silentLogger });
  const run: CliStateRun = {
    config,
    io,
    directory,
    agentId,
    connection,
    description: connection === undefined ? `the state directory ${directory}` : `${connection.describe()} (prefix ${connection.prefix})`,
    connecting: undefined,
    opened: undefined,
    closing: undefined,
  };
  const state: CliState = {
    kind: connection === undefined ? 'file' : 'redis',
    description: run.description,
    hooks: (hookOptions = {}) =>
      configuredVoteHooks(config, { ...hookOptions, ...(connection === undefined ? {} : { redis: connection }) }),
    store: () => openStore(run),
    async reader() {
      if (connection === undefined) return createStateFileReader(directory);
      // The Redis store reads without open(); nothing is written.
      return createRedisStore({ connection: await connected(run) });
    },
    ledger: (ledgerOptions = {}) => ledgerOf(run, ledgerOptions),
    deadLetters: () => deadLettersOf(run),
    redis: async () => (connection === undefined ? undefined : connected(run)),
    close: () => closeState(run),
    [Symbol.asyncDispose]: () => state.close(),
  };
  return state;
}
