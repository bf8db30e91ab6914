import { spawn, type ChildProcess } from 'node:child_process';
import type { HookCallContext, Vote, VoteHook } from '../types.js';
import { voteHookBody, voteHookEnvironment, type HookKind } from './body.js';
import { redact, urlCredentialForms } from '../../api/redact.js';
import { HOOK_DEFAULTS, hookError, oneLine, type VoteHookError } from './errors.js';
import { OutputTail } from './output-tail.js';
import { timerDelay } from '../../contract/timer-delay.js';

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
  /**
   * Values to keep out of the hook's error texts (what the command prints is quoted there), besides
   * the passwords and token-like query values of URLs in its arguments, which are always kept out.
   * The agent passes every credential form of its configuration. Default: none.
   */
  secrets?: readonly string[];
  /** What the hook carries (`LISTING_HOOK_TYPE` and stdin's `type`): `reminder` for the hooks of `votes.reminders`. Default `vote`. */
  kind?: HookKind;
}

/** The defaults of {@link ExecHookOptions} not shared with other hooks. */
const EXEC_HOOK_DEFAULTS = {
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
 * `LISTING_IDEMPOTENCY_KEY`, `LISTING_HOOK_TYPE`: `vote`, or `reminder` for a hook made with `kind: 'reminder'`).
 *
 * Exit 0 is success. A non-zero exit, a signal, a command that cannot start, or the timeout (SIGTERM,
 * then SIGKILL after `killGraceMs`) rejects with a {@link VoteHookError} quoting the last lines of
 * stderr (of stdout when stderr is empty). Output is kept in memory only up to `maxOutputBytes`.
 */
export function createExecHook(options: ExecHookOptions): VoteHook {
  const { name, cwd } = options;
  const [first, ...args] = options.command;
  if (first === undefined || first === '') throw new TypeError(`hook "${name}": command must name a program`);
  const spec: ExecSpec = {
    name,
    program: first,
    args,
    cwd,
    env: options.env ?? {},
    timeoutMs: options.timeoutMs ?? HOOK_DEFAULTS.timeoutMs,
    killGraceMs: options.killGraceMs ?? EXEC_HOOK_DEFAULTS.killGraceMs,
    maxOutputBytes: options.maxOutputBytes ?? EXEC_HOOK_DEFAULTS.maxOutputBytes,
    where: options.configPath === undefined ? '' : `: check ${options.configPath}.command`,
    // Only the program is shown: its arguments may carry tokens the owner put there.
    shown: `"${first}"`,
    secrets: [...args.flatMap(urlCredentialForms), ...(options.secrets ?? [])],
    kind: options.kind ?? 'vote',
  };
  return { name, retries: options.retries ?? HOOK_DEFAULTS.retries, run: (vote, context) => runCommand(spec, vote, context) };
}

/** What a hook runs, its defaults applied. */
interface ExecSpec {
  readonly name: string;
  readonly program: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs: number;
  readonly killGraceMs: number;
  readonly maxOutputBytes: number;
  /** Where the hook is configured, for error messages (`: check votes.hooks[1].command`), or ''. */
  readonly where: string;
  /** The program as error messages show it. */
  readonly shown: string;
  /** What error messages are scrubbed of. */
  readonly secrets: readonly string[];
  readonly kind: HookKind;
}

/** Why a run was stopped, and the last signal sent. */
type Stopping = { reason: 'timeout' | 'aborted'; signal: NodeJS.Signals };

/** How the command ended. */
type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** One run of the command: its child, output, timers and how it ends. */
interface Run {
  readonly spec: ExecSpec;
  readonly context: HookCallContext;
  readonly child: ChildProcess;
  readonly stdout: OutputTail;
  readonly stderr: OutputTail;
  readonly timers: NodeJS.Timeout[];
  readonly resolve: () => void;
  readonly reject: (error: VoteHookError) => void;
  readonly onAbort: () => void;
  settled: boolean;
  stopping: Stopping | undefined;
  exit: Exit | undefined;
}

function runCommand(spec: ExecSpec, vote: Vote, context: HookCallContext): Promise<void> {
  if (context.signal.aborted) {
    const message = `${spec.shown} not run: the call was aborted (the agent is stopping)`;
    return Promise.reject(hookError(spec.name, 'aborted', message, spec.secrets));
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(spec.env)) if (value !== undefined) env[key] = value;
  Object.assign(env, voteHookEnvironment(vote, context, spec.kind));
  const stdin = JSON.stringify(voteHookBody(vote, spec.kind));
  return new Promise<void>((resolve, reject) => {
    let child: ChildProcess;
    try {
      const cwd = spec.cwd === undefined ? {} : { cwd: spec.cwd };
      child = spawn(spec.program, spec.args, { env, ...cwd, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    } catch (error) {
      reject(spawnError(spec, error));
      return;
    }
    const run: Run = {
      spec,
      context,
      child,
      stdout: new OutputTail(spec.maxOutputBytes),
      stderr: new OutputTail(spec.maxOutputBytes),
      timers: [],
      resolve,
      reject,
      onAbort: () => stop(run, 'aborted'),
      settled: false,
      stopping: undefined,
      exit: undefined,
    };
    watch(run, stdin);
  });
}

/** Feeds the command its stdin and follows it to its end (the timeout and the abort signal included). */
function watch(run: Run, stdin: string): void {
  const { child, context } = run;
  later(run, run.spec.timeoutMs, () => stop(run, 'timeout'));
  context.signal.addEventListener('abort', run.onAbort, { once: true });

  child.stdout?.on('data', (chunk: Buffer) => run.stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => run.stderr.push(chunk));
  // A command that does not read its stdin closes the pipe before the write lands (EPIPE):
  // that is its right, not a failure of the hook.
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(stdin);

  child.on('error', (error) => {
    // After a successful start, 'error' only reports a failed kill; 'close' still comes.
    if (child.pid === undefined) finish(run, spawnError(run.spec, error));
  });
  child.on('exit', (code, signal) => {
    run.exit = { code, signal };
    later(run, PIPE_DRAIN_MS, () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      settle(run);
    });
  });
  child.on('close', () => settle(run));
}

function later(run: Run, ms: number, what: () => void): void {
  const timer = setTimeout(what, timerDelay(ms));
  timer.unref();
  run.timers.push(timer);
}

function finish(run: Run, error?: VoteHookError): void {
  if (run.settled) return;
  run.settled = true;
  for (const timer of run.timers) clearTimeout(timer);
  run.context.signal.removeEventListener('abort', run.onAbort);
  if (error) run.reject(error);
  else run.resolve();
}

/** SIGTERM, then SIGKILL after `killGraceMs`. */
function stop(run: Run, reason: 'timeout' | 'aborted'): void {
  if (run.stopping || run.exit) return;
  const stopping: Stopping = { reason, signal: 'SIGTERM' };
  run.stopping = stopping;
  run.child.kill('SIGTERM');
  later(run, run.spec.killGraceMs, () => {
    if (run.exit) return;
    stopping.signal = 'SIGKILL';
    run.child.kill('SIGKILL');
  });
}

function settle(run: Run): void {
  if (run.settled || !run.exit) return;
  finish(run, exitError(run.spec, run.stopping, run.exit, quote(run.spec, run.stderr, run.stdout)));
}

/** The error of a command that ended (none for exit 0 when not stopped); `output` quotes its last lines. */
function exitError(spec: ExecSpec, stopping: Stopping | undefined, exit: Exit, output: string): VoteHookError | undefined {
  const { name, shown } = spec;
  const { code, signal } = exit;
  const details = { exitCode: code, signal };
  if (stopping?.reason === 'timeout') {
    const killed = `did not finish within ${spec.timeoutMs} ms and was killed with ${stopping.signal}`;
    return hookError(name, 'timeout', `${shown} ${killed}${output}`, spec.secrets, details);
  }
  if (stopping?.reason === 'aborted') {
    const message = `${shown} was stopped with ${stopping.signal} (the agent is stopping)${output}`;
    return hookError(name, 'aborted', message, spec.secrets, details);
  }
  if (code === 0) return undefined;
  if (signal !== null) return hookError(name, 'signal', `${shown} was killed by ${signal}${output}`, spec.secrets, details);
  return hookError(name, 'exit', `${shown} exited with code ${code}${output}`, spec.secrets, details);
}

function spawnError(spec: ExecSpec, error: unknown): VoteHookError {
  const { name, shown, cwd, where } = spec;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const message = (error as Error | null)?.message ?? String(error);
  if (code === 'ENOENT') {
    // Node says ENOENT for a missing working directory too: name both, the owner knows which.
    const orCwd = cwd === undefined ? '' : ` (or the working directory ${cwd} does not exist)`;
    return hookError(name, 'spawn', `command not found: ${shown}${orCwd}${where}`, spec.secrets, { cause: error });
  }
  if (code === 'EACCES') return hookError(name, 'spawn', `${shown} is not executable (EACCES)${where}`, spec.secrets, { cause: error });
  return hookError(name, 'spawn', `${shown} could not be started: ${oneLine(message, 200)}${where}`, spec.secrets, { cause: error });
}

/** `: <last lines>` of stderr, or of stdout when stderr is empty, or '' when both are; scrubbed before they are cut. */
function quote(spec: ExecSpec, stderr: OutputTail, stdout: OutputTail): string {
  const [tail, label] = stderr.size > 0 ? [stderr, 'stderr'] : [stdout, 'stdout'];
  const lines = tail.lastLines(EXEC_HOOK_DEFAULTS.messageLines, EXEC_HOOK_DEFAULTS.messageChars, (text) => redact(text, spec.secrets));
  return lines === '' ? '' : `; ${label}: ${lines}`;
}
