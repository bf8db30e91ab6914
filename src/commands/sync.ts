import type { AgentLogger } from '../log/agent-logger.js';
import type { ListingClient } from '../api/client.js';
import { ValidationError, ListingAgentError } from '../errors.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { StateStore } from '../store/types.js';
import { diffCommands } from './diff.js';
import { normaliseCommands, type ListingCommand } from './normalise.js';
import type { CommandDiff, CommandSource, CommandSyncResult } from './types.js';

/** The state store key of the last successful sync. */
export const COMMANDS_STATE_KEY = 'commands:lastSync';

/** What the state store keeps of the last successful sync. */
export interface LastCommandSync {
  hash: string;
  commands: ListingCommand[];
  /** ISO 8601. */
  syncedAt: string;
}

/** A command source could not answer (Discord unreachable, the file missing). */
export class CommandSourceError extends ListingAgentError {
  constructor(description: string, reason: string) {
    super('commands_source', `cannot read the commands from ${description}: ${reason}`);
  }
}

/** What {@link planCommandSync} found: the normalised set, its hash, and how it differs. */
export interface CommandSyncPlan {
  commands: ListingCommand[];
  hash: string;
  last: LastCommandSync | undefined;
  diff: CommandDiff;
  /** True when the hash equals the last successful sync's. */
  unchanged: boolean;
}

/**
 * Loads, normalises and validates the commands, and compares them with the last successful sync.
 * Throws `CommandSourceError` when the source cannot answer and a request `ValidationError`
 * naming the command and field when a command breaks the listing's rules (nothing is sent).
 */
export async function planCommandSync(
  source: CommandSource,
  store: Pick<StateStore, 'get'>,
  signal?: AbortSignal,
): Promise<CommandSyncPlan> {
  const loaded = await source.load(signal);
  if (!loaded.ok) throw new CommandSourceError(source.description, loaded.reason);
  const normalised = normaliseCommands(loaded.commands);
  if (!normalised.ok) throw new ValidationError('request', `the commands from ${source.description}`, normalised.issues);
  const last = await store.get<LastCommandSync>(COMMANDS_STATE_KEY);
  return {
    commands: normalised.commands,
    hash: normalised.hash,
    last,
    diff: diffCommands(last?.commands, normalised.commands),
    unchanged: last?.hash === normalised.hash,
  };
}

/** What {@link syncCommands} needs. */
export interface CommandSyncDeps {
  source: CommandSource;
  client: ListingClient;
  store: StateStore;
  logger: AgentLogger;
  metrics?: AgentMetrics;
  now: () => number;
}

/**
 * One sync: the commands go to `PUT /projects/@me/commands` only when their hash differs from
 * the last successful sync (or `force`), and the new hash is recorded durably afterwards. A
 * project that is not a chat-platform bot is skipped with one clear log line.
 */
export async function syncCommands(
  deps: CommandSyncDeps,
  options: { reason: CommandSyncResult['reason']; force?: boolean; signal?: AbortSignal },
): Promise<CommandSyncResult> {
  const plan = await planCommandSync(deps.source, deps.store, options.signal);
  const result = (skipped: boolean): CommandSyncResult => ({
    count: plan.commands.length,
    skipped,
    hash: plan.hash,
    diff: plan.diff,
    reason: options.reason,
  });
  if (plan.unchanged && !options.force) {
    deps.logger.debug({ hash: plan.hash, count: plan.commands.length }, 'commands unchanged since the last sync: nothing sent');
    deps.metrics?.commandSyncs.inc({ result: 'unchanged' });
    return result(true);
  }
  await deps.client.commands.set(plan.commands, undefined, options.signal ? { signal: options.signal } : {});
  const record: LastCommandSync = { hash: plan.hash, commands: plan.commands, syncedAt: new Date(deps.now()).toISOString() };
  await deps.store.set(COMMANDS_STATE_KEY, record, { durable: true });
  deps.metrics?.commandSyncs.inc({ result: 'synced' });
  deps.metrics?.markSuccess('commands', deps.now());
  deps.logger.info(
    { count: plan.commands.length, added: plan.diff.added.length, removed: plan.diff.removed.length, changed: plan.diff.changed.length },
    'commands synced to the listing',
  );
  return result(false);
}
