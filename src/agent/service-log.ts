import { ApiError } from '../api/errors.js';
import type { ServiceProject } from '../runtime/capability.js';
import type { AgentLogger } from '../log/agent-logger.js';
import { errorMessage } from '../errors.js';

/**
 * What the agent logs while it brings its capabilities up (see `bring-up.ts`). A failure that
 * repeats at every retry is logged in full once, then as one short `warn` line per retry with the
 * try count, until the answer changes (a different failure is logged in full again; the success
 * once at `info`): a token refused for a day writes a few hundred short lines, not a few hundred
 * copies of the fix.
 */
export interface ServiceLog {
  /** `GET /projects/@me` failed at try number `attempt`; the next try comes in `retryInMs`. */
  failed(error: unknown, attempt: number, retryInMs: number): void;
  /** It answered (logged only after failures: the agent's `agent ready` line says the rest). */
  reached(project: ServiceProject): void;
  /** Capabilities (`group`) could not start; retried in `retryInMs`. */
  startFailed(group: string, reason: string, retryInMs: number): void;
  /** The capabilities wait for Redis (`where`). */
  waitingForRedis(where: string, retryInMs: number): void;
}

/** The statuses of `GET /projects/@me` that mean the token itself is refused. */
const REFUSALS = [400, 401, 403, 404];

/** What to do about a refused token: which setting, where it came from, how to check it. Never the token. */
function tokenRefusalFix(status: number, tokenSource: string): string {
  const check = 'then check it with `listing-agent doctor`';
  if (status === 404) {
    return `the project of service.token ` +
      `(from ${tokenSource}) no longer exists on the service: put the project token of the project you list in ${tokenSource}, ${check}`;
  }
  return `service.token ` +
    `(from ${tokenSource}) is not a project token the service accepts (mistyped, regenerated since, or another kind of token): copy the ` +
    `project token from the project's Integrations and API settings into ${tokenSource}, ${check}`;
}

/** Creates the log of the bring-up. `tokenSource` says where `service.token` comes from, in words. */
export function createServiceLog(logger: AgentLogger, tokenSource: string): ServiceLog {
  /** Per kind of line (`service`, `start`, `redis`): what the last failure was, so a repeat is told apart. */
  const last = new Map<string, string>();
  let failedTries = 0;

  /** True the first time `key` is seen on `channel` in a row. */
  const isNew = (channel: string, key: string): boolean => {
    const fresh = last.get(channel) !== key;
    last.set(channel, key);
    return fresh;
  };

  return {
    failed(error, attempt, retryInMs) {
      failedTries += 1;
      const detail = errorMessage(error);
      if (error instanceof ApiError && REFUSALS.includes(error.status)) {
        const { status } = error;
        if (isNew('service', `refused ${status}`)) {
          logger.error(
            { status, err: detail, attempt, retryInMs, fix: tokenRefusalFix(status, tokenSource) },
            `the service refused the project token (${status})`,
          );
        } else {
          logger.warn({ status, attempt, retryInMs }, 'the service still refuses the project token');
        }
        return;
      }
      const key = error instanceof ApiError ? `status ${error.status}` : detail;
      if (isNew('service', key)) {
        logger.warn(
          {
            err: detail,
            attempt,
            retryInMs,
            fix: 'check service.v1 and that this machine reaches it (DNS, proxy, firewall): `listing-agent doctor` tells which',
          },
          'service not reachable',
        );
      } else {
        logger.warn({ err: detail, attempt, retryInMs }, 'service still not reachable');
      }
    },
    reached(project) {
      if (failedTries > 0) logger.info({ project: project.name, projectId: project.id, failedTries }, 'service reached');
      failedTries = 0;
      last.delete('service');
    },
    startFailed(group, reason, retryInMs) {
      if (isNew('start', `${group}: ${reason}`)) logger.error({ capabilities: group, err: reason, retryInMs }, 'could not start; retrying');
      else logger.warn({ capabilities: group, err: reason, retryInMs }, 'still cannot start; retrying');
    },
    waitingForRedis(where, retryInMs) {
      if (isNew('redis', where))
        logger.warn(
          { redis: where, retryInMs, fix: 'bring Redis back, or check state.redis.url: `listing-agent doctor` tells which' },
          'waiting for Redis before starting the capabilities',
        );
      else logger.debug({ redis: where, retryInMs }, 'still waiting for Redis');
    },
  };
}
