import type { ListingAgentConfig } from '../config/schema.js';
import type { FieldIssue } from '../errors.js';
import { formatAddress, type ListenAddress } from '../http/listen-error.js';
import { commandsCapabilities, votesCapabilities } from './lazy.js';
import type { StartInputs } from './options.js';

/*
 * Everything an agent would refuse beyond the schema, found from the configuration and what the
 * agent is given (StartInputs), before anything starts: one list for createListingAgent (and an
 * embedded agent's start), `listing-agent run`, `config check` and `doctor`, in the same words
 * (an embedded agent's leave out the LISTING_AGENT_* variables it does not read). Each part's
 * checks are loaded only when the configuration enables it (agent/lazy.ts).
 */

/** Whether votes reach the vote pipeline: polled from the cursor, or received as signed deliveries. */
export function votesReachPipeline(config: ListingAgentConfig): boolean {
  return config.votes.enabled || config.webhooks.enabled;
}

/** `stats.source` embedded with nothing to count: no bot given (the daemon never has one) and no `countSource`. */
function statsProblems(config: ListingAgentConfig, inputs: StartInputs): FieldIssue[] {
  const { stats } = config;
  if (!stats.enabled || stats.source !== 'embedded' || inputs.countSource || inputs.discord !== undefined) return [];
  const message =
    inputs.mode === 'daemon'
      ? 'is embedded (the default), but outside the bot there are no counts to read: set stats.source (LISTING_AGENT_STATS_SOURCE) to ' +
        'discord-rest (with discord.token), push or redis; embedded counts come only from an agent made inside the bot with ' +
        'createListingAgent'
      : 'is embedded, but no bot was given: pass your discord.js Client, ShardingManager or ClusterManager, or your Eris or Oceanic.js ' +
        'Client, as `discord` to createListingAgent (or counts of your own as `countSource`), or set stats.source to discord-rest or push';
  return [{ path: 'stats.source', message }];
}

/** Whether two servers' addresses collide: one port (not 0, any free one), on one host or a wildcard. */
function collide(a: ListenAddress, b: ListenAddress): boolean {
  const wildcard = (host: string) => host === '0.0.0.0' || host === '::';
  return a.port !== 0 && a.port === b.port && (a.host === b.host || wildcard(a.host) || wildcard(b.host));
}

/** Two of the agent's servers on one address: the second cannot listen. */
function listenProblems(config: ListingAgentConfig): FieldIssue[] {
  const servers: { path: string; variable: string; address: ListenAddress }[] = [];
  if (config.health.enabled)
    servers.push({ path: 'health.listen', variable: 'LISTING_AGENT_HEALTH_LISTEN', address: config.health.listen });
  if (config.webhooks.enabled)
    servers.push({ path: 'webhooks.listen', variable: 'LISTING_AGENT_WEBHOOKS_LISTEN', address: config.webhooks.listen });
  if (config.stats.enabled && config.stats.source === 'push') {
    servers.push({ path: 'stats.push.listen', variable: 'LISTING_AGENT_STATS_PUSH_LISTEN', address: config.stats.push.listen });
  }
  return servers.flatMap((server, index) => {
    const earlier = servers.slice(0, index).find((other) => collide(other.address, server.address));
    if (earlier === undefined) return [];
    return [
      {
        path: server.path,
        message: `${formatAddress(server.address)} is where ${earlier.path} listens too: give each server a port of its own ` +
          `(${server.variable})`,
      },
    ];
  });
}

/**
 * Every problem an agent of `config`, given `inputs`, would refuse beyond the schema: stats with
 * nothing to count, commands with no source, colliding hook names, two servers on one address,
 * and (for the daemon, or an embedded agent as it starts: `inputs.listeners`) votes or reminders
 * that nothing receives. Empty when it can run.
 */
export function startProblems(config: ListingAgentConfig, inputs: StartInputs): FieldIssue[] {
  return [
    ...statsProblems(config, inputs),
    ...(config.commands.enabled ? commandsCapabilities.get().commandsProblems(config, inputs) : []),
    ...(votesReachPipeline(config) ? votesCapabilities.get().votesProblems(config, inputs) : []),
    ...listenProblems(config),
  ];
}

/** What `listing-agent run` would refuse beyond the schema (no bot, no code, no listener): {@link startProblems} of the daemon. */
export function daemonProblems(config: ListingAgentConfig): FieldIssue[] {
  return startProblems(config, { mode: 'daemon' });
}
