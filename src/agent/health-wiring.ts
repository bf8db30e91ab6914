import type { Registry } from 'prom-client';
import type { ListingAgentConfig } from '../config/schema.js';
import { listenSetting, settingName, type AgentMode } from '../config/setting-names.js';
import { ListenError } from '../http/listen-error.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Readiness } from '../runtime/readiness.js';
import type { AgentStatusOptions } from './status-wiring.js';

/*
 * The agent's health server (`/healthz`, `/readyz`, `/metrics`) and the status page it serves,
 * made once per agent by its first start (their modules loaded then: an agent with health off
 * loads neither). A port that is taken is the daemon's end (it refuses to run: its orchestrator
 * asks that port), but not an embedded agent's: a bot's stats, votes and commands do not depend on
 * it, so the agent runs on without it, says so (`error`, and the log), and a later `start()`
 * listens again.
 */

/** What {@link createAgentHealth} reads from the agent. */
export interface AgentHealthOptions {
  config: ListingAgentConfig;
  mode: AgentMode;
  logger: AgentLogger;
  readiness: Readiness;
  /** What `/metrics` serves, made at the first scrape. */
  registry: () => Registry;
  /** What the status page reads (`health.statusPage`), asked once when it is made. */
  status: () => AgentStatusOptions;
  /** Emits `error` (an embedded agent's health server that could not listen). */
  reportError(error: unknown): void;
}

/** The health server of one agent. */
export interface AgentHealth {
  /** The base URL while it listens. */
  readonly url: string | undefined;
  /**
   * Listens, unless it listens already (then nothing happens). Embedded, a `ListenError` is logged
   * and reported, and the promise resolves: the next call tries again. For the daemon, rejects with it.
   */
  start(): Promise<void>;
  /** Stops listening and the status page's timers; `start()` may follow. */
  stop(): Promise<void>;
}

/** Makes the health server (and with `health.statusPage` the status page on it), not listening yet. */
export async function createAgentHealth(options: AgentHealthOptions): Promise<AgentHealth> {
  const { config, mode, logger, readiness, registry } = options;
  const status = config.health.statusPage ? (await import('./status-wiring.js')).createAgentStatus(options.status()) : undefined;
  const server = (await import('../health/server.js')).createHealthServer({
    listen: config.health.listen,
    readiness,
    registry,
    logger: logger.child({ component: 'health' }),
    setting: listenSetting('health.listen', mode),
    allowedHosts: config.health.allowedHosts,
    allowedHostsSetting: settingName('health.allowedHosts', mode),
    ...(status ? { pages: status.pages } : {}),
  });
  let url: string | undefined;
  /** The listen under way, or the one that succeeded (a later start() has nothing to do). */
  let listening: Promise<void> | undefined;

  async function listen(): Promise<void> {
    try {
      url = await server.start();
    } catch (error) {
      listening = undefined;
      if (mode === 'daemon' || !(error instanceof ListenError)) throw error;
      const text = 'the health server is not listening; the agent runs on without it, and agent.start() tries it again';
      logger.error({ err: error.message }, text);
      options.reportError(error);
      return;
    }
    status?.start();
    logger.info({ url }, 'health server listening');
  }

  return {
    get url() {
      return url;
    },
    start: () => (listening ??= listen()),
    async stop() {
      // A listen under way ends first, so that what it opened is closed here.
      await listening?.catch(() => undefined);
      listening = undefined;
      url = undefined;
      status?.stop();
      await server.stop();
    },
  };
}
