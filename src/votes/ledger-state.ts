import { isoMs, lastIsoInto } from '../contract/iso-time.js';
import { pendingLine, voteOfPendingLine, type JournalRecord } from './ledger-records.js';
import { ChurnMap } from '../runtime/churn-map.js';
import { KeyTable } from './ledger-keys.js';
import type { DeadLetter, LedgerEntry, Vote } from './types.js';

/**
 * A vote the ledger keeps whole: pending, or finished with a dead letter outstanding. The vote is
 * kept as its journal line (a string made for the journal anyway, immutable, one heap object):
 * read back only at open, on recovery and for a snapshot.
 */
interface LiveEntry {
  line: string;
  done: string[];
  deadLettered: string[];
  complete: boolean;
}

/** Which dead letters a take or a listing is about. */
export interface DeadLetterFilter {
  keys?: readonly string[];
  hook?: string;
}

/**
 * The in-memory model of a vote ledger, changed only by {@link LedgerState.apply}: the memory
 * ledger applies records and stops there, the file ledger also appends them to its journal and
 * replays them on open. One model for both keeps the two ledgers' behaviour identical.
 */
export interface LedgerState {
  apply(record: JournalRecord): void;
  has(key: string): boolean;
  /** Pending entries (copies), in the order they were recorded. */
  pending(): LedgerEntry[];
  /** Dead letters (copies) matching `filter`, oldest first. */
  letters(filter?: DeadLetterFilter): DeadLetter[];
  /** Forgets finished keys whose vote expired more than `keepKeysForMs` before `now`; returns how many. */
  forget(now: number): number;
  /** Records that rebuild this state from nothing (a compacted journal). */
  snapshot(): JournalRecord[];
  /** About how many bytes {@link snapshot} takes as journal lines. */
  snapshotBytes(): number;
  counts(): { keys: number; pending: number; deadLetters: number };
}

const TWELVE_HOURS_MS = 12 * 60 * 60 * 1000;

/** Scratch of {@link expiresAtMs} (typed: no heap number per call). */
const EXPIRES = new Float64Array(1);

/**
 * When the vote expires (epoch ms); a malformed `expiresAt` falls back to the contract's 12 h.
 * `Date.parse`'s answer without `Date.parse` for the service's spelling, and shared with the vote
 * reminders, which read the same `expiresAt` just before (`lastIsoInto`).
 */
export function expiresAtMs(vote: Vote): number {
  if (lastIsoInto(vote.expiresAt, EXPIRES, 0)) return EXPIRES[0]!;
  const created = isoMs(vote.createdAt);
  return Number.isFinite(created) ? created + TWELVE_HOURS_MS : 0;
}

/** A copy that shares nothing mutable with the original (a vote is flat but for `user`). */
export const copyVote = (vote: Vote): Vote => (vote.user === undefined ? { ...vote } : { ...vote, user: { ...vote.user } });

/**
 * Expiries are kept in whole minutes (rounded up): small integers that V8 stores inline in the
 * map, where epoch milliseconds would each be a separate heap object (100 000 of them for a busy bot).
 */
const MINUTE_MS = 60_000;
const toMinutes = (ms: number) => Math.ceil(ms / MINUTE_MS);

const copyLetter = (letter: DeadLetter): DeadLetter => ({ ...letter, vote: copyVote(letter.vote) });
const letterId = (key: string, hook: string) => `${key}\u0000${hook}`;
/** Shared by every entry with nothing done yet; lists are replaced, never changed in place. */
const NONE: string[] = [];
const without = (list: string[], item: string) => list.filter((value) => value !== item);

/** The maps behind a {@link LedgerState}. */
interface LedgerMaps {
  readonly keepKeysForMs: number;
  /** Every key the ledger knows, with its vote's expiry in minutes: the dedupe set (no vote kept), packed. */
  readonly known: KeyTable;
  /** Votes kept whole, from their `p` record to their `c` record: a vote's stay is short, hence a {@link ChurnMap}. */
  readonly live: ChurnMap<string, LiveEntry>;
  readonly letters: Map<string, DeadLetter>;
}

/** Creates an empty {@link LedgerState}; finished keys are kept `keepKeysForMs` past their vote's expiry. */
export function createLedgerState(keepKeysForMs: number): LedgerState {
  const m: LedgerMaps = { keepKeysForMs, known: new KeyTable(), live: new ChurnMap(), letters: new Map() };
  return {
    apply: (record) => apply(m, record),
    has: (key) => m.known.has(key),
    pending: () => pending(m),
    letters: (filter) => [...m.letters.values()].filter((letter) => matches(letter, filter)).map(copyLetter),
    forget: (now) => forget(m, now),
    snapshot: () => snapshot(m),
    snapshotBytes: () => snapshotBytes(m),
    counts() {
      let pendingCount = 0;
      for (const entry of m.live.values()) if (!entry.complete) pendingCount += 1;
      return { keys: m.known.size, pending: pendingCount, deadLetters: m.letters.size };
    },
  };
}

function putLive(m: LedgerMaps, vote: Vote, line: string | undefined, done: string[], deadLettered: string[], complete: boolean): void {
  m.known.set(vote.key, toMinutes(expiresAtMs(vote)));
  // Delete first: a key recorded again (after it was forgotten) moves to the end of the order.
  m.live.delete(vote.key);
  m.live.set(vote.key, { line: line ?? pendingLine(vote), done, deadLettered, complete });
}

function apply(m: LedgerMaps, record: JournalRecord): void {
  switch (record.t) {
    case 'p':
      // A `p` for a key already known can only follow a forgetting that the journal did not show
      // yet (compaction forgets in memory before it rewrites): it is a new vote under that key.
      putLive(m, record.v, record.line, NONE, NONE, false);
      return;
    case 'e':
      putLive(m, record.v, undefined, [...record.done], [...record.dl], record.c);
      return;
    case 'k':
      m.known.set(record.k, toMinutes(record.e));
      return;
    case 'h': {
      const entry = m.live.get(record.k);
      if (entry !== undefined && !entry.done.includes(record.h)) entry.done = [...entry.done, record.h];
      return;
    }
    case 'c': {
      const entry = m.live.get(record.k);
      if (entry === undefined) return;
      entry.complete = true;
      // The vote itself is needed no more, only its key: that keeps memory small for busy bots.
      if (entry.deadLettered.length === 0) m.live.delete(record.k);
      return;
    }
    case 'd': {
      m.letters.set(letterId(record.l.key, record.l.hook), record.l);
      const entry = m.live.get(record.l.key);
      if (entry !== undefined && !entry.deadLettered.includes(record.l.hook)) entry.deadLettered = [...entry.deadLettered, record.l.hook];
      return;
    }
    case 'x':
      takeLetter(m, record.k, record.h);
      return;
    case 'r':
      // The companion's (ledger-companion.ts), replayed to it by the file ledger: no state here.
      return;
  }
}

/** An `x` record: the dead letter is taken, its vote pending again. */
function takeLetter(m: LedgerMaps, key: string, hook: string): void {
  const id = letterId(key, hook);
  const letter = m.letters.get(id);
  m.letters.delete(id);
  const entry = m.live.get(key);
  if (entry !== undefined) {
    entry.deadLettered = without(entry.deadLettered, hook);
    entry.complete = false;
  } else if (letter !== undefined) {
    // Only a damaged journal loses the entry of a dead letter: which other hooks were done is
    // unknown then, so the vote comes back with none done (at least once beats never).
    putLive(m, letter.vote, undefined, NONE, NONE, false);
  }
}

function matches(letter: DeadLetter, filter: DeadLetterFilter | undefined): boolean {
  if (filter?.hook !== undefined && letter.hook !== filter.hook) return false;
  return filter?.keys === undefined || filter.keys.includes(letter.key);
}

function pending(m: LedgerMaps): LedgerEntry[] {
  const entries: LedgerEntry[] = [];
  for (const entry of m.live.values()) {
    if (entry.complete) continue;
    entries.push({ vote: voteOfPendingLine(entry.line), done: [...entry.done], complete: false, deadLettered: [...entry.deadLettered] });
  }
  return entries;
}

function forget(m: LedgerMaps, now: number): number {
  // Pending votes are never forgotten, however old: their hooks are still owed; nor the keys of dead letters.
  const kept = [...m.live.keys(), ...[...m.letters.values()].map((letter) => letter.key)];
  return m.known.prune((expires) => expires * MINUTE_MS + m.keepKeysForMs >= now, kept);
}

function snapshot(m: LedgerMaps): JournalRecord[] {
  const records: JournalRecord[] = [];
  for (const [key, expires] of m.known.entries()) if (!m.live.has(key)) records.push({ t: 'k', k: key, e: expires * MINUTE_MS });
  for (const entry of m.live.values()) {
    records.push({ t: 'e', v: voteOfPendingLine(entry.line), done: entry.done, dl: entry.deadLettered, c: entry.complete });
  }
  for (const letter of m.letters.values()) records.push({ t: 'd', l: letter });
  return records;
}

function snapshotBytes(m: LedgerMaps): number {
  // `{"t":"k","k":"<key>","e":1700000000000}\n` is 33 bytes besides the key.
  // Every live key is known (`putLive`): all the keys, less the live ones (spelled out as `e` records below).
  let bytes = m.known.keyChars + 33 * m.known.size;
  for (const key of m.live.keys()) bytes -= key.length + 33;
  // An `e` record spells the vote out with its field names: about 100 bytes more than its `p` line.
  for (const entry of m.live.values()) bytes += entry.line.length + 140 + entry.done.join('","').length + entry.deadLettered.join('","').length;
  for (const letter of m.letters.values()) bytes += JSON.stringify(letter).length + 14;
  return bytes;
}
