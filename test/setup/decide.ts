import { NO_INSTALL_ENV, type SystemProgram } from './programs.js';

/** What the global setup learned about one program, and about what it may do to get it. */
export interface ProgramProbe {
  /** The program's override variable (e.g. `REDIS_SERVER`) when set and not empty. */
  readonly override?: string;
  /** The executable found: the override resolved when it is set, else the name looked up on PATH. */
  readonly found?: string;
  /** The tests run as root (uid 0): apt-get may install. */
  readonly root: boolean;
  /** `apt-get` is on PATH. */
  readonly aptGet: boolean;
  /** `LISTING_AGENT_TEST_NO_INSTALL=1`: never install, whoever runs. */
  readonly installDisabled: boolean;
  /** Set once an install was tried and failed: apt-get's reason, in one line. */
  readonly installFailed?: string;
}

/**
 * `use` the path found; `install` the Debian package (then probe again and decide once more);
 * or `skip` the files that need the program. `line` is the one line printed for install and skip.
 */
export type ProgramDecision =
  | { readonly action: 'use'; readonly path: string }
  | { readonly action: 'install'; readonly line: string }
  | { readonly action: 'skip'; readonly line: string };

/** The prefix of every line the setup prints, so a user can tell where it comes from. */
export const LINE_PREFIX = '[test setup]';

function files(program: SystemProgram): string {
  const count = program.testFiles.length;
  return count === 1 ? `the test file that needs it (${program.testFiles[0]})` : `the ${count} test files that need it`;
}

function skipLine(program: SystemProgram, why: string, fix: string): string {
  return `${LINE_PREFIX} SKIPPING ${files(program)}: ${program.name} ${why}. Fix: ${fix}   or: ${program.envOverride}=/path/to/${program.name} npm test`;
}

/**
 * The pure decision for one program: what was found, who runs, whether apt-get is there, whether
 * installing is allowed or already failed. Never `install` twice: once `installFailed` is set, a
 * program still missing is skipped. An override that does not resolve is skipped, not installed:
 * the user said where the program is.
 */
export function decideProgram(program: SystemProgram, probe: ProgramProbe): ProgramDecision {
  if (probe.found !== undefined) return { action: 'use', path: probe.found };
  const apt = `apt-get install ${program.debianPackage}`;
  const aptAsUser = probe.root ? apt : `sudo ${apt}`;
  if (probe.override !== undefined) {
    return {
      action: 'skip',
      line: `${LINE_PREFIX} SKIPPING ${files(program)}: ${program.envOverride}=${probe.override} is not an executable file. Fix: point ${program.envOverride} at ${program.name}, or unset it to use PATH`,
    };
  }
  if (probe.installFailed !== undefined) {
    return { action: 'skip', line: skipLine(program, `is not on PATH and \`${apt}\` failed (${probe.installFailed})`, aptAsUser) };
  }
  if (!probe.aptGet) {
    return { action: 'skip', line: skipLine(program, 'is not on PATH (and there is no apt-get here)', `install ${program.name} with this system's package manager (Debian: ${apt})`) };
  }
  if (probe.installDisabled) {
    return { action: 'skip', line: skipLine(program, `is not on PATH (${NO_INSTALL_ENV}=1: no install)`, aptAsUser) };
  }
  if (!probe.root) {
    return { action: 'skip', line: skipLine(program, 'is not on PATH (npm test installs it only as root)', aptAsUser) };
  }
  return {
    action: 'install',
    line: `${LINE_PREFIX} ${program.name} is not on PATH: installing Debian's ${program.debianPackage} package (${apt}) for ${files(program)}`,
  };
}
