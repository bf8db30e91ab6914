import type { EventEmitter } from 'node:events';
import type { ConfigError } from '../config/errors.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { ListingAgentError } from '../errors.js';
import type { AgentLogger } from '../log/agent-logger.js';
import { configError, startInputs } from './agent-config.js';
import type { ListingAgentOptions } from './options.js';
import { startProblems, votesReachPipeline } from './start-problems.js';

/*
 * An embedded agent's reward listeners (D1 of issue 32): the `vote` event is a reward hook only when
 * it has a listener as the agent starts. With no listener then and no other hook, the start is
 * refused; a listener attached later to an agent that started without one gets nothing, and is
 * told so (an `error`, a warn line), rather than left waiting for votes that went nowhere.
 */

/** Where {@link listenersAtStart} tells of a listener attached too late. */
export interface LateListenerReport {
  logger: AgentLogger;
  reportError(error: unknown): void;
}

/**
 * As the agent starts: the `ConfigError` that refuses the start when votes (or reminders) reach
 * the pipeline with nothing to receive them, counting the listeners attached now; else undefined,
 * and from now on a `vote` (`reminder`) listener attached to an agent that started without one
 * is told that it gets nothing.
 */
export function listenersAtStart(
  agent: EventEmitter,
  report: LateListenerReport,
  config: ListingAgentConfig,
  options: ListingAgentOptions,
): ConfigError | undefined {
  // The daemon has no listener: its votes' hooks were checked as it was made.
  if (options.mode === 'daemon' || options.capabilities !== undefined || !votesReachPipeline(config)) return undefined;
  const listeners = { vote: agent.listenerCount('vote'), reminder: agent.listenerCount('reminder') };
  const problems = startProblems(config, startInputs(options, listeners));
  if (problems.length > 0) return configError(problems, options.mode ?? 'embedded');
  const unheard = new Set<string>();
  if (listeners.vote === 0 && options.votes?.hooks === undefined) unheard.add('vote');
  if (listeners.reminder === 0 && config.votes.reminders.enabled) unheard.add('reminder');
  if (unheard.size > 0) agent.on('newListener', (event: string | symbol) => tellLate(report, unheard, event));
  return undefined;
}

/** Tells, once per event, that a listener attached now gets nothing. */
function tellLate(report: LateListenerReport, unheard: Set<string>, event: string | symbol): void {
  if (typeof event !== 'string' || !unheard.delete(event)) return;
  const error = new ListingAgentError(
    'late_listener',
    `a ${event} listener was attached after the agent started without one: it gets ` +
      `no ${event}; attach it before the agent starts (right after createListingAgent, before start())`,
  );
  report.logger.warn({ event }, error.message);
  report.reportError(error);
}
