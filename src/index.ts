/**
 * listing-agent: keeps a Discord bot's listing true and pays its voters.
 *
 * ```ts
 * import { createListingAgent } from 'listing-agent';
 * const agent = createListingAgent({ token: process.env.LISTING_AGENT_SERVICE_TOKEN!, discord: client });
 * agent.on('vote', async (vote) => reward(vote.platformId));
 * ```
 *
 * The root holds what a bot owner uses; the parts live under subpaths: `listing-agent/client`,
 * `/webhooks`, `/stats`, `/votes`, `/commands`, `/redis`, `/config`, `/runtime`, `/emulator`.
 *
 * @packageDocumentation
 */

// The agent.
export { createListingAgent, ListingAgent } from './agent/agent.js';
export type { ListingAgentOptions, AgentConfigInput, AgentPhase } from './agent/agent.js';
export type { AgentEvents } from './agent/events.js';
export type { AgentLogger } from './log/agent-logger.js';
export type { CountSource } from './stats/source.js';

// Configuration.
export { loadConfig } from './config/load.js';
export type { LoadConfigOptions, LoadedConfig } from './config/loader.js';
export type { ListingAgentConfig, ListingAgentConfigInput } from './config/schema.js';

// What a reward hook gets.
export type { Vote, VoteHook, HookCallContext } from './votes/types.js';

// The errors to catch: every error the agent throws is a ListingAgentError.
export { ListingAgentError, ValidationError } from './errors.js';
export { ConfigError } from './config/errors.js';
export { ListenError } from './http/listen-error.js';
