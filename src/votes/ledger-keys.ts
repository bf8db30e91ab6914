/*
 * The ledger's dedupe keys (every vote key it knows, with its vote's expiry in minutes), packed.
 *
 * Why not a `Map<string, number>`: a busy bot keeps 100,000 keys or more, and a map of them
 * cost about 160 bytes a key on the vote path: each key a heap string of its own (cons strings,
 * 60-140 bytes), 24 bytes of the map's entry and its bucket, and tables of that size live in V8's
 * large-object space, where each table a growing map leaves behind stays until a full collection
 * (7-9 MiB at the peak of 100,000 votes). Every key also outlived the young generation, and what
 * outlives it is what makes V8 grow that generation to its largest size.
 *
 * Nearly every key is `<userId>:<created ms>` with both parts plain decimal numbers (`voteKey`),
 * so a key is kept as four 32-bit words, its expiry as a fifth, in one `Int32Array` hashed by
 * open addressing: 20 bytes a slot, at most 80% full. Nothing per key is a JS object. A key of any
 * other form (a user ID that is not a number, an expiry out of range) goes to a plain `Map`
 * beside it; the two never hold the same key.
 */

import { joinDecimal, lastVoteKeyInto, voteKey } from '../contract/vote-key.js';

/** Words per slot: user ID (low 9 digits | taken bit; leading digits' low 32 bits), created ms (low 32 bits; high bits | leading digits' high bits), expiry minutes. */
const STRIDE = 5;
/** Set in a taken slot's first word (the low 9 digits are < 2^30). */
const TAKEN = 0x4000_0000;
const TWO_32 = 4_294_967_296;
/** The user ID's leading digits (all but the last 9) must stay below 2^44: at most 13 digits (IDs of up to 22 digits). */
const MAX_HIGH = 1e13;
const FIRST_SLOTS = 256;
/** Filled at most to 4/5: linear probing stays short, and 100,000 keys fit in 131,072 slots (2.5 MiB). */
const fits = (count: number, slots: number) => count * 5 <= slots * 4;

/** Decimal digits of a non-negative integer below 2^53. */
function digits(n: number): number {
  let count = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    count += 1;
  }
  return count;
}

/** A 32-bit hash of a packed key's four words. */
function hashWords(w0: number, w1: number, w2: number, w3: number): number {
  let h = Math.imul(w0 ^ 0x9e3779b9, 0x85ebca6b);
  h ^= Math.imul(w1 ^ (h >>> 13), 0xc2b2ae35);
  h ^= Math.imul(w2 ^ (h >>> 16), 0x27d4eb2f);
  h ^= Math.imul(w3 ^ (h >>> 15), 0x165667b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 12);
}

/** Dedupe keys and their expiries (minutes): what the ledger's `known` map was, packed (see the module comment). */
export class KeyTable {
  private words = new Int32Array(FIRST_SLOTS * STRIDE);
  private mask = FIRST_SLOTS - 1;
  private packed = 0;
  /** Keys of another form, or whose expiry is not a 32-bit integer. */
  private readonly others = new Map<string, number>();
  /** The characters of every key held, for the snapshot's size without spelling the keys out. */
  private chars = 0;
  /** The words of the last key read by {@link parse} (`w[4]`: its hash), and that key: a key is looked up, then set, in a row. */
  private readonly w = new Int32Array(5);
  /** The parts of the last key read (`lastVoteKeyInto`): the ID's leading digits, its last 9, the ms. */
  private readonly read = new Float64Array(3);
  private lastKey: string | undefined;
  private lastPacked = false;

  get size(): number {
    return this.packed + this.others.size;
  }

  /** The characters of all the keys held (for {@link LedgerState.snapshotBytes}). */
  get keyChars(): number {
    return this.chars;
  }

  // A key that packs may still be among the others, set with an expiry that does not: `others.size` first, it is nearly always 0.

  has(key: string): boolean {
    if (!this.parse(key)) return this.others.has(key);
    return this.find() >= 0 || (this.others.size > 0 && this.others.has(key));
  }

  get(key: string): number | undefined {
    if (!this.parse(key)) return this.others.get(key);
    const at = this.find();
    if (at >= 0) return this.words[at + 4];
    return this.others.size > 0 ? this.others.get(key) : undefined;
  }

  set(key: string, minutes: number): this {
    if (!this.parse(key) || (minutes | 0) !== minutes) {
      // Held as text; a packed entry of the same key (set with an expiry that fitted) goes.
      if (this.lastPacked) this.deleteParsed();
      if (!this.others.has(key)) this.chars += key.length;
      this.others.set(key, minutes);
      return this;
    }
    if (this.others.size > 0 && this.others.delete(key)) this.chars -= key.length;
    let at = this.find();
    if (at < 0) {
      if (!fits(this.packed + 1, this.mask + 1)) {
        this.rehash((this.mask + 1) * 2);
        at = this.find();
      }
      at = -at - 1;
      const { words, w } = this;
      words[at] = w[0]!;
      words[at + 1] = w[1]!;
      words[at + 2] = w[2]!;
      words[at + 3] = w[3]!;
      this.packed += 1;
      this.chars += key.length;
    }
    this.words[at + 4] = minutes;
    return this;
  }

  delete(key: string): boolean {
    if (this.parse(key) && this.deleteParsed()) return true;
    if (this.others.size === 0 || !this.others.delete(key)) return false;
    this.chars -= key.length;
    return true;
  }

  clear(): void {
    this.words = new Int32Array(FIRST_SLOTS * STRIDE);
    this.mask = FIRST_SLOTS - 1;
    this.packed = 0;
    this.others.clear();
    this.chars = 0;
    this.lastKey = undefined;
  }

  /** Every key and its expiry, packed ones first (slot order), then the others (insertion order). */
  *entries(): Generator<[string, number]> {
    const { words } = this;
    for (let at = 0; at < words.length; at += STRIDE) if (words[at] !== 0) yield [this.keyAt(at), words[at + 4]!];
    yield* this.others;
  }

  /**
   * Removes the keys that are neither `fresh` (by expiry) nor in `keep`; returns how many went.
   * No key is spelled out (strings of numbers are made in V8's old generation, through its number
   * cache). The table is rebuilt at the size of what is left, so one that grew for a burst shrinks.
   */
  prune(fresh: (minutes: number) => boolean, keep: Iterable<string>): number {
    const kept = new Set<number>();
    const keptOthers = new Set<string>();
    for (const key of keep) {
      if (this.others.size > 0) keptOthers.add(key);
      if (!this.parse(key)) continue;
      const at = this.find();
      if (at >= 0) kept.add(at);
    }
    const { words } = this;
    let removed = 0;
    for (let at = 0; at < words.length; at += STRIDE) {
      if (words[at] === 0 || fresh(words[at + 4]!) || kept.has(at)) continue;
      this.chars -= this.keyLength(at);
      // Emptied in place: the rehash below puts what is left back in order (no probe runs meanwhile).
      words[at] = 0;
      removed += 1;
    }
    this.packed -= removed;
    if (removed > 0) this.rehash(this.slotsFor(this.packed));
    for (const [key, minutes] of this.others) {
      if (fresh(minutes) || keptOthers.has(key)) continue;
      this.others.delete(key);
      this.chars -= key.length;
      removed += 1;
    }
    return removed;
  }

  /**
   * Reads `key` into {@link w} when it is `<userId>:<ms>` with both parts canonical decimal numbers
   * (no leading zero, the user ID at most 22 digits, the ms at most 15); false for any other key.
   * (`lastVoteKeyInto` reads it, and remembers it for the vote reminders that read it next.)
   */
  private parse(key: string): boolean {
    if (key === this.lastKey) return this.lastPacked;
    this.lastKey = key;
    this.lastPacked = false;
    const parts = this.read;
    // The leading digits (all but the last 9) below 10^13: IDs of up to 22 digits.
    if (!lastVoteKeyInto(key, parts, 0) || parts[0]! >= MAX_HIGH) return false;
    const high = parts[0]!;
    const low = parts[1]!;
    const ms = parts[2]!;
    const { w } = this;
    // `>>> 0` takes the low 32 bits of an integer below 2^53 exactly (no float division or modulo).
    const highLow = high >>> 0;
    const msLow = ms >>> 0;
    w[0] = low | TAKEN;
    w[1] = highLow;
    w[2] = msLow;
    // ms < 10^15 < 2^50: 18 bits above the low 32; the leading digits < 10^13 < 2^44: 12 above theirs.
    w[3] = (ms - msLow) / TWO_32 + ((high - highLow) / TWO_32) * 262_144;
    w[4] = hashWords(w[0]!, w[1]!, w[2]!, w[3]!);
    this.lastPacked = true;
    return true;
  }

  /** The slot of the key in {@link w} (its first word's index), or `-(the empty slot where it would go) - 1`. */
  private find(): number {
    const { words, mask, w } = this;
    const w0 = w[0]!;
    const w1 = w[1]!;
    const w2 = w[2]!;
    const w3 = w[3]!;
    let slot = w[4]! & mask;
    for (;;) {
      const at = slot * STRIDE;
      const first = words[at]!;
      if (first === 0) return -at - 1;
      if (first === w0 && words[at + 1] === w1 && words[at + 2] === w2 && words[at + 3] === w3) return at;
      slot = (slot + 1) & mask;
    }
  }

  /** Removes the key in {@link w}: the slots after it in its run shift back (no tombstones). */
  private deleteParsed(): boolean {
    const at = this.find();
    if (at < 0) return false;
    const { words, mask } = this;
    this.chars -= this.keyLength(at);
    this.packed -= 1;
    let hole = at / STRIDE;
    for (let slot = (hole + 1) & mask; words[slot * STRIDE] !== 0; slot = (slot + 1) & mask) {
      const home = this.hashAt(slot * STRIDE) & mask;
      // The entry stays when its home lies cyclically in (hole, slot]: moving it would put it before its home.
      const stays = hole <= slot ? home > hole && home <= slot : home > hole || home <= slot;
      if (stays) continue;
      words.copyWithin(hole * STRIDE, slot * STRIDE, slot * STRIDE + STRIDE);
      hole = slot;
    }
    words.fill(0, hole * STRIDE, hole * STRIDE + STRIDE);
    return true;
  }

  private hashAt(at: number): number {
    const { words } = this;
    return hashWords(words[at]!, words[at + 1]!, words[at + 2]!, words[at + 3]!);
  }

  /** The fewest slots (a power of two, at least the first size) that hold `count` keys. */
  private slotsFor(count: number): number {
    let slots = FIRST_SLOTS;
    while (!fits(count, slots)) slots *= 2;
    return slots;
  }

  /** Moves every taken slot of `from` (default the table itself) into a new table of `slots` slots. */
  private rehash(slots: number, from = this.words): void {
    const words = new Int32Array(slots * STRIDE);
    const mask = slots - 1;
    for (let at = 0; at < from.length; at += STRIDE) {
      if (from[at] === 0) continue;
      let slot = hashWords(from[at]!, from[at + 1]!, from[at + 2]!, from[at + 3]!) & mask;
      while (words[slot * STRIDE] !== 0) slot = (slot + 1) & mask;
      const to = slot * STRIDE;
      for (let i = 0; i < STRIDE; i++) words[to + i] = from[at + i]!;
    }
    this.words = words;
    this.mask = mask;
  }

  private parts(at: number): { high: number; low: number; ms: number } {
    const { words } = this;
    const top = words[at + 3]!;
    return {
      low: words[at]! & ~TAKEN,
      high: (top >>> 18) * TWO_32 + (words[at + 1]! >>> 0),
      ms: (top & 0x3ffff) * TWO_32 + (words[at + 2]! >>> 0),
    };
  }

  /** The key of the slot at `at`, spelled as it was set. */
  private keyAt(at: number): string {
    const { high, low, ms } = this.parts(at);
    return voteKey(joinDecimal(high, low), ms);
  }

  private keyLength(at: number): number {
    const { high, low, ms } = this.parts(at);
    return (high === 0 ? digits(low) : digits(high) + 9) + 1 + digits(ms);
  }
}
