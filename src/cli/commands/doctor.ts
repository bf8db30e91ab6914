import { ConfigError } from '../../config/errors.js';
import { printable } from '../../contract/printable.js';
import { createDoctorDeps } from '../../doctor/deps.js';
import { runDoctor, secretEnvironmentValues, type ConfigLoad } from '../../doctor/doctor.js';
import { DOCTOR_DEFAULTS, type CheckResult, type DoctorReport } from '../../doctor/types.js';
import { parseCommandArgs } from '../args.js';
import { loadRunnableConfig } from '../command-config.js';
import { EXIT, UsageError, type CliIo } from '../io.js';

export const DOCTOR_HELP = `Usage: listing-agent doctor [--config FILE] [--probe] [--json] [--timeout MS]

Check the agent's setup when something looks wrong: one line per check, ok, warn, fail or skip
(the check does not apply to this configuration, and why), and on warn and fail the fix. The
configuration is loaded exactly as 'listing-agent run' loads it. No state is changed (a probe
file of one page is written, synced and removed in the state directory to see that it takes
writes: a full disk fails it, as a read-only one does).

Checks, in this order (every one is always reported):
  config            found and valid, and nothing 'run' would refuse (the problems 'config check'
                    lists): which file, which .env, which LISTING_AGENT_* variables override it
  service.token     well-formed, and accepted by the service (GET /projects/@me: the project's name and ID)
  service.clock     this clock against the service's Date header: warn above 30 s, fail above
                    300 s (the signature tolerance of webhook deliveries)
  stats.source      the counts source answers, with the counts it sees (discord-rest, push endpoint,
                    Redis shard reports; embedded is skipped: only the bot's process can read it)
  commands.source   the commands source is readable and every command valid for the listing
  votes.cursor      the votes cursor answers; the stored position and the newest vote seen, with its age
  webhooks.secret   how many secrets the receiver accepts and where (never one of them)
  webhooks.port     webhooks.listen is free, or a running agent's receiver answers there
  webhooks.url      webhooks.publicUrl; the URL registered at the service cannot be listed with a
                    project token (that needs an OAuth access token), so that comparison is skipped
  webhooks.probe    with --probe: a signed webhook.test sent to webhooks.publicUrl reaches the
                    receiver (the running agent's, or one the doctor runs on webhooks.listen)
  state.directory   the state directory takes writes (or can be created), the room left on its
                    device (warn below 512 KiB), state.json is sound
  state.lock        who holds state.lock and whether it still runs (none with state.redis)
  redis.server      Redis answers, with its version (state.redis); fails on a Sentinel at
                    state.redis.url and on a replica
  redis.role        the primary and its replicas, with their lag; warn with Sentinels and no replica
  redis.appendonly  appendonly yes, or warn: a restart of Redis loses what it acknowledged
  redis.replication min-replicas-to-write and min-replicas-max-lag: warn while the primary takes
                    writes no replica has (0, or a lag over 10 s); fail when it takes none
  redis.leader      the agent that holds the leader lease (state.redis)

Options:
  -c, --config FILE   the JSON config file (default: $LISTING_AGENT_CONFIG; with neither, the
                      configuration comes from LISTING_AGENT_* variables alone)
      --probe         also send a signed test delivery through webhooks.publicUrl
      --json          print the report as JSON: { "version": 1, "status", "exitCode",
                      "checks": [{ "name", "status", "summary", "fix"?, "details"?, "durationMs" }] }
      --timeout MS    how long each check may take (default ${DOCTOR_DEFAULTS.checkTimeoutMs}); the checks run at once,
                      so the doctor ends within about this long even when the service hangs
  -h, --help          show this help

No secret is ever printed, in either form.
Exit codes: 0 every check ok or skipped, 1 a warn, 2 a fail (or a usage error).
`;

/** The report as text: one line per check, its fix indented beneath, and a count at the end. */
export function formatReport(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((check) => check.name.length));
  const indent = ' '.repeat(6 + width + 2);
  const lines: string[] = [];
  for (const check of report.checks) {
    // A summary may quote the service (a project's name, a problem's detail): printable, so it cannot forge a line.
    lines.push(`${check.status.padEnd(6)}${check.name.padEnd(width)}  ${printable(check.summary)}`);
    const { fix } = check;
    if (fix !== undefined && (check.status === 'warn' || check.status === 'fail')) lines.push(`${indent}fix: ${printable(fix)}`);
  }
  const count = (status: CheckResult['status']) => report.checks.filter((check) => check.status === status).length;
  const tally = [`${count('ok')} ok`, `${count('warn')} warn`, `${count('fail')} fail`, `${count('skip')} skipped`].join(', ');
  lines.push('', `${report.checks.length} checks: ${tally}`);
  return `${lines.join('\n')}\n`;
}

function parseTimeout(text: string | undefined): number {
  if (text === undefined) return DOCTOR_DEFAULTS.checkTimeoutMs;
  const ms = Number(text);
  if (!/^\d+$/.test(text) || ms < 1 || ms > 600_000)
    throw new UsageError(`--timeout must be a whole number of milliseconds from 1 to 600000 (got '${text}')`, 'doctor');
  return ms;
}

/** `listing-agent doctor`. */
export async function runDoctorCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('doctor', argv, {
    config: { type: 'string', short: 'c' },
    json: { type: 'boolean' },
    probe: { type: 'boolean' },
    timeout: { type: 'string' },
  });
  if (values.help) {
    io.stdout(DOCTOR_HELP);
    return EXIT.ok;
  }
  const file = values.config as string | undefined;
  if (file === '') throw new UsageError('--config needs a file path', 'doctor');
  const timeoutMs = parseTimeout(values.timeout as string | undefined);
  let load: ConfigLoad;
  try {
    load = { ok: true, loaded: await loadRunnableConfig({ ...(file === undefined ? {} : { file }), env: io.env, cwd: io.cwd }) };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    load = { ok: false, error };
  }
  const report = await runDoctor({
    load,
    timeoutMs,
    secrets: secretEnvironmentValues(io.env),
    deps: (loaded) =>
      createDoctorDeps({
        config: loaded.config,
        sources: loaded.sources,
        cwd: io.cwd,
        timeoutMs,
        probe: values.probe === true,
        owner: io.owner,
        isProcessAlive: io.isProcessAlive,
      }),
  });
  io.stdout(values.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return report.exitCode;
}
