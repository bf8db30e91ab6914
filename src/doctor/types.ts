import type { ConfigSources } from '../config/loader.js';
import type { ListingAgentConfig } from '../config/schema.js';
import type { ListingClient } from '../api/client.js';
import type { RedisConnection } from '../redis/connection.js';
import type { StateStore } from '../store/types.js';
import type { LockOwner } from '../store/lock.js';
import type { CountSource } from '../stats/source.js';
import type { CommandSource } from '../commands/types.js';
import type { ServiceAnswer } from './service-probe.js';

/**
 * What `listing-agent doctor` (and later the status page) works with: checks that are plain
 * functions of injected dependencies, each giving one {@link CheckResult}.
 */

/**
 * How a check came out. `ok` and `skip` (the check does not apply to this configuration, or
 * cannot run from here; the summary says why) leave the exit code at 0; `warn` makes it 1, `fail` 2.
 */
type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** What a check found, before the runner names and times it. */
export interface CheckOutcome {
  status: CheckStatus;
  /** One line: what was found (never a secret). */
  summary: string;
  /** On `warn` and `fail`: what to do, in words. */
  fix?: string;
  /** Plain JSON facts for scripts (counts, paths, ages); never a secret. */
  details?: Record<string, unknown>;
}

/** One line of the report: a {@link CheckOutcome} with its stable name and how long it took. */
export interface CheckResult extends CheckOutcome {
  /** Stable across versions (`service.token`, `webhooks.port`): scripts match on it. */
  name: string;
  durationMs: number;
}

/** The whole report; `--json` prints exactly this (version 1 of the shape). */
export interface DoctorReport {
  version: 1;
  /** The worst status among the checks (`skip` counts as `ok`). */
  status: 'ok' | 'warn' | 'fail';
  /** 0 all ok, 1 a warn, 2 a fail. */
  exitCode: 0 | 1 | 2;
  checks: CheckResult[];
}

/** The defaults of the doctor. */
export const DOCTOR_DEFAULTS = {
  /**
   * How long one check may take before it fails as "no answer": the service's own delivery
   * deadline (5 s). Checks run at once, so a hanging service costs this once, not per check.
   */
  checkTimeoutMs: 5_000,
  /** Clock skew above this is a warn: still inside every tolerance, but drifting. */
  skewWarnMs: 30_000,
  /**
   * Clock skew above this is a fail: the signature tolerance of webhook deliveries (300 s, both
   * directions) and the 5 minutes a metrics batch timestamp may lie in the future.
   */
  skewFailMs: 300_000,
} as const;

/** What the checks may use; the CLI builds the real one ({@link createDoctorDeps}), tests their own. */
export interface DoctorDeps {
  /** The validated configuration. */
  config: ListingAgentConfig;
  /** What it was built from. */
  sources: ConfigSources;
  /** Where relative paths (`state.directory`, `commands.file`) start. */
  cwd: string;
  /** Epoch ms. */
  now(): number;
  /**
   * How long one wait inside a check may take (a request, a connection): a little less than the
   * runner's check timeout, so that a wait that runs out is reported in its own words.
   */
  timeoutMs: number;
  /** Whether to send a test delivery through `webhooks.publicUrl` (`--probe`). */
  probe: boolean;
  /** This process, for judging `state.lock` (a pid of this host that no longer runs is stale). */
  owner?: LockOwner;
  /** Whether a pid of this host still runs. Default: unknown (only the lock's heartbeat tells). */
  isProcessAlive?: (pid: number) => boolean;
  /** `GET /projects/@me` once, shared by the token, clock and votes checks. Never rejects. */
  service(): Promise<ServiceAnswer>;
  /** The API client (no retries, the check timeout), for the votes cursor. */
  client(): ListingClient;
  /** The Redis connection of `state.redis`, up; rejects with a `RedisUnavailableError` in words. */
  redis(): Promise<RedisConnection>;
  /** Reads the state without a lock and without writing (file or Redis). */
  stateReader(): Promise<Pick<StateStore, 'get'>>;
  /** A live count source (an embedded agent's), read instead of the one the config names. */
  countSource?: CountSource;
  /** A live command source (an embedded agent's). */
  commandSource?: CommandSource;
  /**
   * Secret values met while checking (the secret file's, Redis's): scrubbed from every result,
   * beside the config's. Checks add what they read.
   */
  secrets: Set<string>;
}

/** A check: a stable name, the config paths whose problems it reports, and its run. */
export interface DoctorCheck {
  name: string;
  /**
   * Config paths (prefixes) this check is about: with an invalid configuration, problems under
   * them fail this check (a missing token fails `service.token`), and the check is skipped otherwise.
   */
  paths: readonly string[];
  run(deps: DoctorDeps, signal: AbortSignal): Promise<CheckOutcome>;
}

export const ok = (summary: string, details?: Record<string, unknown>): CheckOutcome => ({
  status: 'ok',
  summary,
  ...(details ? { details } : {}),
});
export const skip = (summary: string, details?: Record<string, unknown>): CheckOutcome => ({
  status: 'skip',
  summary,
  ...(details ? { details } : {}),
});
export const warn = (summary: string, fix: string, details?: Record<string, unknown>): CheckOutcome => ({
  status: 'warn',
  summary,
  fix,
  ...(details ? { details } : {}),
});
export const fail = (summary: string, fix: string, details?: Record<string, unknown>): CheckOutcome => ({
  status: 'fail',
  summary,
  fix,
  ...(details ? { details } : {}),
});
