import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { unrefDelay, type Delay } from '../contract/timer-delay.js';
import { fsReason } from './errors.js';
import type { FileStoreFs } from './fs.js';

/**
 * Whether the state directory can be written, as the agent's writers found it: one per directory,
 * shared by the file store (`state.json`) and the file vote ledger (`votes.journal`), so `/readyz`,
 * the status page and `/metrics` say the same thing for both. A failed write marks it unwritable
 * with the reason in words; while it is, a probe runs on a backoff (first after `firstMs`, doubling
 * up to `maxMs`), so the directory becomes writable again by itself, traffic or not.
 *
 * Only a probe marks it writable again, never an ordinary write: once the disk filled, the vote
 * ledger writes its completion records into the space its reserve gave back, and those writes
 * succeed while the disk is still full. The probe asks every writer (the ledger takes its reserve
 * back: it succeeds only when the disk has room again).
 */

/** Why the directory cannot be written: the `problem` label of `listing_agent_state_write_errors_total`. */
export type WriteProblem = 'no_space' | 'read_only' | 'denied' | 'other';

/** Every {@link WriteProblem}, for the metric's known labels. */
export const WRITE_PROBLEMS: readonly WriteProblem[] = ['no_space', 'read_only', 'denied', 'other'];

/** Where the directory stands. */
export interface WriteHealthState {
  writable: boolean;
  /** Undefined while writable. */
  problem: WriteProblem | undefined;
  /** The reason in words (`no space left on the device holding /var/lib/listing-agent`); undefined while writable. */
  reason: string | undefined;
  /** Epoch ms of the last change between writable and not. */
  since: number;
  /** Epoch ms of the next probe while unwritable. */
  nextProbeAt: number | undefined;
}

/** The default backoff of the probe: 500 ms, doubling up to 5 s. */
const PROBE_DELAYS = { firstMs: 500, maxMs: 5_000 } as const;
/** A refused write asks for a probe at once, but not more often than this. */
const NUDGE_EVERY_MS = 500;
/** What the probe file writes: one page, so that a full disk refuses it (an empty file needs no space). */
const PROBE_BYTES = 4_096;

const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);
const READ_ONLY = new Set(['EROFS']);
const DENIED = new Set(['EACCES', 'EPERM']);

/** The first Node.js system error code (`ENOSPC`, ...) on `error` or its chain of causes. */
export function systemErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The root cause of `error`: the system error under the `StoreError`s that wrap it. */
function rootCause(error: unknown): unknown {
  let current: unknown = error;
  for (let depth = 0; depth < 8; depth += 1) {
    const cause = typeof current === 'object' && current !== null ? (current as { cause?: unknown }).cause : undefined;
    if (cause === undefined) return current;
    current = cause;
  }
  return current;
}

/** What kind of failure `error` is (pure). */
export function classifyWriteError(error: unknown): WriteProblem {
  const code = systemErrorCode(error) ?? '';
  if (NO_SPACE.has(code)) return 'no_space';
  if (READ_ONLY.has(code)) return 'read_only';
  if (DENIED.has(code)) return 'denied';
  return 'other';
}

/** The reason in words for a failed write in `directory` (pure). */
export function describeWriteProblem(directory: string, error: unknown): string {
  const code = systemErrorCode(error);
  switch (classifyWriteError(error)) {
    case 'no_space':
      return code === 'EDQUOT'
        ? `the disk quota of the state directory ${directory} is used up`
        : `no space left on the device holding ${directory}`;
    case 'read_only':
      return `the state directory ${directory} is read-only: nothing can be written there`;
    case 'denied':
      return `the state directory ${directory} cannot be written: ${fsReason(rootCause(error))}`;
    case 'other':
      return `cannot write the state directory ${directory}: ${fsReason(rootCause(error))}`;
  }
}

/** The delay before probe number `attempt` (0-based): `firstMs` doubling up to `maxMs` (pure). */
export function probeDelay(attempt: number, delays: { firstMs: number; maxMs: number } = PROBE_DELAYS): number {
  return Math.min(delays.maxMs, delays.firstMs * 2 ** Math.min(attempt, 30));
}

/** Options of {@link createWriteHealth}. */
export interface WriteHealthOptions {
  /** The state directory. */
  directory: string;
  /** Where the probe file is written. Default: `node:fs/promises`. */
  fs: FileStoreFs;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /** The probe's backoff. Default {@link PROBE_DELAYS}: 500 ms doubling up to 5 s. */
  probeDelays?: { firstMs: number; maxMs: number };
  /** Runs `fn` after `ms`; returns a cancel. Default: an unref'd `setTimeout`. */
  schedule?: Delay;
}

/** A writer's part of the probe: what it must be able to write for the directory to count as writable. */
export type Probe = () => Promise<void>;

/** See the module comment. */
export interface WriteHealth {
  readonly directory: string;
  state(): WriteHealthState;
  readonly writable: boolean;
  /** A write failed: unwritable (the reason updated), and the probe scheduled. */
  failed(error: unknown): void;
  /**
   * A write succeeded: while unwritable, the probe runs at once (at most every 500 ms). Only the
   * probe says writable: the write may have gone into the room the reserve gave back.
   */
  succeeded(): void;
  /** A write was refused without trying (the directory is unwritable): probe now, at most every 500 ms. */
  nudge(): void;
  /** Adds a writer's probe (run after the probe file, in the order added); returns its removal. */
  addProbe(probe: Probe): () => void;
  /** Hears every change between writable and not, and every change of the reason; returns its removal. */
  onChange(listener: (state: WriteHealthState) => void): () => void;
  /** Hears every failed write or probe, with its kind (the metric's counter); returns its removal. */
  onFailure(listener: (problem: WriteProblem) => void): () => void;
  /** Resolves once no probe runs (tests, and a writer that closes). */
  settled(): Promise<void>;
  /** Stops probing until the next failed or successful write (the writer closes). */
  close(): void;
}

/** The state of one write health: its options, where it stands, and its probe's timer. */
interface HealthState {
  readonly directory: string;
  readonly fs: FileStoreFs;
  readonly now: () => number;
  readonly schedule: Delay;
  readonly delays: { firstMs: number; maxMs: number };
  current: WriteHealthState;
  readonly probes: Probe[];
  readonly changeListeners: Set<(state: WriteHealthState) => void>;
  readonly failureListeners: Set<(problem: WriteProblem) => void>;
  /** Failed probes in a row: the backoff's step. */
  attempt: number;
  cancelProbe: (() => void) | undefined;
  probing: Promise<void> | undefined;
  lastProbeAt: number;
  closed: boolean;
}

function set(h: HealthState, next: WriteHealthState): void {
  const changed = next.writable !== h.current.writable || next.reason !== h.current.reason;
  h.current = next;
  if (changed) for (const listener of h.changeListeners) listener({ ...h.current });
}

function scheduleProbe(h: HealthState): void {
  h.cancelProbe?.();
  h.cancelProbe = undefined;
  if (h.closed || h.current.writable) return;
  const delayMs = probeDelay(h.attempt, h.delays);
  h.current = { ...h.current, nextProbeAt: h.now() + delayMs };
  h.cancelProbe = h.schedule(() => {
    h.cancelProbe = undefined;
    probe(h);
  }, delayMs);
}

function markFailed(h: HealthState, error: unknown): void {
  h.closed = false;
  const problem = classifyWriteError(error);
  for (const listener of h.failureListeners) listener(problem);
  const reason = describeWriteProblem(h.directory, error);
  if (h.current.writable) {
    h.attempt = 0;
    set(h, { writable: false, problem, reason, since: h.now(), nextProbeAt: undefined });
  } else if (reason !== h.current.reason) {
    set(h, { ...h.current, problem, reason });
  }
  // Every failure makes sure a probe is coming (none was after a close).
  if (h.cancelProbe === undefined && h.probing === undefined) scheduleProbe(h);
}

async function runProbes(h: HealthState): Promise<void> {
  await writeProbeFile(h.fs, h.directory);
  for (const each of [...h.probes]) await each();
}

function probe(h: HealthState): void {
  if (h.probing !== undefined || h.closed || h.current.writable) return;
  h.cancelProbe?.();
  h.cancelProbe = undefined;
  h.lastProbeAt = h.now();
  const run: Promise<void> = runProbes(h).then(
    () => {
      h.attempt = 0;
      if (!h.closed) set(h, { writable: true, problem: undefined, reason: undefined, since: h.now(), nextProbeAt: undefined });
    },
    (error: unknown) => {
      h.attempt += 1;
      h.probing = undefined; // so that the failure schedules the next probe
      markFailed(h, error);
    },
  );
  h.probing = run;
  void run.finally(() => {
    if (h.probing === run) h.probing = undefined;
  });
}

/** A probe now, unless one ran less than {@link NUDGE_EVERY_MS} ago. */
function probeSoon(h: HealthState): void {
  if (!h.current.writable && h.now() - h.lastProbeAt >= NUDGE_EVERY_MS) probe(h);
}

/** Adds `item` to `list`; returns its removal. */
function adding<T>(list: T[] | Set<T>, item: T): () => void {
  if (list instanceof Set) {
    list.add(item);
    return () => void list.delete(item);
  }
  list.push(item);
  return () => {
    const index = list.indexOf(item);
    if (index >= 0) list.splice(index, 1);
  };
}

/** Creates the write health of one state directory, writable to begin with. */
export function createWriteHealth(options: WriteHealthOptions): WriteHealth {
  const now = options.now ?? Date.now;
  const h: HealthState = {
    directory: options.directory,
    fs: options.fs,
    now,
    schedule: options.schedule ?? unrefDelay,
    delays: options.probeDelays ?? PROBE_DELAYS,
    current: { writable: true, problem: undefined, reason: undefined, since: now(), nextProbeAt: undefined },
    probes: [],
    changeListeners: new Set(),
    failureListeners: new Set(),
    attempt: 0,
    cancelProbe: undefined,
    probing: undefined,
    lastProbeAt: Number.NEGATIVE_INFINITY,
    closed: false,
  };
  return {
    directory: h.directory,
    state: () => ({ ...h.current }),
    get writable() {
      return h.current.writable;
    },
    failed: (error) => markFailed(h, error),
    succeeded() {
      h.closed = false;
      probeSoon(h);
    },
    nudge: () => probeSoon(h),
    addProbe: (each) => adding(h.probes, each),
    onChange: (listener) => adding(h.changeListeners, listener),
    onFailure: (listener) => adding(h.failureListeners, listener),
    settled: async () => {
      while (h.probing !== undefined) await h.probing.catch(() => undefined);
    },
    close() {
      h.closed = true;
      h.cancelProbe?.();
      h.cancelProbe = undefined;
    },
  };
}

/** Writes one page to a new file in `directory`, syncs it and removes it: the one sure test of room. */
export async function writeProbeFile(fs: FileStoreFs, directory: string): Promise<void> {
  const path = join(directory, `.write-probe-${randomBytes(4).toString('hex')}`);
  try {
    const handle = await fs.open(path, 'wx', 0o600);
    try {
      await handle.writeFile('\n'.repeat(PROBE_BYTES));
      await handle.datasync();
    } finally {
      await handle.close();
    }
  } finally {
    await fs.unlink(path).catch(() => undefined);
  }
}
