import { ConfigError } from '../../config/errors.js';
import { CONFIG_FILE_VARIABLE } from '../../config/fields.js';
import type { LoadedConfig } from '../../config/loader.js';
import { isUnder } from '../../config/problems.js';
import type { FieldIssue } from '../../errors.js';
import { fail, ok, skip, type CheckOutcome, type DoctorCheck } from '../types.js';

/** How loading the configuration went, as the doctor's caller (the CLI) did it. */
export type ConfigLoad = { ok: true; loaded: LoadedConfig } | { ok: false; error: ConfigError };

/** The name of the config check. */
export const CONFIG_CHECK = 'config';

/** `cannot read config file x: no such file — pass --config ...` split at its dash: what, then the fix. */
function splitFix(summary: string): { what: string; fix: string | undefined } {
  const at = summary.indexOf(' — ');
  return at < 0 ? { what: summary, fix: undefined } : { what: summary.slice(0, at), fix: summary.slice(at + 3) };
}

const problemLine = (p: FieldIssue) => `${p.path || '(root)'}: ${p.message}`;

/**
 * The config check: which file, which `.env`, which variables set or override it; or every
 * problem (the first in the summary, all in `details.problems`).
 */
export function configOutcome(load: ConfigLoad): CheckOutcome {
  if (!load.ok) {
    const { error } = load;
    if (error.reason !== 'invalid') {
      const { what, fix } = splitFix(error.summary);
      return fail(what, fix ?? "fix the file it names, then run 'listing-agent config check'");
    }
    const count = error.problems.length;
    const first = error.problems[0];
    const summary = `invalid: ${count} ${count === 1 ? 'problem' : 'problems'}${first ? `, first ${problemLine(first)}` : ''}`;
    return fail(
      summary,
      "fix each problem in details (or see 'listing-agent config check'), in the file or in the LISTING_AGENT_* variable named",
      {
        problems: error.problems.map(problemLine),
      },
    );
  }
  const { sources } = load.loaded;
  const overrides = sources.env.filter((name) => name.startsWith('LISTING_AGENT_') && name !== CONFIG_FILE_VARIABLE);
  const interpolated = sources.env.filter((name) => !overrides.includes(name) && name !== CONFIG_FILE_VARIABLE);
  const parts = [sources.file ? `valid, from ${sources.file}` : 'valid, from LISTING_AGENT_* variables and defaults only (no config file)'];
  if (sources.dotenv) parts.push(`.env ${sources.dotenv}`);
  parts.push(overrides.length > 0 ? `overridden by ${overrides.join(', ')}` : 'no LISTING_AGENT_* variable overrides it');
  if (interpolated.length > 0) parts.push(`\${VAR}s read: ${interpolated.join(', ')}`);
  return ok(parts.join('; '), {
    file: sources.file ?? null,
    dotenv: sources.dotenv ?? null,
    overrides,
    interpolated,
  });
}

/**
 * What `check` says when the configuration is invalid: a `fail` with the problems under its paths
 * (a missing token fails `service.token`), else a `skip`.
 */
export function outcomeWithoutConfig(check: Pick<DoctorCheck, 'paths'>, error: ConfigError): CheckOutcome {
  const mine = error.reason === 'invalid' ? error.problems.filter((p) => check.paths.some((path) => isUnder(p.path, path))) : [];
  if (mine.length === 0) return skip('needs a valid configuration (see config)');
  return fail(mine.map(problemLine).join('; '), 'fix it in the config file or its LISTING_AGENT_* variable', {
    problems: mine.map(problemLine),
  });
}
