import { splitDecimalInto } from '../../contract/vote-key.js';

/*
 * The parts of the reminder table (`table.ts`) that are about finding a voter again: IDs packed
 * into numbers, and an open-addressing hash index from (project, voter) to a slot, in typed
 * arrays. Pure; nothing here allocates per call on the numeric path.
 */

/**
 * The two parts of the last ID {@link splitId} accepted: its leading digits, and its last 9 (a
 * typed array: the leading part is beyond a small integer, and would be a heap number elsewhere).
 */
export const idParts = new Float64Array(2);

/**
 * Splits a decimal ID spelled canonically (`0`, or 1 to 24 digits without a leading zero: every
 * Discord snowflake and service user ID) into the number of its leading digits (at most 15, so
 * exact in a double) and the number of its last 9, in {@link idParts}; false for any other text,
 * which the table then keeps as text. `joinDecimal` gives the same text back.
 */
export function splitId(id: string): boolean {
  const n = id.length;
  if (n === 0 || n > 24 || (n > 1 && id.charCodeAt(0) === 48)) return false;
  return splitDecimalInto(id, 0, n, idParts, 0);
}

/** A 32-bit hash of a numeric voter of a project: `id` holds its two parts (see {@link idParts}). */
export function hashNumber(project: number, id: Float64Array): number {
  const high = id[0]!;
  let h = Math.imul(id[1]! ^ 0x9e3779b9, 0x85ebca6b);
  h ^= Math.imul((high >>> 0) ^ ((high / 4_294_967_296) | 0), 0xc2b2ae35);
  h ^= Math.imul(project + 1, 0x27d4eb2f);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 12);
}

/** A 32-bit hash of a voter kept as text (FNV-1a, mixed). */
export function hashText(project: number, text: string): number {
  let h = 0x811c9dc5 ^ Math.imul(project + 1, 0x27d4eb2f);
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 12);
}

/** What the index asks of its table: a slot's hash, and whether a slot is the voter looked for. */
export interface SlotKeys {
  hashOf(slot: number): number;
  isWanted(slot: number): boolean;
}

/** The most slots an index holds: a cell keeps slot + 1 in 24 bits beside a 7-bit tag of its hash. */
export const MAX_SLOTS = 0xffffff - 1;
const SLOT_BITS = 0xffffff;
const tagOf = (hash: number) => (hash >>> 24) & 0x7f;

/**
 * Open addressing with linear probing: each cell holds slot + 1 (0: empty) and 7 bits of the
 * slot's hash, so a probe passing other voters' cells rarely reads their slots (another cache
 * miss each); at most half full, so a probe is short; removal shifts the cells after it back (no
 * tombstones).
 */
export class SlotIndex {
  cells = new Int32Array(128);
  mask = 127;
  /** After {@link find}: the cell of the slot found, or the empty cell where it would go, and the hash's tag. */
  cell = 0;
  private tag = 0;

  constructor(private readonly keys: SlotKeys) {}

  /** The slot whose hash is `hash` and that the keys say is wanted, or -1 ({@link cell} says where it would go). */
  find(hash: number): number {
    const { cells, mask } = this;
    const tag = tagOf(hash);
    this.tag = tag;
    let at = hash & mask;
    for (;;) {
      const entry = cells[at]!;
      if (entry === 0) {
        this.cell = at;
        return -1;
      }
      if (entry >>> 24 === tag && this.keys.isWanted((entry & SLOT_BITS) - 1)) {
        this.cell = at;
        return (entry & SLOT_BITS) - 1;
      }
      at = (at + 1) & mask;
    }
  }

  /**
   * Reads the cell each of the first `count` hashes starts at, and returns them or'ed (for the
   * caller to keep, so that the reads are not optimised away). The reads do not depend on each
   * other, and the loop is short enough for the processor to have many in flight: their cache
   * misses overlap, where {@link find} after {@link find} waits for each in turn.
   */
  warm(hashes: Int32Array, count: number): number {
    const { cells, mask } = this;
    let seen = 0;
    for (let i = 0; i < count; i++) seen |= cells[hashes[i]! & mask]!;
    return seen;
  }

  /** Puts `slot` in the empty cell the last {@link find} stopped at. */
  putAtCell(slot: number): void {
    this.cells[this.cell] = (this.tag << 24) | (slot + 1);
  }

  /** Removes `slot` (which is in the index). */
  remove(slot: number): void {
    const { cells, mask } = this;
    let hole = this.keys.hashOf(slot) & mask;
    while ((cells[hole]! & SLOT_BITS) !== slot + 1) hole = (hole + 1) & mask;
    // Backward shift: each following entry that may move into the hole does.
    for (let at = (hole + 1) & mask; cells[at] !== 0; at = (at + 1) & mask) {
      const wanted = this.keys.hashOf((cells[at]! & SLOT_BITS) - 1) & mask;
      const between = hole <= at ? wanted > hole && wanted <= at : wanted > hole || wanted <= at;
      if (between) continue;
      cells[hole] = cells[at]!;
      hole = at;
    }
    cells[hole] = 0;
  }

  /** Whether `count` slots fit at most half full. */
  fits(count: number): boolean {
    return count * 2 <= this.cells.length;
  }

  /** Rebuilds the index big enough for `count` slots, from the first `n` of `slots` (every slot in it). */
  grow(count: number, slots: Int32Array, n: number): void {
    let size = this.cells.length;
    while (count * 2 > size) size *= 2;
    const cells = new Int32Array(size);
    const mask = size - 1;
    for (let i = 0; i < n; i++) {
      const slot = slots[i]!;
      const hash = this.keys.hashOf(slot);
      let at = hash & mask;
      while (cells[at] !== 0) at = (at + 1) & mask;
      cells[at] = (tagOf(hash) << 24) | (slot + 1);
    }
    this.cells = cells;
    this.mask = mask;
  }

  /** Empties the index. */
  clear(): void {
    this.cells = new Int32Array(128);
    this.mask = 127;
  }
}
