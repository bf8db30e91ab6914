/**
 * `listing-agent/commands`: slash commands as the listing shows them: sources (Discord REST, a
 * discord.js Client, a file, a list), normalisation and hashing, the diff, and the sync that sends
 * only a change.
 *
 * @packageDocumentation
 */
export type {
  CommandSource,
  CommandLoad,
  CommandDiff,
  CommandChange,
  CommandSyncResult,
  CommandSyncFailure,
  ListingCommand,
} from '../commands/types.js';
export { normaliseCommands, hashCommands } from '../commands/normalise.js';
export { diffCommands, formatDiff } from '../commands/diff.js';
export { planCommandSync, syncCommands, COMMANDS_STATE_KEY, CommandSourceError } from '../commands/sync.js';
export type { CommandSyncPlan, LastCommandSync } from '../commands/sync.js';
export { createDiscordCommandsSource } from '../commands/sources/discord-rest.js';
export { createClientCommandsSource } from '../commands/sources/discord-client.js';
export { createErisCommandsSource, createOceanicCommandsSource } from '../commands/sources/eris-oceanic.js';
export { createFileCommandsSource } from '../commands/sources/file.js';
export { createStaticCommandsSource } from '../commands/sources/static.js';

// The types that the signatures above name, so that a bot can name them too.
export type { NormalisedCommands } from '../commands/normalise.js';
export type { ApplicationCommandLike, CommandCollectionLike, CommandsClientLike } from '../commands/sources/discord-client.js';
export type { DiscordCommandsSourceOptions } from '../commands/sources/discord-rest.js';
export type { ErisCommandsClientLike, OceanicCommandsClientLike } from '../commands/sources/eris-oceanic.js';
export type { FileCommandsSourceOptions } from '../commands/sources/file.js';
export type { CommandSyncDeps } from '../commands/sync.js';
export type { CommandsEvents, ListingCommandChoice, ListingCommandOption, ListingLocalizations } from '../commands/types.js';
