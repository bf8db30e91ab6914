import { createRequire } from 'node:module';
import type { ListingAgentConfigInput } from '../config/schema.js';
import type { AgentConfigInput } from './options.js';
import { ConfigError, invalidConfigSummary } from '../config/errors.js';
import { isClusterManager, isDiscordClient, isErisClient, isOceanicClient, isShardingManager } from '../discord/shapes.js';
import type { AgentLogger } from '../log/agent-logger.js';
import { errorMessage } from '../errors.js';

/*
 * Embedded mode in three lines: `createListingAgent({ token, discord: client })` posts the bot's
 * counts with nothing else written. This file holds what makes that true without touching
 * `process`: the config the shorthand options stand for, and the agent following the bot's life
 * (start once the client is ready, stop when it is destroyed or disconnected for good).
 */

/** The shorthand options {@link configWithShorthands} reads. */
export interface EmbeddedShorthands {
  config?: AgentConfigInput | undefined;
  token?: string | undefined;
  discord?: unknown;
}

/**
 * The configuration an agent runs with: `config` (default `{}`), with `token` as
 * `service.token`, and, when a bot is given as `discord`, `stats.enabled` on unless the config
 * says otherwise (counting the bot's servers is what an embedded agent is for). Throws
 * `ConfigError` when the token is given twice with two values.
 */
export function configWithShorthands(options: EmbeddedShorthands): ListingAgentConfigInput {
  const config: AgentConfigInput = options.config ?? {};
  let service = config.service;
  if (options.token !== undefined) {
    const inConfig = service?.token;
    if (inConfig !== undefined && inConfig !== options.token) {
      const problems = [
        { path: 'token', message: 'and config.service.token are both given, with different values: give the project token once' },
      ];
      throw new ConfigError('invalid', invalidConfigSummary(problems), problems);
    }
    service = { ...service, token: options.token };
  }
  const stats = options.discord !== undefined && config.stats?.enabled === undefined ? { ...config.stats, enabled: true } : config.stats;
  return { ...config, ...(service !== undefined ? { service } : {}), ...(stats !== undefined ? { stats } : {}) } as ListingAgentConfigInput;
}

/** What {@link followBot} drives: the agent's own start and stop. */
export interface FollowedAgent {
  /** `idle` until started; a stop before the bot is ready means no start. */
  readonly phase: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  once(event: 'stopped', listener: () => void): unknown;
}

/** A discord.js Client as far as following it goes. */
interface ClientLife {
  isReady?(): boolean;
  once(event: string, listener: () => void): unknown;
  off(event: string, listener: () => void): unknown;
  destroy(...args: unknown[]): unknown;
}

/**
 * The event a discord.js Client emits when ready: `Events.ClientReady` of the bot's discord.js
 * (`clientReady` since 14.22, `ready` before). Listening to the old name on a new discord.js would
 * print a deprecation warning in the bot's output, so the name is read, not guessed.
 *
 * With `require()`, which returns the copy the bot has loaded already: an `import()` of CommonJS
 * discord.js would make Node read its source and that of every package it re-exports
 * (@discordjs/builders, rest, ws...) to list their export names, and keep those texts for the
 * process's life, inside the bot.
 */
function clientReadyEvent(): string {
  try {
    const discord = createRequire(import.meta.url)('discord.js') as { Events?: { ClientReady?: unknown } };
    const name = discord.Events?.ClientReady;
    return typeof name === 'string' ? name : 'clientReady';
  } catch {
    return 'clientReady';
  }
}

/** An Eris or Oceanic.js Client as far as following it goes. */
interface GatewayClientLife {
  /** Both set it once every shard is ready (and back to false once they all disconnect). */
  ready?: boolean;
  once(event: 'ready', listener: () => void): unknown;
  removeListener(event: 'ready', listener: () => void): unknown;
  disconnect(...args: unknown[]): unknown;
}

/**
 * Whether a `disconnect(...args)` call ends the client for good (no reconnect), which is what
 * stops the agent; a disconnect that reconnects keeps it running (its counts read not ready
 * until the shards are back, as for a discord.js Client that reconnects).
 *
 * - Eris `disconnect({ reconnect })`: `false` or absent ends it; `true` (the bot reconnects later
 *   by itself) and `'auto'` do not.
 * - Oceanic.js `disconnect(reconnect = shards.options.autoReconnect)`: `false` ends it; with no
 *   argument, only when `autoReconnect` is off.
 */
function disconnectsForGood(bot: unknown, args: readonly unknown[]): boolean {
  if (isErisClient(bot)) return !(args[0] as { reconnect?: unknown } | undefined)?.reconnect;
  const reconnect =
    args[0] === undefined ? (bot as { shards?: { options?: { autoReconnect?: unknown } } }).shards?.options?.autoReconnect : args[0];
  return !reconnect;
}

/**
 * Follows an Eris or Oceanic.js Client: starts the agent at `ready` (on the next turn when it is
 * ready already), and stops it on a `disconnect()` that ends the client. Their `disconnect()` is
 * synchronous, so it stays so: the client disconnects at once and the agent stops beside it (a
 * bot that exits right after awaits `agent.stop()` first, or the agent's `stopped` event).
 */
function followGatewayClient(
  agent: FollowedAgent,
  client: GatewayClientLife,
  start: () => void,
  reportError: (error: unknown) => void,
): () => void {
  let undone = false;
  const onReady = () => start();
  const original = client.disconnect;
  const disconnect = function (this: unknown, ...args: unknown[]) {
    const final = disconnectsForGood(client, args);
    const result = original.apply(this, args);
    if (final) agent.stop().catch((error: unknown) => reportError(error));
    return result;
  };
  client.disconnect = disconnect;
  let immediate: NodeJS.Immediate | undefined;
  if (client.ready === true) immediate = setImmediate(start);
  else client.once('ready', onReady);
  const undo = () => {
    if (undone) return;
    undone = true;
    if (immediate !== undefined) clearImmediate(immediate);
    client.removeListener('ready', onReady);
    if (client.disconnect === disconnect) client.disconnect = original;
  };
  agent.once('stopped', undo);
  return undo;
}

/**
 * Makes the agent follow the bot given as `discord`:
 *
 * - a discord.js Client starts it once ready (at once when it already is), and its `destroy()`
 *   stops the agent first (the state flushed, the servers closed), then destroys the client;
 * - an Eris or Oceanic.js Client starts it at `ready`, and a `disconnect()` that does not
 *   reconnect stops it ({@link followGatewayClient});
 * - a ShardingManager or ClusterManager starts it at once (their counts wait for every shard by
 *   themselves).
 *
 * A start that fails is logged and reported, never thrown: the bot goes on. Returns what undoes it
 * (the listener removed, `destroy` or `disconnect` given back); the agent's `stopped` undoes it too.
 */
export function followBot(agent: FollowedAgent, bot: unknown, logger: AgentLogger, reportError: (error: unknown) => void): () => void {
  const start = () => {
    if (agent.phase !== 'idle') return;
    agent.start().catch((error: unknown) => {
      logger.error({ err: errorMessage(error) }, 'the agent could not start with the bot');
      reportError(error);
    });
  };
  if (isErisClient(bot) || isOceanicClient(bot)) return followGatewayClient(agent, bot as unknown as GatewayClientLife, start, reportError);
  if (isShardingManager(bot) || isClusterManager(bot) || !isDiscordClient(bot)) {
    // Next turn: the bot's code attaches its listeners (agent.on('vote', ...)) right after creating it.
    const immediate = setImmediate(start);
    return () => clearImmediate(immediate);
  }
  return followDiscordJsClient(agent, bot as unknown as ClientLife, start, reportError);
}

/** Follows a discord.js Client (see {@link followBot}). */
function followDiscordJsClient(
  agent: FollowedAgent,
  client: ClientLife,
  start: () => void,
  reportError: (error: unknown) => void,
): () => void {
  let undone = false;
  let readyEvent: string | undefined;
  const onReady = () => start();
  const original = client.destroy;
  const destroy = async function (this: unknown, ...args: unknown[]) {
    await agent.stop().catch((error: unknown) => reportError(error));
    return original.apply(this, args);
  };
  client.destroy = destroy;
  const undo = () => {
    if (undone) return;
    undone = true;
    if (readyEvent !== undefined) client.off(readyEvent, onReady);
    if (client.destroy === destroy) client.destroy = original;
  };
  agent.once('stopped', undo);
  // After this turn's code, as before: the bot attaches its listeners right after creating the agent.
  void Promise.resolve().then(() => {
    if (undone) return;
    if (client.isReady?.() === true) return start();
    readyEvent = clientReadyEvent();
    client.once(readyEvent, onReady);
  });
  return undo;
}
