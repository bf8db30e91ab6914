import { decodeProjectToken } from '../contract/project-token.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { ValidationError } from '../errors.js';
import { isClusterManager, isDiscordClient, isErisClient, isOceanicClient, isShardingManager } from '../discord/shapes.js';
import { createClientCommandsSource, type CommandsClientLike } from './sources/discord-client.js';
import { createErisCommandsSource, createOceanicCommandsSource, type ErisCommandsClientLike, type OceanicCommandsClientLike } from './sources/eris-oceanic.js';
import { createDiscordCommandsSource } from './sources/discord-rest.js';
import { createFileCommandsSource } from './sources/file.js';
import { createStaticCommandsSource } from './sources/static.js';
import type { CommandSource } from './types.js';
import { settingName, type AgentMode } from '../config/setting-names.js';

/** What besides the config decides the commands source. */
export interface CommandsSourceInputs {
  /** Commands or builders passed in code: they win over the config. */
  commands?: readonly unknown[];
  /** The bot object given to the agent; a discord.js, Eris or Oceanic.js Client is asked directly. */
  discord?: unknown;
  /** Where a relative `commands.file` is found. Default: the process's working directory. */
  cwd?: string;
  /** Whose words the messages are in: `embedded` names `discord.token` alone; default the daemon's, with its variable. */
  mode?: AgentMode;
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
  if (token === undefined) {
    throw new ValidationError('config', 'the configuration', [
      {
        path: 'commands.source',
        message:
          managerWithoutCommands(bot) ??
          `is discord, but there is no way to read the commands: pass your discord.js, Eris or Oceanic.js Client as \`discord\` to createListingAgent, set ${settingName('discord.token', inputs.mode)}, or use source file`,
      },
    ]);
  }
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
    `is discord, but a ${manager} has no command cache to read: pass the commands your bot registers to createListingAgent in the manager's process ` +
    "as `commands: [...]` (objects or discord.js builders), set discord.token to read them from Discord's API, or use source file"
  );
}
