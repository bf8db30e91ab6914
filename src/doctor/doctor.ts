import { credentialForms } from '../api/redact.js';
import { configEnvironmentVariables } from '../config/fields.js';
import type { LoadedConfig } from '../config/loader.js';
import { commandsCheck } from './checks/commands.js';
import { redisUrlSecrets } from './deps.js';
import { CONFIG_CHECK, configOutcome, outcomeWithoutConfig, type ConfigLoad } from './checks/config.js';
import { redisLeaderCheck, redisServerCheck } from './checks/redis.js';
import { redisAppendonlyCheck, redisReplicationCheck, redisRoleCheck } from './checks/redis-topology.js';
import { clockCheck, tokenCheck } from './checks/service.js';
import { stateDirectoryCheck, stateLockCheck } from './checks/state.js';
import { statsCheck } from './checks/stats.js';
import { votesCheck } from './checks/votes.js';
import { webhookProbeCheck, webhookUrlCheck } from './checks/webhook-probe.js';
import { webhookPortCheck, webhookSecretCheck } from './checks/webhooks.js';
import { reportOf, runChecks, scrubResults } from './runner.js';
import { DOCTOR_DEFAULTS, type CheckResult, type DoctorCheck, type DoctorDeps, type DoctorReport } from './types.js';

export type { ConfigLoad } from './checks/config.js';

/**
 * Every check after `config`, in the order they are shown. Every one is always in the report
 * (a check that does not apply says `skip` and why), so a script finds each name every time.
 */
const DOCTOR_CHECKS: readonly DoctorCheck[] = [
  tokenCheck,
  clockCheck,
  statsCheck,
  commandsCheck,
  votesCheck,
  webhookSecretCheck,
  webhookPortCheck,
  webhookUrlCheck,
  webhookProbeCheck,
  stateDirectoryCheck,
  stateLockCheck,
  redisServerCheck,
  redisRoleCheck,
  redisAppendonlyCheck,
  redisReplicationCheck,
  redisLeaderCheck,
];

/** Every check's name, `config` first: the stable list `--json` holds. */
export const DOCTOR_CHECK_NAMES: readonly string[] = [CONFIG_CHECK, ...DOCTOR_CHECKS.map((check) => check.name)];

/** Options of {@link runDoctor}. */
export interface RunDoctorOptions {
  /** How loading the configuration went. */
  load: ConfigLoad;
  /** Makes the checks' dependencies for a valid configuration; `close` (when given) runs after the checks. */
  deps(loaded: LoadedConfig): DoctorDeps & { close?(): Promise<void> };
  /** Per check. Default {@link DOCTOR_DEFAULTS.checkTimeoutMs}. */
  timeoutMs?: number;
  /** More values to scrub from the report (the secret environment variables' values). */
  secrets?: Iterable<string>;
}

/** The values of the secret `LISTING_AGENT_*` variables in `env`: scrubbed even when the config is invalid. */
export function secretEnvironmentValues(env: Readonly<Record<string, string | undefined>>): string[] {
  const values: string[] = [];
  for (const variable of configEnvironmentVariables()) {
    const value = env[variable.name];
    if (!variable.secret || value === undefined || value === '') continue;
    if (variable.path === 'state.redis.url') values.push(...redisUrlSecrets(value));
    // A list variable holds several secrets, comma-separated; each in every form it can show in.
    else values.push(...[value, ...(variable.kind === 'list' ? value.split(',').map((item) => item.trim()) : [])].flatMap(credentialForms));
  }
  return values;
}

/**
 * Runs the doctor: the config check, then every check of {@link DOCTOR_CHECKS} at once, each
 * within `timeoutMs`; with an invalid configuration, the checks whose settings are at fault fail
 * and the others are skipped. The report holds no secret (config's, environment's, or read while
 * checking). Never rejects for a check's failure.
 */
export async function runDoctor(options: RunDoctorOptions): Promise<DoctorReport> {
  const timeoutMs = options.timeoutMs ?? DOCTOR_DEFAULTS.checkTimeoutMs;
  const { load } = options;
  const configResult: CheckResult = { name: CONFIG_CHECK, ...configOutcome(load), durationMs: 0 };
  const secrets = new Set(options.secrets ?? []);
  if (!load.ok) {
    const skipped = DOCTOR_CHECKS.map((check): CheckResult => ({
      name: check.name,
      ...outcomeWithoutConfig(check, load.error),
      durationMs: 0,
    }));
    return reportOf(scrubResults([configResult, ...skipped], secrets));
  }
  const deps = options.deps(load.loaded);
  try {
    const results = await runChecks(
      DOCTOR_CHECKS.map((check) => ({ name: check.name, run: (signal: AbortSignal) => check.run(deps, signal) })),
      { timeoutMs },
    );
    for (const secret of deps.secrets) secrets.add(secret);
    return reportOf(scrubResults([configResult, ...results], secrets));
  } finally {
    await deps.close?.().catch(() => undefined);
  }
}
