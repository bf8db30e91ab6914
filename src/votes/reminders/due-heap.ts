import { CHUNK_MASK, type SlotChunks } from './slots.js';

/*
 * The reminder table's order (`table.ts`): a binary min-heap of slot numbers by due time, read
 * from the slots' columns (`slots.ts`), with each slot's place in it so that a reminder can be
 * moved or taken out wherever it is. Two `Int32Array`s, 8 bytes a slot, grown half as big again
 * by copying; no object per reminder.
 */

const FIRST_CAPACITY = 64;

/** Slots ordered by expiry, the older vote first on a tie (the delay is the same for all: it does not change the order). */
export class DueHeap {
  /** The slots, as a binary heap. */
  private heap = new Int32Array(FIRST_CAPACITY);
  /** A slot's place in {@link heap}. */
  private at = new Int32Array(FIRST_CAPACITY);
  /** Slots in the heap. */
  size = 0;

  constructor(private readonly slots: SlotChunks) {}

  /** The slot at place `i` (0: the soonest), for a walk of the heap. */
  slotAt(i: number): number {
    return this.heap[i]!;
  }

  /** The heap's array and its first {@link size} slots: every slot in it (for the index's rebuild). */
  get entries(): Int32Array {
    return this.heap;
  }

  /** Adds `slot`, whose times are written. */
  push(slot: number): void {
    if (slot >= this.heap.length || this.size === this.heap.length) this.grow(Math.max(slot + 1, this.size + 1));
    this.heap[this.size] = slot;
    this.at[slot] = this.size;
    this.size += 1;
    this.siftUp(this.size - 1);
  }

  /** Puts `slot`, in the heap, back in order after its times changed. */
  moved(slot: number): void {
    this.siftUp(this.siftDown(this.at[slot]!));
  }

  /** Takes `slot`, in the heap, out. */
  remove(slot: number): void {
    const at = this.at[slot]!;
    this.size -= 1;
    if (at === this.size) return;
    const last = this.heap[this.size]!;
    this.heap[at] = last;
    this.at[last] = at;
    this.siftUp(this.siftDown(at));
  }

  /** Empties the heap (and gives its arrays back). */
  clear(): void {
    this.heap = new Int32Array(FIRST_CAPACITY);
    this.at = new Int32Array(FIRST_CAPACITY);
    this.size = 0;
  }

  /** Bytes of the two arrays. */
  bytes(): number {
    return this.heap.byteLength + this.at.byteLength;
  }

  /** Whether slot `a` is due before slot `b` (ties: the older vote first). */
  before(a: number, b: number): boolean {
    const ca = this.slots.chunkOf(a);
    const cb = this.slots.chunkOf(b);
    const ea = ca.expires[a & CHUNK_MASK]!;
    const eb = cb.expires[b & CHUNK_MASK]!;
    return ea < eb || (ea === eb && ca.created[a & CHUNK_MASK]! < cb.created[b & CHUNK_MASK]!);
  }

  /** Both arrays half as big again (at least `slots`), copied. */
  private grow(slots: number): void {
    const size = Math.max(slots, Math.ceil(this.heap.length * 1.5));
    const heap = new Int32Array(size);
    heap.set(this.heap);
    const at = new Int32Array(size);
    at.set(this.at);
    this.heap = heap;
    this.at = at;
  }

  /** Moves the slot at place `at` down to its place; returns where it ended. */
  private siftDown(at: number): number {
    const heap = this.heap;
    const slot = heap[at]!;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.before(heap[right]!, heap[left]!) ? right : left;
      if (!this.before(heap[child]!, slot)) break;
      heap[at] = heap[child]!;
      this.at[heap[at]!] = at;
      at = child;
    }
    heap[at] = slot;
    this.at[slot] = at;
    return at;
  }

  private siftUp(at: number): void {
    const heap = this.heap;
    const slot = heap[at]!;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.before(slot, heap[parent]!)) break;
      heap[at] = heap[parent]!;
      this.at[heap[at]!] = at;
      at = parent;
    }
    heap[at] = slot;
    this.at[slot] = at;
  }
}
