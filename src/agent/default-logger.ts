import type { ListingAgentConfig } from '../config/schema.js';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { createConsoleLogger } from '../runtime/console-logger.js';
import { configSecrets } from './lazy.js';

/** The logger an agent writes to, and what writes its last summary of repeated lines at the stop. */
export interface AgentLogging {
  logger: AgentLogger;
  flush(): void;
}

/**
 * The `logger` option made into the agent's logger: the one given; `false`, none; absent, the
 * quiet stderr logger (runtime/console-logger.ts: warnings, errors, and the ready and first-post
 * lines), which scrubs the config's secrets from every line.
 */
export function agentLogging(option: AgentLogger | false | undefined, config: ListingAgentConfig, now: () => number): AgentLogging {
  if (option === false) return { logger: silentLogger, flush: () => undefined };
  if (option !== undefined) return { logger: option, flush: () => undefined };
  const logger = createConsoleLogger({ now, secrets: configSecrets.get().secretValues(config) });
  return { logger, flush: () => logger.flush() };
}
