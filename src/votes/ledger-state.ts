import type { JournalRecord } from './ledger-records.js';
import type { DeadLetter, LedgerEntry, Vote } from './types.js';

/** A vote the ledger keeps whole: pending, or finished with a dead letter outstanding. */
interface LiveEntry {
  vote: Vote;
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

/** When the vote expires (epoch ms); a malformed `expiresAt` falls back to the contract's 12 h. */
export function expiresAtMs(vote: Vote): number {
  const expires = Date.parse(vote.expiresAt);
  if (Number.isFinite(expires)) return expires;
  const created = Date.parse(vote.createdAt);
  return Number.isFinite(created) ? created + TWELVE_HOURS_MS : 0;
}

/** A copy that shares nothing mutable with the original (a vote is flat but for `user`). */
export const copyVote = (vote: Vote): Vote => (vote.user === undefined ? { ...vote } : { ...vote, user: { ...vote.user } });

const copyLetter = (letter: DeadLetter): DeadLetter => ({ ...letter, vote: copyVote(letter.vote) });
const letterId = (key: string, hook: string) => `${key}\u0000${hook}`;
/** Shared by every entry with nothing done yet; lists are replaced, never changed in place. */
const NONE: string[] = [];
const without = (list: string[], item: string) => list.filter((value) => value !== item);

/**
 * `map`, or a new one once it is empty. A map that every batch of votes fills and empties is
 * rebuilt by V8 as it grows and shrinks, and the tables of a map that has lived a while are made in
 * the old generation, which only a full collection frees: at thousands of votes a second that
 * garbage grows the process. A new empty map is young, and so are the tables it makes.
 */
export function renewedWhenEmpty<K, V>(map: Map<K, V>): Map<K, V> {
  return map.size === 0 ? new Map() : map;
}

/** The maps behind a {@link LedgerState}. */
interface LedgerMaps {
  readonly keepKeysForMs: number;
  /** Every key the ledger knows, with its vote's expiry (epoch ms): the dedupe set (no vote kept). */
  readonly known: Map<string, number>;
  /** Votes kept whole, from their `p` record to their `c` record (and while a dead letter is outstanding). */
  live: Map<string, LiveEntry>;
  readonly letters: Map<string, DeadLetter>;
}

/** Creates an empty {@link LedgerState}; finished keys are kept `keepKeysForMs` past their vote's expiry. */
export function createLedgerState(keepKeysForMs: number): LedgerState {
  const m: LedgerMaps = { keepKeysForMs, known: new Map(), live: new Map(), letters: new Map() };
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

function putLive(m: LedgerMaps, vote: Vote, entry: Omit<LiveEntry, 'vote'>): void {
  m.known.set(vote.key, expiresAtMs(vote));
  // Delete first: a key recorded again (after it was forgotten) moves to the end of the order.
  m.live.delete(vote.key);
  m.live.set(vote.key, { vote, ...entry });
}

function apply(m: LedgerMaps, record: JournalRecord): void {
  switch (record.t) {
    case 'p':
      // A `p` for a key already known can only follow a forgetting that the journal did not show
      // yet (compaction forgets in memory before it rewrites): it is a new vote under that key.
      putLive(m, record.v, { done: NONE, deadLettered: NONE, complete: false });
      return;
    case 'e':
      putLive(m, record.v, { done: [...record.done], deadLettered: [...record.dl], complete: record.c });
      return;
    case 'k':
      m.known.set(record.k, record.e);
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
      // The vote itself is needed no more, only its key.
      if (entry.deadLettered.length === 0) {
        m.live.delete(record.k);
        // Emptied, a new map (see {@link renewedWhenEmpty}).
        m.live = renewedWhenEmpty(m.live);
      }
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
      // The vote reminders' record of a version 2 journal: none of the ledger's business.
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
    putLive(m, letter.vote, { done: NONE, deadLettered: NONE, complete: false });
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
    entries.push({ vote: copyVote(entry.vote), done: [...entry.done], complete: false, deadLettered: [...entry.deadLettered] });
  }
  return entries;
}

function forget(m: LedgerMaps, now: number): number {
  const lettered = new Set([...m.letters.values()].map((letter) => letter.key));
  let forgotten = 0;
  for (const [key, expires] of m.known) {
    // Pending votes are never forgotten, however old: their hooks are still owed; nor the keys of dead letters.
    if (expires + m.keepKeysForMs >= now || m.live.has(key) || lettered.has(key)) continue;
    m.known.delete(key);
    forgotten += 1;
  }
  return forgotten;
}

function snapshot(m: LedgerMaps): JournalRecord[] {
  const records: JournalRecord[] = [];
  for (const [key, expires] of m.known) if (!m.live.has(key)) records.push({ t: 'k', k: key, e: expires });
  for (const entry of m.live.values()) {
    records.push({ t: 'e', v: entry.vote, done: entry.done, dl: entry.deadLettered, c: entry.complete });
  }
  for (const letter of m.letters.values()) records.push({ t: 'd', l: letter });
  return records;
}

function snapshotBytes(m: LedgerMaps): number {
  // `{"t":"k","k":"<key>","e":1700000000000}\n` is 33 bytes besides the key.
  let bytes = 0;
  for (const key of m.known.keys()) if (!m.live.has(key)) bytes += key.length + 33;
  for (const entry of m.live.values()) {
    bytes += JSON.stringify(entry.vote).length + 40 + entry.done.join('","').length + entry.deadLettered.join('","').length;
  }
  for (const letter of m.letters.values()) bytes += JSON.stringify(letter).length + 14;
  return bytes;
}
