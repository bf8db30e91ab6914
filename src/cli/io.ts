import type { Writable } from 'node:stream';

/** What a command may touch of the outside world; `main.ts` fills it from `process`. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Resolves when the user asks the program to stop (SIGINT, SIGTERM). */
  stopRequested: Promise<string>;
  /** Where log lines go (stdout). */
  logStream: Writable;
  /** Whether stdout is a terminal (pretty logs under `log.format: auto`). */
  isTTY: boolean;
  /** This process, as the state directory's lock records it. */
  owner: { pid: number; host: string };
  /** Whether a process of this host still runs (to take over a stale state lock). */
  isProcessAlive(pid: number): boolean;
}

/** Exit codes (documented in the README). */
export const EXIT = {
  ok: 0,
  /** A runtime failure (port in use, unreadable file). */
  failure: 1,
  /** A usage error: unknown command or flag, bad value. */
  usage: 2,
  /** An invalid configuration or seed file. */
  config: 78,
} as const;

/** A usage error: printed with a hint to `--help`, exit code 2. */
export class UsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
    this.name = 'UsageError';
  }
}
