import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach } from 'vitest';
import { seededRandom } from '../../src/emulator/faults.js';
import { CLI_PATH } from './cli.js';
import { freePort } from './ports.js';
export { freePort };

/**
 * Shared parts of the reliability suite (test/reliability): the seed and the short form, the daemon
 * as a child process with every byte of its output kept, crash detection, RSS, and the secrets scan.
 */

/** `RELIABILITY_SHORT=1`: the smaller figures `.ci/run` uses. */
export const SHORT = process.env.RELIABILITY_SHORT === '1';

/** The run's seed: `RELIABILITY_SEED`, or a fresh one (printed in every summary, so a failing run can be replayed). */
export const SEED: number = (() => {
  const given = process.env.RELIABILITY_SEED;
  if (given !== undefined && given !== '') {
    const n = Number(given);
    if (!Number.isSafeInteger(n)) throw new Error(`RELIABILITY_SEED must be an integer, got '${given}'`);
    return n >>> 0;
  }
  return randomBytes(4).readUInt32BE(0);
})();

/** A PRNG for one part of a test: the run's seed mixed with a label, so parts do not share a sequence. */
export function rng(label: string): () => number {
  let h = SEED ^ 0x9e3779b9;
  for (const c of label) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return seededRandom(h);
}

/** An integer in [min, max] from `random`. */
export const between = (random: () => number, min: number, max: number) => min + Math.floor(random() * (max - min + 1));
/** One item of `items` from `random`. */
export const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A value that is recognisable in a scan and random per run: `<label>-<32 hex>`. */
export function secretValue(label: string): string {
  return `${label}-${randomBytes(16).toString('hex')}`;
}

/** Every byte a test captured (daemon output, CLI output, error messages), by source, for the secrets scan. */
export class Transcript {
  private readonly parts: { source: string; text: string }[] = [];
  add(source: string, text: string): void {
    if (text !== '') this.parts.push({ source, text });
  }
  get bytes(): number {
    return this.parts.reduce((n, p) => n + p.text.length, 0);
  }
  get lines(): number {
    return this.parts.reduce((n, p) => n + p.text.split('\n').length, 0);
  }
  /**
   * The places where a secret appears: source, line number and the secret's name, never its value.
   * `secrets` maps a name to its value; values shorter than 8 characters are not scanned (too common).
   */
  scan(secrets: Record<string, string>): string[] {
    const hits: string[] = [];
    const wanted = Object.entries(secrets).filter(([, value]) => value.length >= 8);
    for (const { source, text } of this.parts) {
      const lines = text.split('\n');
      lines.forEach((line, index) => {
        for (const [name, value] of wanted) if (line.includes(value)) hits.push(`${source}:${index + 1}: ${name}`);
      });
    }
    return hits;
  }
}

/**
 * The secrets to look for from a project token: the whole token and its payload and signature parts
 * (the header part, `eyJhbGciOi...`, is the same for every token).
 */
export function tokenSecrets(name: string, token: string): Record<string, string> {
  const [, payload, signature] = token.split('.');
  return { [name]: token, [`${name} (payload part)`]: payload ?? '', [`${name} (signature part)`]: signature ?? '' };
}

/** What in a daemon's output means it crashed or let an error escape. */
export function crashSigns(output: string): string[] {
  const signs: string[] = [];
  const lines = output.split('\n');
  lines.forEach((line, index) => {
    if (/unhandled ?rejection|uncaught ?exception|unexpected failure|FATAL ERROR|heap out of memory/i.test(line)) signs.push(`line ${index + 1}: ${line.slice(0, 200)}`);
    else if (/^\s+at .+(\(.+:\d+:\d+\)|:\d+:\d+)$/.test(line)) signs.push(`line ${index + 1}: stack frame: ${line.trim().slice(0, 200)}`);
  });
  return signs;
}

/** The resident set size of `pid` in KiB (Linux /proc), or undefined when it is gone. */
export function rssKiB(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(status);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** `listing-agent run` as a child process in its own process group, its output kept whole. */
export interface Daemon {
  child: ChildProcess;
  pid: number;
  output(): string;
  /** Resolves with the exit code, or the signal's name when a signal ended it. */
  exited: Promise<number | string | null>;
  alive(): boolean;
  /** Resolves when the output holds `text`; rejects when the process exits first or after `timeoutMs`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** SIGKILL to the whole group (its hook commands die with it). */
  kill(): Promise<number | string | null>;
  /** SIGTERM to the daemon; resolves with how it ended. */
  stop(timeoutMs?: number): Promise<number | string | null>;
}

const daemons: Daemon[] = [];
afterEach(() => {
  for (const daemon of daemons.splice(0)) if (daemon.alive()) void daemon.kill();
});

/** Starts `node dist/cli/main.js run ...args` in `cwd` with only `env` (and PATH). */
export function startDaemon(cwd: string, args: string[], env: Record<string, string> = {}): Daemon {
  const child = spawn(process.execPath, [CLI_PATH, 'run', ...args], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', ...env } });
  let output = '';
  let ended = false;
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => ((ended = true), resolve(code ?? signal))));
  const daemon: Daemon = {
    child,
    pid: child.pid!,
    output: () => output,
    exited,
    alive: () => !ended,
    async waitFor(text, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!output.includes(text)) {
        if (ended) throw new Error(`the daemon exited before '${text}'; its output ends with:\n${output.slice(-2_000)}`);
        if (Date.now() > deadline) throw new Error(`no '${text}' from the daemon within ${timeoutMs} ms; its output ends with:\n${output.slice(-2_000)}`);
        await sleep(25);
      }
    },
    kill() {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      return exited;
    },
    async stop(timeoutMs = 15_000) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => void daemon.kill(), timeoutMs);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
  };
  daemons.push(daemon);
  return daemon;
}
