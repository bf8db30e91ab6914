import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createListingAgent, type ListingAgent } from '../../agent/agent.js';
import { secretValues } from '../../config/mask.js';
import { printable } from '../../contract/printable.js';
import { errorMessage, ListingAgentError } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { createFileStore } from '../../store/file.js';
import { parseCommandArgs } from '../args.js';
import { loadCommandConfig } from '../command-config.js';
import { keepProcessAlive } from '../keep-alive.js';
import { daemonHookOptions } from '../hook-environment.js';
import { describeTokenSource } from '../token-source.js';
import { EXIT, UsageError, type CliIo } from '../io.js';

/** How long a graceful stop may take before `run` gives up and exits 1. */
export const STOP_DEADLINE_MS = 10_000;

/**
 * How often the event-loop delay is sampled for the `nodejs_eventloop_lag_*` metrics, ms.
 * prom-client's default (10 ms) wakes an idle daemon 100 times a second, most of
 * what the daemon spends idle. Once a second is plenty for a
 * sidecar scraped every 15 s or more.
 */
const EVENT_LOOP_MONITORING_PRECISION_MS = 1_000;

export const RUN_HELP = `Usage: listing-agent run [options]

Run the agent as a daemon (a sidecar container, a systemd service): read the configuration,
start the health server and every enabled capability, and stop gracefully on SIGTERM or SIGINT.
It runs until then, whether the service answers or not (the webhook receiver and the vote
pipeline do not wait for it; /readyz says what does).

Options:
  -c, --config FILE   the JSON config (default: LISTING_AGENT_CONFIG; without it, only
                      LISTING_AGENT_* environment variables and .env)
  -h, --help          show this help

Exit codes: 0 clean stop, 1 runtime failure (port in use, unwritable state directory, stop
deadline of ${STOP_DEADLINE_MS / 1000} s passed), 2 usage error, 78 invalid configuration (also
a Sentinel at state.redis.url).
A second signal during the stop exits at once with 130.
`;

/** `listing-agent run`: the daemon. */
export async function runRunCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('run', argv, { config: { type: 'string', short: 'c' } });
  if (values.help) {
    io.stdout(RUN_HELP);
    return EXIT.ok;
  }
  const file = values.config as string | undefined;
  if (file === '') throw new UsageError('--config needs a file path', 'run');

  // Every problem at once, the schema's and what the agent would refuse, before anything starts.
  const loaded = await loadCommandConfig(io, 'run', file, {
    runnable: true,
    lead: 'refusing to start: ',
    advice: "Check it with 'listing-agent config check' (every problem of the configuration) or 'listing-agent doctor' (the whole setup).",
  });
  if (typeof loaded === 'number') return loaded;

  const { config } = loaded;
  const logger = createLogger({
    level: config.log.level,
    format: config.log.format,
    destination: io.logStream,
    isTTY: io.isTTY,
    secrets: secretValues(config),
  });
  const registry = new Registry();
  // The process metrics (CPU, memory, event loop, GC) are only read through /metrics.
  if (config.health.enabled)
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS });

  let agent: ListingAgent;
  try {
    agent = createListingAgent({
      config: loaded.input,
      logger,
      registry,
      // With state.redis the agent makes the Redis store itself; its agent ID names this process.
      ...(config.state.redis === undefined
        ? { store: createFileStore({ directory: config.state.directory, owner: io.owner, isProcessAlive: io.isProcessAlive }) }
        : { agentId: config.state.redis.agentId ?? `${io.owner.host}/${io.owner.pid}` }),
      // Exec hooks get PATH, HOME, LANG, TZ and the names each lists, never a variable the config
      // was built from (LISTING_AGENT_* and the ${VAR}s) nor LISTING_OAUTH_*: a reward script never
      // sees the agent's secrets.
      votes: { hookOptions: daemonHookOptions(io, loaded.sources.env) },
      // Named in the fix when the service refuses the token.
      tokenSource: describeTokenSource(loaded.sources, io.env, config.service.token),
      mode: 'daemon',
    });
  } catch (error) {
    io.stderr(`listing-agent run: ${errorMessage(error)}\n`);
    return EXIT.config;
  }
  agent.on('error', (error) => logger.debug({ err: error.message }, 'agent reported an error'));
  logger.info({ sources: loaded.sources }, 'starting listing-agent');
  // The agent's timers are unref'd (a library never holds a bot's process open): the daemon holds
  // it until the stop is done, or with no socket of its own (health off) it would end at once.
  const release = keepProcessAlive();
  try {
    try {
      await agent.start();
    } catch (error) {
      // The store or a port: one line that says what to fix, never a stack trace.
      const message = error instanceof ListingAgentError ? error.message : `cannot start: ${errorMessage(error)}`;
      logger.error({ err: message }, 'could not start');
      io.stderr(`listing-agent run: ${printable(message)}\n`);
      // A Sentinel at state.redis.url: the configuration names the wrong kind of server.
      return error instanceof ListingAgentError && error.code === 'redis_wrong_server' ? EXIT.config : EXIT.failure;
    }
    const signal = await io.stopRequested;
    return await stopWithin(agent, signal, logger, io);
  } finally {
    release();
  }
}

/** Stops the agent within {@link STOP_DEADLINE_MS}: exit 0, or 1 (with one line) past it. */
async function stopWithin(agent: ListingAgent, signal: string, logger: Logger, io: CliIo): Promise<number> {
  logger.info({ signal, deadlineMs: STOP_DEADLINE_MS }, 'stopping');
  let deadlineTimer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    deadlineTimer = setTimeout(() => resolve('timeout'), STOP_DEADLINE_MS);
  });
  const outcome = await Promise.race([agent.stop({ deadlineMs: STOP_DEADLINE_MS - 500 }).then(() => 'stopped' as const), timedOut]);
  clearTimeout(deadlineTimer);
  if (outcome === 'timeout') {
    logger.error({ deadlineMs: STOP_DEADLINE_MS }, 'the agent did not stop within the deadline');
    io.stderr(`listing-agent run: the agent did not stop within ${STOP_DEADLINE_MS / 1000} s; exiting anyway\n`);
    return EXIT.failure;
  }
  return EXIT.ok;
}
