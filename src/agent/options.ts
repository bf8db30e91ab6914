import type { Registry } from 'prom-client';
import type { ListingClient } from '../api/client.js';
import type { TransportOptions } from '../api/transport.js';
import type { ListingAgentConfigInput } from '../config/schema.js';
import type { CountSource } from '../stats/source.js';
import type { StateStore } from '../store/types.js';
import type { VotesCapabilityOptions } from '../votes/capability.js';
import type { WebhooksCapabilityOptions } from '../webhooks/capability.js';
import type { Capability } from '../runtime/capability.js';
import type { AgentLogger } from '../log/agent-logger.js';

/**
 * The configuration as {@link createListingAgent} takes it: the config file's fields, with
 * `service` (and its `token`) optional since the `token` option can carry the token.
 */
export type AgentConfigInput = Omit<ListingAgentConfigInput, 'service'> & { service?: Partial<ListingAgentConfigInput['service']> };

/** Options of {@link createListingAgent}. */
export interface ListingAgentOptions {
  /**
   * The configuration, as written (validated here; defaults filled in): the fields of the config
   * file. Default `{}`: then `token` is the one setting needed.
   */
  config?: AgentConfigInput;
  /** The project token: shorthand for `config.service.token` (give it once). */
  token?: string;
  /**
   * A pino-compatible logger, or `false` for none. Default: the agent writes its warnings and
   * errors to stderr (`console.error`), one plain line each beginning `listing-agent:` (a line
   * repeated within a minute is written once, then summarised), and one line when it is ready and
   * one at its first stats post.
   */
  logger?: AgentLogger | false;
  /** The state store. Default: the file store in `config.state.directory`. */
  store?: StateStore;
  /** The service client. Default: one made from `config.service`. */
  client?: ListingClient;
  /** Transport options for the default client (dispatcher, retry, clock). */
  transport?: TransportOptions;
  /** The Prometheus registry `/metrics` serves. Default: a new one for this agent. */
  registry?: Registry;
  /**
   * The bot, for `stats.source: embedded`: a discord.js `Client`, `ShardingManager`, a
   * discord-hybrid-sharding `ClusterManager`, an Eris `Client` (0.18) or an Oceanic.js `Client`
   * (1.x), detected by shape: none of these libraries is a dependency, and any object is accepted
   * here without a cast (one that is none of them is refused when the stats start). Given, it
   * turns `stats.enabled` on unless the config says otherwise, and the agent follows the bot (see
   * `autoStart`); with `commands.enabled`, a Client's registered global commands are synced.
   */
  discord?: unknown;
  /**
   * Whether the agent starts by itself. Default: true when `discord` is given: a discord.js Client
   * starts the agent once it is ready (at once if it already is) and its `destroy()` stops the
   * agent first; an Eris or Oceanic.js Client starts it at `ready` (at once if it already is) and
   * a `disconnect()` that does not reconnect stops it (Eris `disconnect({ reconnect: false })`,
   * Oceanic.js `disconnect(false)`); a ShardingManager or ClusterManager starts it at once. A
   * start that fails is logged and emitted as `error`. False: call `start()` and `stop()` yourself.
   */
  autoStart?: boolean;
  /** Counts from your own code instead (any {@link CountSource}); wins over `discord`. */
  countSource?: CountSource;
  /** Slash commands (objects or discord.js builders) for `commands.enabled`; win over `commands.source`. */
  commands?: readonly unknown[];
  /**
   * Options of the votes capability (`votes.enabled`): the ledger (default `file`, the journal in
   * `state.directory`; `memory` when `store` is a memory store), how exec and http hooks are made
   * (`hookOptions.env`: the exec hooks' base environment, default empty), test seams.
   */
  votes?: VotesCapabilityOptions;
  /**
   * Options of the webhooks capability (`webhooks.enabled`): receiver tuning (timeouts, limits),
   * the secret file. It feeds the votes capability's pipeline; with `votes.enabled` off, the
   * agent runs that capability without polling, from the same `votes` options (ledger, hooks).
   */
  webhooks?: Omit<WebhooksCapabilityOptions, 'sharedPipeline'>;
  /** The capabilities to run. Default: those the config enables. */
  capabilities?: Capability[];
  /** Current time in epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Waits before retrying the service check after a failure. Default 5 s, doubling to 5 min. */
  reconnectDelaysMs?: readonly number[];
  /**
   * Where `service.token` comes from, in words, for the message when the service refuses it (the
   * daemon names the config file or the `LISTING_AGENT_SERVICE_TOKEN` variable). Never the token.
   * Default: `the configuration given to createListingAgent`.
   */
  tokenSource?: string;
  /**
   * This agent's ID in the leader lease, its pending votes and `/readyz`, with `state.redis`.
   * Default: `state.redis.agentId`, else `<hostname>/<8 random hex digits>` (the daemon passes
   * `<hostname>/<pid>`: the library never reads `process`).
   */
  agentId?: string;
  /**
   * How the agent runs, as the status page says: `embedded` (in a bot's process, or any code that
   * made it) or `daemon` (`listing-agent run` passes it). Default `embedded`. An embedded agent's
   * messages name the setting to change by its config path (`health.listen`), the daemon's by its
   * `LISTING_AGENT_*` variable too; an embedded agent whose health port is taken runs on without
   * it, the daemon refuses to start.
   */
  mode?: 'embedded' | 'daemon';
}

/**
 * What an agent has besides its configuration, as far as what it can run goes (start-problems.ts):
 * the daemon (`listing-agent run`, `config check`, `doctor`) has no bot, no code and no listener;
 * an embedded agent has what createListingAgent was given.
 */
export interface StartInputs {
  /** Whose words the problems are in, and what there is: `daemon` (no bot, no listener) or `embedded`. */
  mode: 'embedded' | 'daemon';
  /** The bot given as `discord`. */
  discord?: unknown;
  /** Counts of the bot's own code (`countSource`). */
  countSource?: boolean;
  /** Commands given in code (`commands`). */
  commands?: boolean;
  /** Reward hooks made in code (the `votes.hooks` option): how many; they replace the configured ones. */
  voteHooks?: number;
  /** The agent's `vote` and `reminder` listeners as it starts; undefined while it is made (they come later). */
  listeners?: { vote: number; reminder: number };
}

/** Where a stopped or failing agent stands. */
export type AgentPhase = 'idle' | 'starting' | 'connecting' | 'running' | 'stopping' | 'stopped';
