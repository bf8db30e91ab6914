import { readFile } from 'node:fs/promises';
import type { ListingAgentConfig } from '../config/schema.js';
import { secretValues } from '../config/secrets.js';
import { stateDirectory } from '../config/state-directory.js';
import { errnoCode, fsReason, StoreError } from '../store/errors.js';
import type { WriteHealth } from '../store/write-health.js';
import { HOOK_DEFAULTS } from './hooks/errors.js';
import { hooksFromConfig, type HooksFromConfigOptions } from './hooks/index.js';
import { createInProcessHook, IN_PROCESS_HOOK_NAME, type VoteListener } from './hooks/in-process.js';
import { replayJournal } from './journal.js';
import { createFileVoteLedger } from './ledger-file.js';
import { createMemoryVoteLedger } from './ledger-memory.js';
import { createRedisVoteLedger } from './ledger-redis.js';
import { createLedgerState } from './ledger-state.js';
import { ListingAgentError } from '../errors.js';
import type { RedisConnection } from '../redis/connection.js';
import { createStreamHook, STREAM_HOOK_NAME } from './stream.js';
import type { DeadLetter, VoteHook, VoteLedger } from './types.js';

/**
 * The votes parts as the configuration describes them, in one place for the agent and the CLI:
 * which ledger, which hooks, and where the dead letters are read.
 */

/**
 * Where the vote ledger lives: the journal in the state directory, memory (nothing survives), or
 * Redis (`state.redis`: one ledger for every agent of the bot).
 */
export type VoteLedgerKind = 'file' | 'memory' | 'redis';

/** Options of {@link votesLedgerFor}. */
export interface VotesLedgerForOptions {
  /** Resolves a relative `state.directory`. Default: the process's working directory. */
  cwd?: string;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /** For the `redis` kind: the agent's Redis connection (started by the agent) and its agent ID. Default: none. */
  redis?: { connection: RedisConnection; agentId: string; adoptOrphans?: boolean };
  /** For the `file` kind: the file store's write health, shared when it is of the same directory. Default: the ledger's own. */
  writeHealth?: WriteHealth;
}


/**
 * The vote ledger `config` asks for: `file` is `<state.directory>/votes.journal` (the embedded
 * and daemon default), `memory` keeps nothing across restarts, `redis` is shared by every agent
 * on `state.redis` (heartbeat and orphan sweep every `state.redis.lease`; needs `options.redis`).
 * Keys are kept `votes.keepKeysFor` past their vote's expiry in every kind.
 */
export function votesLedgerFor(config: ListingAgentConfig, kind: VoteLedgerKind, options: VotesLedgerForOptions = {}): VoteLedger {
  const keepKeysForMs = config.votes.keepKeysFor;
  if (kind === 'memory') return createMemoryVoteLedger({ keepKeysForMs });
  if (kind === 'redis') {
    if (config.state.redis === undefined || options.redis === undefined) {
      const needs = "the redis vote ledger needs state.redis in the config and the agent's Redis connection and agent ID (options.redis)";
      throw new ListingAgentError('votes_ledger_redis', needs);
    }
    return createRedisVoteLedger({
      connection: options.redis.connection,
      agentId: options.redis.agentId,
      ...(options.redis.adoptOrphans === undefined ? {} : { adoptOrphans: options.redis.adoptOrphans }),
      leaseMs: config.state.redis.lease,
      keepKeysForMs,
      ...(options.now ? { now: options.now } : {}),
    });
  }
  return createFileVoteLedger({
    directory: stateDirectory(config, options.cwd),
    keepKeysForMs,
    ...(options.now ? { now: options.now } : {}),
    ...(options.writeHealth ? { writeHealth: options.writeHealth } : {}),
  });
}

/** The names `votes.hooks` may not take: the in-process hook's (or `reserved`), and the reward stream's when it is on. */
export function reservedVoteHookNames(config: ListingAgentConfig, reserved: readonly string[] = [IN_PROCESS_HOOK_NAME]): string[] {
  return [...reserved, ...(config.votes.stream.enabled ? [STREAM_HOOK_NAME] : [])];
}

/**
 * `options` with every credential form of `config` added to `secrets`: no hook's error text (a log
 * line, a dead letter, the status page) then carries a credential of the configuration, whatever
 * an answer or a command's output repeats. For the reward hooks and the reminders'.
 */
export function withConfigSecrets<T extends HooksFromConfigOptions>(config: ListingAgentConfig, options: T): T {
  return { ...options, secrets: [...(options.secrets ?? []), ...secretValues(config)] };
}

/** Options of {@link configuredVoteHooks}. */
export interface ConfiguredVoteHooksOptions extends HooksFromConfigOptions {
  /**
   * The agent's `vote` listeners (read at each call). Given: the in-process hook `vote-event`
   * comes first, before the configured hooks. Default: none, no in-process hook (the CLI).
   */
  listeners?: () => readonly VoteListener[];
  /** The agent's Redis connection (`state.redis`): needed when `votes.stream.enabled`. Default: none. */
  redis?: RedisConnection;
}

/**
 * Every reward hook of `config`: the in-process hook over the `vote` listeners when `listeners`
 * is given, then `votes.hooks` in order, then the reward stream hook `redis-stream` when
 * `votes.stream.enabled` (its markers kept `votes.keepKeysFor` past each vote's expiry, as the
 * ledger keeps the key). Throws `ValidationError` for colliding hook names, and
 * `ListingAgentError` (code `votes_stream`) when the stream is enabled but no `redis` is given.
 */
export function configuredVoteHooks(config: ListingAgentConfig, options: ConfiguredVoteHooksOptions = {}): VoteHook[] {
  const { listeners, redis, ...hookOptions } = options;
  const stream = config.votes.stream;
  const reservedNames = reservedVoteHookNames(config, hookOptions.reservedNames);
  const hooks = hooksFromConfig(config.votes.hooks, withConfigSecrets(config, { ...hookOptions, reservedNames }));
  if (stream.enabled) {
    if (redis === undefined) {
      throw new ListingAgentError(
        'votes_stream',
        'votes.stream is enabled but no Redis connection was given: ' +
          'the reward stream lives in state.redis (set state.redis.url, LISTING_AGENT_STATE_REDIS_URL)',
      );
    }
    const markerTtlMs = config.votes.keepKeysFor;
    hooks.push(createStreamHook({ connection: redis, key: stream.key, maxLength: stream.maxLength, markerTtlMs }));
  }
  if (listeners === undefined) return hooks;
  return [createInProcessHook({ name: IN_PROCESS_HOOK_NAME, listeners, retries: HOOK_DEFAULTS.retries }), ...hooks];
}

/** Why a votes capability does not start with no hook at all: its votes would be marked done with nobody rewarding them. */
const NO_VOTE_HOOK =
  'nothing receives the votes: add a reward hook to votes.hooks, set votes.stream.enabled, ' +
  "or attach a listener with agent.on('vote', ...) before the agent starts";

/**
 * The reward hooks a votes capability runs: `given` (hooks made in code), else
 * {@link configuredVoteHooks} with the in-process hook only when `listeners` has one now (the
 * agent's `vote` event takes part when it has a listener as the votes start). Throws
 * `ListingAgentError` (code `votes_no_hook`) when that leaves none: no vote is marked rewarded
 * without a hook receiving it.
 */
export function rewardHooks(
  config: ListingAgentConfig,
  given: readonly VoteHook[] | undefined,
  options: ConfiguredVoteHooksOptions = {},
): readonly VoteHook[] {
  const { listeners, ...rest } = options;
  const hooks = given ?? configuredVoteHooks(config, listeners !== undefined && listeners().length > 0 ? { ...rest, listeners } : rest);
  if (hooks.length === 0) throw new ListingAgentError('votes_no_hook', NO_VOTE_HOOK);
  return hooks;
}

/** What {@link readDeadLetters} found. */
export interface DeadLetterReading {
  /** The journal read. */
  path: string;
  /** False when there is no journal yet (no vote was ever recorded there). */
  exists: boolean;
  letters: DeadLetter[];
  /** Damaged lines skipped (the agent repairs them on its next start). */
  corruptLines: number;
}

/**
 * The dead letters of the file ledger in `directory`, read without opening the ledger or taking
 * the state lock, so it works beside a running agent: the journal is only ever appended to or
 * replaced by a rename, so a read sees a whole generation, with at most a torn last line, which is
 * left out as the ledger itself would.
 */
export async function readDeadLetters(directory: string): Promise<DeadLetterReading> {
  // The ledger object is never opened: it only names its journal, so the file name lives in one place.
  const { path } = createFileVoteLedger({ directory });
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return { path, exists: false, letters: [], corruptLines: 0 };
    throw new StoreError(`cannot read ${path}: ${fsReason(error)}`, path, { cause: error });
  }
  // Nothing is forgotten in a read: keep-keys only matters to a ledger that writes.
  const state = createLedgerState(Number.MAX_SAFE_INTEGER);
  const replay = replayJournal(text, state.apply);
  if (replay.header.kind === 'newer') {
    const newer = `${path} was written by a newer listing-agent (journal version ${replay.header.version})`;
    throw new StoreError(`${newer}; use that version to read it`, path);
  }
  return { path, exists: true, letters: state.letters(), corruptLines: replay.corruptCount };
}
