/*
 * The parts of the reminder table (`table.ts`) that are about finding a voter again: IDs packed
 * into numbers, and an open-addressing hash index from (project, voter) to a slot, in typed
 * arrays. Pure; nothing here allocates per call on the numeric path.
 */

/** The two parts of the last ID {@link splitId} accepted: its leading digits, and its last 9. */
export const idParts = { high: 0, low: 0 };

/**
 * Splits a decimal ID spelled canonically (`0`, or 1 to 24 digits without a leading zero: every
 * Discord snowflake and service user ID) into the number of its leading digits (at most 15, so
 * exact in a double) and the number of its last 9, in {@link idParts}; false for any other text,
 * which the table then keeps as text. {@link joinId} gives the same text back.
 */
export function splitId(id: string): boolean {
  const n = id.length;
  if (n === 0 || n > 24 || (n > 1 && id.charCodeAt(0) === 48)) return false;
  const cut = n > 9 ? n - 9 : 0;
  let high = 0;
  for (let i = 0; i < cut; i++) {
    const digit = id.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return false;
    high = high * 10 + digit;
  }
  let low = 0;
  for (let i = cut; i < n; i++) {
    const digit = id.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return false;
    low = low * 10 + digit;
  }
  idParts.high = high;
  idParts.low = low;
  return true;
}

/** The text of an ID split by {@link splitId}. */
export function joinId(high: number, low: number): string {
  return high === 0 ? String(low) : `${high}${String(low + 1e9).slice(1)}`;
}

/** A 32-bit hash of a numeric voter of a project. */
export function hashNumber(project: number, high: number, low: number): number {
  let h = Math.imul(low ^ 0x9e3779b9, 0x85ebca6b);
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

/**
 * Open addressing with linear probing: `cells` holds slot + 1 (0: empty), at most half full, so a
 * probe is short; removal shifts the cells after it back (no tombstones). The table says how to
 * hash a slot (`home`) and whether a slot is the voter looked for (`matches`).
 */
export class SlotIndex {
  cells = new Int32Array(128);
  mask = 127;
  /** After {@link find}: the cell of the slot found, or the empty cell where it would go. */
  cell = 0;

  constructor(
    private readonly home: (slot: number) => number,
    private readonly matches: (slot: number) => boolean,
  ) {}

  /** The slot whose hash is `hash` and that `matches`, or -1 ({@link cell} says where it would go). */
  find(hash: number): number {
    const { cells, mask } = this;
    let at = hash & mask;
    for (;;) {
      const entry = cells[at]!;
      if (entry === 0 || this.matches(entry - 1)) {
        this.cell = at;
        return entry - 1;
      }
      at = (at + 1) & mask;
    }
  }

  /** Puts `slot` in the empty cell the last {@link find} stopped at. */
  putAtCell(slot: number): void {
    this.cells[this.cell] = slot + 1;
  }

  /** Removes `slot` (which is in the index). */
  remove(slot: number): void {
    const { cells, mask } = this;
    let hole = this.home(slot) & mask;
    while (cells[hole] !== slot + 1) hole = (hole + 1) & mask;
    // Backward shift: each following entry that may move into the hole does.
    for (let at = (hole + 1) & mask; cells[at] !== 0; at = (at + 1) & mask) {
      const wanted = this.home(cells[at]! - 1) & mask;
      const between = hole <= at ? wanted > hole && wanted <= at : wanted > hole || wanted <= at;
      if (between) continue;
      cells[hole] = cells[at]!;
      hole = at;
    }
    cells[hole] = 0;
  }

  /** Makes room for `count` slots at most half full: rebuilt bigger from `slots` when needed. */
  reserve(count: number, slots: () => Iterable<number>): void {
    if (count * 2 <= this.cells.length) return;
    let size = this.cells.length;
    while (count * 2 > size) size *= 2;
    this.cells = new Int32Array(size);
    this.mask = size - 1;
    for (const slot of slots()) {
      let at = this.home(slot) & this.mask;
      while (this.cells[at] !== 0) at = (at + 1) & this.mask;
      this.cells[at] = slot + 1;
    }
  }

  /** Empties the index. */
  clear(): void {
    this.cells = new Int32Array(128);
    this.mask = 127;
  }
}
