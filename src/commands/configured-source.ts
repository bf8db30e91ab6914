import { decodeProjectToken } from '../contract/project-token.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { ValidationError, type FieldIssue } from '../errors.js';
import { isClusterManager, isDiscordClient, isErisClient, isOceanicClient, isShardingManager } from '../discord/shapes.js';
import { createClientCommandsSource, type CommandsClientLike } from './sources/discord-client.js';
import {
  createErisCommandsSource,
  createOceanicCommandsSource,
  type ErisCommandsClientLike,
  type OceanicCommandsClientLike,
} from './sources/eris-oceanic.js';
import { createDiscordCommandsSource } from './sources/discord-rest.js';
import { createFileCommandsSource } from './sources/file.js';
import { createStaticCommandsSource } from './sources/static.js';
import type { CommandSource } from './types.js';
import type { AgentMode } from '../config/setting-names.js';

/** What besides the config decides the commands source. */
export interface CommandsSourceInputs {
  /** Commands or builders passed in code: they win over the config. */
  commands?: readonly unknown[];
  /** The bot object given to the agent; a discord.js, Eris or Oceanic.js Client is asked directly. */
  discord?: unknown;
  /** Where a relative `commands.file` is found. Default: the process's working directory. */
  cwd?: string;
  /** Whose words a refusal is in ({@link commandsSourceProblem}). Default `embedded`; the CLI's commands pass `daemon`. */
  mode?: AgentMode;
}

/**
 * Why `config.commands` has no source to read the commands from, or undefined when it has one:
 * `commands.source` discord with no commands in code, no discord.js, Eris or Oceanic.js Client to
 * ask, and no `discord.token`. `inputs.mode` says whose words: an embedded agent's (the options of
 * createListingAgent) or the daemon's and the CLI's (no bot: the variables to set).
 */
export function commandsSourceProblem(config: ListingAgentConfig, inputs: Omit<CommandsSourceInputs, 'cwd'>): FieldIssue | undefined {
  if (inputs.commands !== undefined || config.commands.source === 'file' || config.discord.token !== undefined) return undefined;
  const bot = inputs.discord;
  if (bot !== undefined && (isDiscordClient(bot) || isErisClient(bot) || isOceanicClient(bot))) return undefined;
  if (inputs.mode === 'daemon') {
    return {
      path: 'commands.source',
      message:
        "is discord, but outside the bot there is no client to read the commands from: set discord.token (LISTING_AGENT_DISCORD_TOKEN) " +
          "to read them from Discord's API, or set commands.source to file with commands.file (LISTING_AGENT_COMMANDS_FILE)",
    };
  }
  return {
    path: 'commands.source',
    message:
      managerWithoutCommands(bot) ??
      'is discord, but there is no way to read the commands: pass your discord.js, Eris or Oceanic.js Client as `discord` to ' +
        'createListingAgent, set discord.token, or use source file',
  };
}

/**
 * The command source the configuration names: commands passed in code; else `file`; else
 * `discord` through the given discord.js, Eris or Oceanic.js Client, or Discord's API with `discord.token` (the
 * application ID from `discord.applicationId` or the project token). Throws `ValidationError`
 * (subject `config`) when none can be built, saying what to set.
 */
export function commandsSourceFor(config: ListingAgentConfig, inputs: CommandsSourceInputs = {}): CommandSource {
  if (inputs.commands !== undefined) return createStaticCommandsSource([...inputs.commands]);
  if (config.commands.source === 'file') {
    return createFileCommandsSource({ path: config.commands.file!, ...(inputs.cwd !== undefined ? { cwd: inputs.cwd } : {}) });
  }
  const bot = inputs.discord;
  if (bot !== undefined) {
    if (isDiscordClient(bot)) return createClientCommandsSource(bot as unknown as CommandsClientLike);
    if (isErisClient(bot)) return createErisCommandsSource(bot as unknown as ErisCommandsClientLike);
    if (isOceanicClient(bot)) return createOceanicCommandsSource(bot as unknown as OceanicCommandsClientLike);
  }
  const token = config.discord.token;
  if (token === undefined) throw new ValidationError('config', 'the configuration', [commandsSourceProblem(config, inputs)!]);
  const fromToken = decodeProjectToken(config.service.token);
  const applicationId = config.discord.applicationId ?? (fromToken.ok ? fromToken.payload.id : undefined);
  return createDiscordCommandsSource({
    token,
    apiBaseUrl: config.discord.apiBaseUrl,
    ...(applicationId !== undefined ? { applicationId } : {}),
    ...(inputs.mode ? { mode: inputs.mode } : {}),
  });
}

/**
 * What to do when the bot given is a ShardingManager or ClusterManager: the manager's process
 * runs no Client, so it has no command cache; the commands are passed in code there (the
 * embedded agent's own words: config paths, no variable). Undefined for any other bot.
 */
function managerWithoutCommands(bot: unknown): string | undefined {
  const manager = isShardingManager(bot) ? 'ShardingManager' : isClusterManager(bot) ? 'ClusterManager' : undefined;
  if (manager === undefined) return undefined;
  return (
    `is discord, but ` +
      `a ${manager} has no command cache to read: pass the commands your bot registers to createListingAgent in the manager's process ` +
    "as `commands: [...]` (objects or discord.js builders), set discord.token to read them from Discord's API, or use source file"
  );
}
