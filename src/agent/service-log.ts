import { ApiError } from '../api/errors.js';
import type { ServiceProject } from './capability.js';
import type { AgentLogger } from './logger.js';

/** What the agent logs while it brings its capabilities up (see `bring-up.ts`). */
export interface ServiceLog {
  /** `GET /projects/@me` failed; the next try comes in `retryInMs`. `tries` counts this one. */
  failed(error: unknown, tries: number, retryInMs: number): void;
  /** It answered. */
  reached(project: ServiceProject): void;
  /** Capabilities (`group`) could not start; retried in `retryInMs`. */
  startFailed(group: string, reason: string, retryInMs: number): void;
  /** The capabilities wait for Redis (`where`). */
  waitingForRedis(where: string, retryInMs: number): void;
}

/** The statuses of `GET /projects/@me` that mean the token itself is refused. */
const REFUSALS = [400, 401, 403, 404];

/** Creates the log of the bring-up. `tokenSource` says where `service.token` comes from. */
export function createServiceLog(logger: AgentLogger, _tokenSource: string): ServiceLog {
  return {
    failed(error, _tries, retryInMs) {
      const detail = error instanceof Error ? error.message : String(error);
      const refused = error instanceof ApiError && REFUSALS.includes(error.status);
      logger[refused ? 'error' : 'warn']({ err: detail, retryInMs }, refused ? 'the service refused the project token' : 'service not reachable');
    },
    reached() {},
    startFailed(group, reason, retryInMs) {
      logger.warn({ capabilities: group, err: reason, retryInMs }, 'could not start the capabilities; retrying');
    },
    waitingForRedis(where, retryInMs) {
      logger.warn({ redis: where, retryInMs }, 'waiting for Redis before starting the capabilities');
    },
  };
}
