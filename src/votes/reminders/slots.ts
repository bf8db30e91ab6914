/*
 * The reminder table's per-slot columns (`table.ts`), in chunks of a fixed number of slots, so
 * that the table grows by adding a chunk, never by copying what it holds: growing typed arrays by
 * copying cost the ingestion bench 0.15 µs per vote on average (every column copied into one half
 * as big again, 1.5 times per slot in all) and, each new array a large external allocation, one to
 * three extra mark-compacts per 100,000 votes. A chunk is one ArrayBuffer (one allocation) viewed
 * as each column. A slot's chunk is `chunks[slot >>> CHUNK_BITS]`, its place in it
 * `slot & CHUNK_MASK`: the table looks its chunk up once per operation, then reads and writes the
 * columns as it would flat arrays.
 */

/** Slots per chunk: 2^10 (a chunk is 50 KiB). */
const CHUNK_BITS = 10;
/** Slots per chunk. */
export const CHUNK_SLOTS = 1 << CHUNK_BITS;
/** A slot's place in its chunk: `slot & CHUNK_MASK`. */
export const CHUNK_MASK = CHUNK_SLOTS - 1;

/** Bytes per slot: 4 doubles, 4 32-bit integers, 2 bytes. */
const SLOT_BYTES = 4 * 8 + 4 * 4 + 2;
/** Bytes of one chunk's columns. */
export const CHUNK_BYTES = CHUNK_SLOTS * SLOT_BYTES;

/** The columns of {@link CHUNK_SLOTS} slots (zeroed when made). */
export class SlotChunk {
  /** A numeric voter ID's leading digits and its last 9 (see `splitId`). */
  readonly userHigh: Float64Array;
  readonly userLow: Uint32Array;
  /** The same of the platform ID. */
  readonly platformHigh: Float64Array;
  readonly platformLow: Uint32Array;
  /** Epoch ms of the vote, and of its expiry. */
  readonly created: Float64Array;
  readonly expires: Float64Array;
  /** The project: an index into the table's list of projects. */
  readonly project: Uint32Array;
  /**
   * The hash of the slot's voter (`hashNumber`, `hashText`), kept so that the index, when it
   * grows or removes, reads it instead of computing it again from the voter's columns.
   */
  readonly hash: Int32Array;
  /** The weight when a whole number 0–255. */
  readonly weight: Uint8Array;
  /** The table's flags (road, text IDs, odd weight). */
  readonly flags: Uint8Array;

  constructor() {
    // Doubles first, then 32-bit integers, then bytes: every view aligned to its element size.
    const buffer = new ArrayBuffer(CHUNK_BYTES);
    const n = CHUNK_SLOTS;
    this.userHigh = new Float64Array(buffer, 0, n);
    this.platformHigh = new Float64Array(buffer, 8 * n, n);
    this.created = new Float64Array(buffer, 16 * n, n);
    this.expires = new Float64Array(buffer, 24 * n, n);
    this.userLow = new Uint32Array(buffer, 32 * n, n);
    this.platformLow = new Uint32Array(buffer, 36 * n, n);
    this.project = new Uint32Array(buffer, 40 * n, n);
    this.hash = new Int32Array(buffer, 44 * n, n);
    this.weight = new Uint8Array(buffer, 48 * n, n);
    this.flags = new Uint8Array(buffer, 49 * n, n);
  }
}

/**
 * Slots in chunks: {@link chunkOf} of a slot below {@link capacity}; {@link ensure} adds chunks
 * (the existing ones stay where they are).
 */
export class SlotChunks {
  readonly chunks: SlotChunk[] = [];

  /** Slots the chunks hold. */
  get capacity(): number {
    return this.chunks.length * CHUNK_SLOTS;
  }

  /** The chunk of `slot` (below {@link capacity}). */
  chunkOf(slot: number): SlotChunk {
    return this.chunks[slot >>> CHUNK_BITS]!;
  }

  /** Adds chunks until `slots` slots fit. */
  ensure(slots: number): void {
    while (this.chunks.length * CHUNK_SLOTS < slots) this.chunks.push(new SlotChunk());
  }

  /** Bytes of the chunks' columns. */
  bytes(): number {
    return this.chunks.length * CHUNK_BYTES;
  }

  /** Drops every chunk. */
  clear(): void {
    this.chunks.length = 0;
  }
}
