import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { decideProgram, type ProgramProbe } from './decide.js';
import { NO_INSTALL_ENV, type SystemProgram } from './programs.js';

/** Where the setup looks and what it may do: the real process in the global setup, a made-up one in tests. */
export interface SetupEnvironment {
  /** PATH, the programs' override variables, `LISTING_AGENT_TEST_NO_INSTALL`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Running as root (uid 0). */
  readonly root: boolean;
  /** Where the install and skip lines go (stderr in the global setup). */
  readonly write: (text: string) => void;
  /** The limit on each apt-get command; default 5 minutes. */
  readonly aptTimeoutMs?: number;
}

/** What the setup ended with. */
export interface PreparedPrograms {
  /** Each program's executable (absolute path), or null when the files that need it are skipped. */
  readonly paths: Readonly<Record<string, string | null>>;
  /** The SKIPPING lines printed, one per program missing (the global setup repeats them after the summary). */
  readonly skipLines: readonly string[];
}

const APT_TIMEOUT_MS = 5 * 60_000;

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first executable file called `name` in the directories of `pathVariable`, like `command -v`. */
export function findOnPath(name: string, pathVariable: string | undefined): string | undefined {
  for (const dir of (pathVariable ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** The override when set (a path, or a command name looked up on PATH), else the program's name on PATH. */
function locate(program: SystemProgram, env: SetupEnvironment['env']): Pick<ProgramProbe, 'override' | 'found'> {
  const override = env[program.envOverride];
  if (override === undefined || override === '') return { found: findOnPath(program.name, env.PATH) };
  if (!override.includes('/')) return { override, found: findOnPath(override, env.PATH) };
  const path = resolve(override);
  return isExecutableFile(path) ? { override, found: path } : { override };
}

/** apt-get's own reason in one line: its first `E:` line, else the last line it printed. */
function reasonFrom(output: string): string {
  const lines = output.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  const reason = lines.find((line) => line.startsWith('E:')) ?? lines.at(-1) ?? 'no output';
  return reason.length > 200 ? `${reason.slice(0, 200)}...` : reason;
}

/** Runs one apt-get command; undefined when it succeeded, else why it did not. */
function runAptGet(aptGet: string, args: readonly string[], environment: SetupEnvironment): string | undefined {
  const timeoutMs = environment.aptTimeoutMs ?? APT_TIMEOUT_MS;
  const result = spawnSync(aptGet, args, {
    env: { ...environment.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
  });
  if (result.error) {
    const code = (result.error as NodeJS.ErrnoException).code;
    return code === 'ETIMEDOUT' ? `apt-get ${args[0]} gave no answer within ${timeoutMs / 1000} s` : result.error.message;
  }
  if (result.status === 0) return undefined;
  return `exit ${result.status ?? result.signal}: ${reasonFrom(`${result.stderr}\n${result.stdout}`)}`;
}

/** `apt-get update`, then one install of every package; undefined on success, else the reason. */
function installPackages(aptGet: string, packages: readonly string[], environment: SetupEnvironment): string | undefined {
  // A failed update is not the end: the lists already there may hold the packages.
  const update = runAptGet(aptGet, ['update', '-qq'], environment);
  // The lock timeout waits for another apt on the machine instead of failing at once.
  const install = runAptGet(aptGet, ['install', '-y', '-qq', '--no-install-recommends', '-o', 'DPkg::Lock::Timeout=120', ...packages], environment);
  if (install === undefined) return undefined;
  return update === undefined ? install : `${install}; apt-get update: ${update}`;
}

/**
 * Finds each program (its override variable, then PATH); when some are missing, runs as root and
 * apt-get is there (and `LISTING_AGENT_TEST_NO_INSTALL` is not `1`), installs their Debian packages
 * in one apt-get call with one line per program; a program still missing (not root, no apt-get,
 * the install failed) gets one SKIPPING line naming the fix. Never throws for a missing program.
 */
export function prepareSystemPrograms(programs: readonly SystemProgram[], environment: SetupEnvironment): PreparedPrograms {
  const aptGet = findOnPath('apt-get', environment.env.PATH);
  const base = { root: environment.root, aptGet: aptGet !== undefined, installDisabled: environment.env[NO_INSTALL_ENV] === '1' };
  let decisions = programs.map((program) => decideProgram(program, { ...base, ...locate(program, environment.env) }));

  const toInstall = programs.filter((_, i) => decisions[i]!.action === 'install');
  if (toInstall.length > 0 && aptGet !== undefined) {
    for (const decision of decisions) if (decision.action === 'install') environment.write(`${decision.line}\n`);
    const failed = installPackages(aptGet, toInstall.map((program) => program.debianPackage), environment);
    decisions = programs.map((program, i) => {
      if (decisions[i]!.action !== 'install') return decisions[i]!;
      // Probe again; installFailed is set, so a program still missing is skipped, never installed twice.
      const installFailed = failed ?? `installed, yet ${program.name} is not on PATH (${environment.env.PATH ?? ''})`;
      return decideProgram(program, { ...base, ...locate(program, environment.env), installFailed });
    });
  }

  const paths: Record<string, string | null> = {};
  const skipLines: string[] = [];
  programs.forEach((program, i) => {
    const decision = decisions[i]!;
    paths[program.name] = decision.action === 'use' ? decision.path : null;
    if (decision.action === 'skip') skipLines.push(decision.line);
  });
  for (const line of skipLines) environment.write(`${line}\n`);
  return { paths, skipLines };
}
