import { spawn, type ChildProcess } from 'node:child_process';
import type { HookCallContext, Vote, VoteHook } from '../types.js';
import { voteHookBody, voteHookEnvironment } from './body.js';
import { HOOK_DEFAULTS, oneLine, VoteHookError } from './errors.js';
import { OutputTail } from './output-tail.js';

/** Options of {@link createExecHook}. */
export interface ExecHookOptions {
  /** Names the hook in logs, metrics and dead letters. */
  name: string;
  /** The program and its arguments, run without a shell (no quoting, globbing or `$VAR`s). */
  command: readonly string[];
  /** How long one run may take before it is killed. Default 10 000 ms. */
  timeoutMs?: number;
  /** Retries after a failure before the vote is dead-lettered for this hook. Default 5. */
  retries?: number;
  /**
   * The base environment of the command; the `LISTING_VOTE_*` variables are set on top of it. The
   * CLI passes `process.env`. Default: empty, so the command sees only the vote's variables (and
   * is looked up on the system's default `PATH`).
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** The working directory of the command. Default: the agent's. */
  cwd?: string;
  /** How long a command may take to end after SIGTERM (timeout or stop) before SIGKILL. Default 2 000 ms. */
  killGraceMs?: number;
  /** How much of stdout and of stderr is kept in memory (the last bytes). Default 16 KiB each. */
  maxOutputBytes?: number;
  /** Where the hook is configured (`votes.hooks[1]`), to point error messages at it. Default: none. */
  configPath?: string;
}

/** The defaults of {@link ExecHookOptions} not shared with other hooks. */
export const EXEC_HOOK_DEFAULTS = {
  killGraceMs: 2_000,
  maxOutputBytes: 16 * 1024,
  /** Lines of stderr (or stdout) quoted in a failure message. */
  messageLines: 5,
  /** Characters of output quoted in a failure message. */
  messageChars: 600,
} as const;

/**
 * After the command exits, how long its output pipes may stay open: a background process it left
 * behind can hold them for ever, and the run must still end.
 */
const PIPE_DRAIN_MS = 1_000;

/**
 * A hook that runs a command for each vote. The vote comes as JSON on stdin ({@link VoteHookBody},
 * stdin is closed after it) and as environment variables (`LISTING_VOTE_KEY`,
 * `LISTING_VOTE_USER_ID`, `LISTING_VOTE_PLATFORM_ID` (empty when unknown),
 * `LISTING_VOTE_PROJECT_ID`, `LISTING_VOTE_WEIGHT`, `LISTING_VOTE_CREATED_AT`,
 * `LISTING_VOTE_EXPIRES_AT`, `LISTING_VOTE_ROAD`, `LISTING_VOTE_ATTEMPT`,
 * `LISTING_IDEMPOTENCY_KEY`).
 *
 * Exit 0 is success. A non-zero exit, a signal, a command that cannot start, or the timeout (SIGTERM,
 * then SIGKILL after `killGraceMs`) rejects with a {@link VoteHookError} quoting the last lines of
 * stderr (of stdout when stderr is empty). Output is kept in memory only up to `maxOutputBytes`.
 */
export function createExecHook(options: ExecHookOptions): VoteHook {
  const { name, cwd } = options;
  const [first, ...args] = options.command;
  if (first === undefined || first === '') throw new TypeError(`hook "${name}": command must name a program`);
  const program: string = first;
  const timeoutMs = options.timeoutMs ?? HOOK_DEFAULTS.timeoutMs;
  const killGraceMs = options.killGraceMs ?? EXEC_HOOK_DEFAULTS.killGraceMs;
  const maxOutputBytes = options.maxOutputBytes ?? EXEC_HOOK_DEFAULTS.maxOutputBytes;
  const where = options.configPath === undefined ? '' : `: check ${options.configPath}.command`;
  // Only the program is shown: its arguments may carry tokens the owner put there.
  const shown = `"${program}"`;

  function run(vote: Vote, context: HookCallContext): Promise<void> {
    if (context.signal.aborted) return Promise.reject(new VoteHookError(name, 'aborted', `${shown} not run: the call was aborted (the agent is stopping)`));
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value;
    Object.assign(env, voteHookEnvironment(vote, context));
    const stdin = JSON.stringify(voteHookBody(vote));

    return new Promise<void>((resolve, reject) => {
      const stdout = new OutputTail(maxOutputBytes);
      const stderr = new OutputTail(maxOutputBytes);
      let settled = false;
      let stopping: { reason: 'timeout' | 'aborted'; signal: NodeJS.Signals } | undefined;
      let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      const timers: NodeJS.Timeout[] = [];
      const later = (ms: number, what: () => void) => {
        const timer = setTimeout(what, ms);
        timer.unref();
        timers.push(timer);
      };

      let child: ChildProcess;
      try {
        child = spawn(program, args, { env, ...(cwd === undefined ? {} : { cwd }), stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
      } catch (error) {
        reject(spawnError(error));
        return;
      }

      const finish = (error?: VoteHookError) => {
        if (settled) return;
        settled = true;
        for (const timer of timers) clearTimeout(timer);
        context.signal.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      };

      const stop = (reason: 'timeout' | 'aborted') => {
        if (stopping || exit) return;
        stopping = { reason, signal: 'SIGTERM' };
        child.kill('SIGTERM');
        later(killGraceMs, () => {
          if (exit || !stopping) return;
          stopping.signal = 'SIGKILL';
          child.kill('SIGKILL');
        });
      };
      const onAbort = () => stop('aborted');

      later(timeoutMs, () => stop('timeout'));
      context.signal.addEventListener('abort', onAbort, { once: true });

      child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
      // A command that does not read its stdin closes the pipe before the write lands (EPIPE):
      // that is its right, not a failure of the hook.
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(stdin);

      child.on('error', (error) => {
        // After a successful start, 'error' only reports a failed kill; 'close' still comes.
        if (child.pid === undefined) finish(spawnError(error));
      });
      child.on('exit', (code, signal) => {
        exit = { code, signal };
        later(PIPE_DRAIN_MS, () => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          settle();
        });
      });
      child.on('close', () => settle());

      function settle() {
        if (settled || !exit) return;
        const { code, signal } = exit;
        const output = quote(stderr, stdout);
        if (stopping?.reason === 'timeout') {
          finish(new VoteHookError(name, 'timeout', `${shown} did not finish within ${timeoutMs} ms and was killed with ${stopping.signal}${output}`, { exitCode: code, signal }));
        } else if (stopping?.reason === 'aborted') {
          finish(new VoteHookError(name, 'aborted', `${shown} was stopped with ${stopping.signal} (the agent is stopping)${output}`, { exitCode: code, signal }));
        } else if (code === 0) {
          finish();
        } else if (signal !== null) {
          finish(new VoteHookError(name, 'signal', `${shown} was killed by ${signal}${output}`, { exitCode: code, signal }));
        } else {
          finish(new VoteHookError(name, 'exit', `${shown} exited with code ${code}${output}`, { exitCode: code, signal }));
        }
      }
    });
  }

  function spawnError(error: unknown): VoteHookError {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    const message = (error as Error | null)?.message ?? String(error);
    if (code === 'ENOENT') {
      // Node says ENOENT for a missing working directory too: name both, the owner knows which.
      const orCwd = cwd === undefined ? '' : ` (or the working directory ${cwd} does not exist)`;
      return new VoteHookError(name, 'spawn', `command not found: ${shown}${orCwd}${where}`, { cause: error });
    }
    if (code === 'EACCES') return new VoteHookError(name, 'spawn', `${shown} is not executable (EACCES)${where}`, { cause: error });
    return new VoteHookError(name, 'spawn', `${shown} could not be started: ${oneLine(message, 200)}${where}`, { cause: error });
  }

  return { name, retries: options.retries ?? HOOK_DEFAULTS.retries, run };
}

/** `: <last lines>` of stderr, or of stdout when stderr is empty, or '' when both are. */
function quote(stderr: OutputTail, stdout: OutputTail): string {
  const [tail, label] = stderr.size > 0 ? [stderr, 'stderr'] : [stdout, 'stdout'];
  const lines = tail.lastLines(EXEC_HOOK_DEFAULTS.messageLines, EXEC_HOOK_DEFAULTS.messageChars);
  return lines === '' ? '' : `; ${label}: ${lines}`;
}
