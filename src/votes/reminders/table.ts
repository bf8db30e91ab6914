import type { Vote } from '../types.js';
import { isoInto } from '../../contract/iso-time.js';
import { voteExpiryInto, type ReminderRecord } from './schedule.js';
import { CHUNK_MASK, SlotChunks } from './slots.js';
import { hashNumber, hashText, idParts, joinId, MAX_SLOTS, SlotIndex, splitId, type SlotKeys } from './table-index.js';

/*
 * The reminder schedule, pure (no timer, no file, no clock of its own: every call is given `now`)
 * and lean, so that 100 000 reminders stay a few MiB. One reminder per voter and project: a newer
 * vote of the same user replaces the older one's in place. Each reminder is a slot across typed
 * arrays (IDs packed into numbers, the project an index into a short list), found again by voter
 * through a hash index (`table-index.ts`) and ordered by due time in a binary heap of slot
 * numbers. Nothing per reminder is a JS object or a string, except an ID that is not a plain
 * decimal number (kept as text) and a weight that is not a whole number from 0 to 255; a
 * reminder becomes an object ({@link ReminderRecord}) only when it is due, listed or snapshotted.
 */

/** What {@link ReminderTable.add} or {@link ReminderTable.put} did. */
export type TableResult =
  /** A new reminder. */
  | 'scheduled'
  /** It replaced (superseded) the reminder of an older vote of the same voter. */
  | 'replaced'
  /** Not scheduled: the voter's reminder is for this vote or a newer one already. */
  | 'known'
  /** Not scheduled: the vote had expired when it arrived. */
  | 'expired'
  /** Not scheduled: the vote has no valid date. */
  | 'invalid';

const WEBHOOK = 1;
const USER_TEXT = 2;
const PLATFORM_NULL = 4;
const PLATFORM_TEXT = 8;
const WEIGHT_OTHER = 16;
const FIRST_CAPACITY = 64;

/** The schedule: at most one reminder per voter and project, ordered by due time (expiry + delay). */
export class ReminderTable implements SlotKeys {
  /** Added to each vote's expiry: `votes.reminders.delay`. */
  readonly delayMs: number;
  /** Slots {@link heap} and {@link heapAt} hold (the columns are in {@link slots}, in chunks). */
  private capacity!: number;
  /** Slots ever used (the next new one), live reminders, and the first freed slot (-1: none). */
  private top!: number;
  private live!: number;
  private freeHead!: number;
  /** Each slot's voter, times, weight and flags, in chunks that never move (`slots.ts`). */
  private readonly slots = new SlotChunks();
  /** A live slot's position in the heap; a free slot's -2 - the next free slot. */
  private heapAt!: Int32Array;
  private heap!: Int32Array;
  private heapSize!: number;
  private readonly userTexts = new Map<number, string>();
  private readonly platformTexts = new Map<number, string>();
  private readonly weights = new Map<number, number>();
  private readonly projects: string[] = [];
  private readonly projectIndex = new Map<string, number>();
  /** The voter a lookup is for (read by the index's `isWanted`): project, text ID, or the two parts of a numeric one. */
  private readonly wanted = { project: 0, text: undefined as string | undefined };
  private readonly wantedId = new Float64Array(2);
  /** The hash of the voter of the last lookup (typed: a hash beyond a small integer would be a heap number in a field). */
  private readonly wantedHash = new Int32Array(1);
  /**
   * The created and expires ms of the reminder being set. Epoch ms are beyond small integers:
   * passed from call to call, each would be a new heap number; kept here, none is.
   */
  private readonly times = new Float64Array(2);
  private readonly index = new SlotIndex(this);
  /** The last project looked up, and its number (nearly every vote is for one project). */
  private lastProject = '';
  private lastProjectNumber = -1;

  constructor(options: { delayMs?: number } = {}) {
    this.delayMs = options.delayMs ?? 0;
    this.clear();
  }

  /** How many reminders are scheduled. */
  get size(): number {
    return this.live;
  }

  /** Schedules the reminder of `vote` as of `now`: not for a vote expired by then (see {@link TableResult}). */
  add(vote: Vote, now: number): TableResult {
    if (!voteExpiryInto(vote, this.times, 1)) return 'invalid';
    if (this.times[1]! <= now) return 'expired';
    return this.setVote(vote);
  }

  /** Schedules the reminder of `vote`, whose expiry (`voteExpiryInto`) is `expiresMs`, whatever the time. */
  insert(vote: Vote, expiresMs: number): TableResult {
    this.times[1] = expiresMs;
    return this.setVote(vote);
  }

  /** Puts a reminder back (replayed, or handed back when it could not be sent): the same rules as {@link add}, nothing expires by age. */
  put(record: ReminderRecord): TableResult {
    if (!Number.isFinite(record.createdMs) || !Number.isFinite(record.expiresMs)) return 'invalid';
    this.times[0] = record.createdMs;
    this.times[1] = record.expiresMs;
    return this.set(record.projectId, record.userId, record.platformId, record.weight, record.road === 'webhook');
  }

  /** Removes the reminder of that voter when it is still the one of the vote created at `createdMs`; true when removed. */
  remove(projectId: string, userId: string, createdMs: number): boolean {
    const slot = this.lookUp(projectId, userId);
    if (slot < 0 || this.slots.chunkOf(slot).created[slot & CHUNK_MASK] !== createdMs) return false;
    this.drop(slot);
    return true;
  }

  /** Takes every reminder due at `now` off the schedule, soonest first: those to send, and those due more than `maxLatenessMs` ago. */
  takeDue(now: number, maxLatenessMs: number): { send: ReminderRecord[]; late: ReminderRecord[] } {
    const taken = { send: [] as ReminderRecord[], late: [] as ReminderRecord[] };
    while (this.heapSize > 0) {
      const slot = this.heap[0]!;
      const due = this.expiresOf(slot) + this.delayMs;
      if (due > now) break;
      (now - due > maxLatenessMs ? taken.late : taken.send).push(this.record(slot));
      this.drop(slot);
    }
    return taken;
  }

  /** When the next reminder is due (epoch ms), or undefined when none is scheduled. */
  nextDue(): number | undefined {
    return this.heapSize === 0 ? undefined : this.expiresOf(this.heap[0]!) + this.delayMs;
  }

  /** The due time of a reminder under this table's delay. */
  dueOf(record: Pick<ReminderRecord, 'expiresMs'>): number {
    return record.expiresMs + this.delayMs;
  }

  /** The first `limit` reminders by due time (default all), soonest first: a walk of the heap's top, not a sort of it. */
  list(limit = Number.POSITIVE_INFINITY): { due: number; record: ReminderRecord }[] {
    const out: { due: number; record: ReminderRecord }[] = [];
    const open = this.heapSize > 0 ? [0] : [];
    while (out.length < limit && open.length > 0) {
      let best = 0;
      for (let i = 1; i < open.length; i++) if (this.before(this.heap[open[i]!]!, this.heap[open[best]!]!)) best = i;
      const at = open[best]!;
      open[best] = open[open.length - 1]!;
      open.pop();
      const slot = this.heap[at]!;
      out.push({ due: this.expiresOf(slot) + this.delayMs, record: this.record(slot) });
      for (const child of [2 * at + 1, 2 * at + 2]) if (child < this.heapSize) open.push(child);
    }
    return out;
  }

  /** Every reminder scheduled, in no particular order (a snapshot). */
  records(): ReminderRecord[] {
    const out: ReminderRecord[] = [];
    for (let at = 0; at < this.heapSize; at++) out.push(this.record(this.heap[at]!));
    return out;
  }

  /** Forgets every reminder. */
  clear(): void {
    this.capacity = FIRST_CAPACITY;
    this.top = 0;
    this.live = 0;
    this.freeHead = -1;
    this.heapSize = 0;
    this.slots.clear();
    this.heapAt = new Int32Array(FIRST_CAPACITY);
    this.heap = new Int32Array(FIRST_CAPACITY);
    this.userTexts.clear();
    this.platformTexts.clear();
    this.weights.clear();
    this.index.clear();
  }

  /** Bytes of the typed arrays (the table's size but for text IDs, odd weights and the Map and object headers). */
  arrayBytes(): number {
    return this.slots.bytes() + this.capacity * 8 + this.index.cells.byteLength;
  }

  /** {@link set} for a vote whose expiry is in `times[1]` already. */
  private setVote(vote: Vote): TableResult {
    if (!isoInto(vote.createdAt, this.times, 0) || !Number.isFinite(this.times[1]!)) return 'invalid';
    return this.set(vote.projectId, vote.userId, vote.platformId, vote.weight, vote.road === 'webhook');
  }

  /** Schedules the reminder whose created and expires ms are in {@link times}. */
  private set(projectId: string, userId: string, platformId: string | null, weight: number, webhook: boolean): TableResult {
    if (!this.index.fits(this.live + 1)) this.index.grow(this.live + 1, this.heap, this.heapSize);
    const found = this.lookUp(projectId, userId);
    if (found >= 0) {
      if (this.slots.chunkOf(found).created[found & CHUNK_MASK]! >= this.times[0]!) return 'known';
      this.write(found, platformId, weight, webhook);
      this.siftUp(this.siftDown(this.heapAt[found]!));
      return 'replaced';
    }
    const { text, project } = this.wanted;
    const slot = this.allocate();
    this.index.putAtCell(slot);
    const chunk = this.slots.chunkOf(slot);
    const i = slot & CHUNK_MASK;
    chunk.project[i] = project;
    chunk.hash[i] = this.wantedHash[0]!;
    chunk.flags[i] = text === undefined ? 0 : USER_TEXT;
    if (text === undefined) {
      chunk.userHigh[i] = this.wantedId[0]!;
      chunk.userLow[i] = this.wantedId[1]!;
    } else this.userTexts.set(slot, text);
    this.write(slot, platformId, weight, webhook);
    this.live += 1;
    this.heap[this.heapSize] = slot;
    this.heapAt[slot] = this.heapSize;
    this.heapSize += 1;
    this.siftUp(this.heapSize - 1);
    return 'scheduled';
  }

  /** Finds the slot of a voter (-1: none); the index's cell is where it would go. */
  private lookUp(projectId: string, userId: string): number {
    const wanted = this.wanted;
    wanted.project = this.projectNumber(projectId);
    if (splitId(userId)) {
      wanted.text = undefined;
      this.wantedId[0] = idParts[0]!;
      this.wantedId[1] = idParts[1]!;
      this.wantedHash[0] = hashNumber(wanted.project, this.wantedId);
      return this.index.find(this.wantedHash[0]!);
    }
    wanted.text = userId;
    this.wantedHash[0] = hashText(wanted.project, userId);
    return this.index.find(this.wantedHash[0]!);
  }

  /** Whether `slot` is the voter of the lookup under way (for the index). */
  isWanted(slot: number): boolean {
    const wanted = this.wanted;
    const chunk = this.slots.chunkOf(slot);
    const i = slot & CHUNK_MASK;
    if (chunk.project[i] !== wanted.project) return false;
    if (wanted.text !== undefined) return (chunk.flags[i]! & USER_TEXT) !== 0 && this.userTexts.get(slot) === wanted.text;
    return (chunk.flags[i]! & USER_TEXT) === 0 && chunk.userHigh[i] === this.wantedId[0] && chunk.userLow[i] === this.wantedId[1];
  }

  /** The hash of the voter in `slot` (for the index): kept in the slot when it was made. */
  hashOf(slot: number): number {
    return this.slots.chunkOf(slot).hash[slot & CHUNK_MASK]!;
  }

  private projectNumber(projectId: string): number {
    if (projectId === this.lastProject) return this.lastProjectNumber;
    let number = this.projectIndex.get(projectId);
    if (number === undefined) {
      number = this.projects.push(projectId) - 1;
      this.projectIndex.set(projectId, number);
    }
    this.lastProject = projectId;
    this.lastProjectNumber = number;
    return number;
  }

  /** Everything of a slot but its voter (its times from {@link times}). */
  private write(slot: number, platformId: string | null, weight: number, webhook: boolean): void {
    const chunk = this.slots.chunkOf(slot);
    const i = slot & CHUNK_MASK;
    const before = chunk.flags[i]!;
    let flags = (before & USER_TEXT) | (webhook ? WEBHOOK : 0);
    if ((before & PLATFORM_TEXT) !== 0) this.platformTexts.delete(slot);
    if ((before & WEIGHT_OTHER) !== 0) this.weights.delete(slot);
    if (platformId === null) flags |= PLATFORM_NULL;
    else if (splitId(platformId)) {
      chunk.platformHigh[i] = idParts[0]!;
      chunk.platformLow[i] = idParts[1]!;
    } else {
      flags |= PLATFORM_TEXT;
      this.platformTexts.set(slot, platformId);
    }
    if (Number.isInteger(weight) && weight >= 0 && weight <= 255) chunk.weight[i] = weight;
    else {
      flags |= WEIGHT_OTHER;
      this.weights.set(slot, weight);
    }
    chunk.flags[i] = flags;
    chunk.created[i] = this.times[0]!;
    chunk.expires[i] = this.times[1]!;
  }

  private record(slot: number): ReminderRecord {
    const chunk = this.slots.chunkOf(slot);
    const i = slot & CHUNK_MASK;
    const flags = chunk.flags[i]!;
    const platformId = (flags & PLATFORM_NULL) !== 0 ? null : (flags & PLATFORM_TEXT) !== 0 ? this.platformTexts.get(slot)! : joinId(chunk.platformHigh[i]!, chunk.platformLow[i]!);
    return {
      projectId: this.projects[chunk.project[i]!]!,
      userId: (flags & USER_TEXT) !== 0 ? this.userTexts.get(slot)! : joinId(chunk.userHigh[i]!, chunk.userLow[i]!),
      createdMs: chunk.created[i]!,
      expiresMs: chunk.expires[i]!,
      platformId,
      weight: (flags & WEIGHT_OTHER) !== 0 ? this.weights.get(slot)! : chunk.weight[i]!,
      road: (flags & WEBHOOK) !== 0 ? 'webhook' : 'poll',
    };
  }

  /** Removes a live slot from the heap and the index and frees it. */
  private drop(slot: number): void {
    const at = this.heapAt[slot]!;
    this.heapSize -= 1;
    if (at !== this.heapSize) {
      const last = this.heap[this.heapSize]!;
      this.heap[at] = last;
      this.heapAt[last] = at;
      this.siftUp(this.siftDown(at));
    }
    this.index.remove(slot);
    const flags = this.slots.chunkOf(slot).flags[slot & CHUNK_MASK]!;
    if ((flags & USER_TEXT) !== 0) this.userTexts.delete(slot);
    if ((flags & PLATFORM_TEXT) !== 0) this.platformTexts.delete(slot);
    if ((flags & WEIGHT_OTHER) !== 0) this.weights.delete(slot);
    this.heapAt[slot] = -2 - this.freeHead;
    this.freeHead = slot;
    this.live -= 1;
  }

  private allocate(): number {
    if (this.freeHead >= 0) {
      const slot = this.freeHead;
      this.freeHead = -2 - this.heapAt[slot]!;
      return slot;
    }
    if (this.top === MAX_SLOTS) throw new RangeError(`the reminder schedule holds at most ${MAX_SLOTS} reminders`);
    if (this.top === this.capacity) this.grow();
    this.slots.ensure(this.top + 1);
    return this.top++;
  }

  /**
   * The heap's two arrays half as big again, copied (8 bytes a slot; the columns, 46 bytes a
   * slot, grow by chunks without a copy: `slots.ts`).
   */
  private grow(): void {
    const size = Math.ceil(this.capacity * 1.5);
    const heap = new Int32Array(size);
    heap.set(this.heap);
    const heapAt = new Int32Array(size);
    heapAt.set(this.heapAt);
    this.heap = heap;
    this.heapAt = heapAt;
    this.capacity = size;
  }

  private expiresOf(slot: number): number {
    return this.slots.chunkOf(slot).expires[slot & CHUNK_MASK]!;
  }

  /** Whether slot `a` is due before slot `b` (ties: the older vote first). */
  private before(a: number, b: number): boolean {
    const ca = this.slots.chunkOf(a);
    const cb = this.slots.chunkOf(b);
    const ea = ca.expires[a & CHUNK_MASK]!;
    const eb = cb.expires[b & CHUNK_MASK]!;
    return ea < eb || (ea === eb && ca.created[a & CHUNK_MASK]! < cb.created[b & CHUNK_MASK]!);
  }

  /** Moves the slot at heap position `at` down to its place; returns where it ended. */
  private siftDown(at: number): number {
    const heap = this.heap;
    const slot = heap[at]!;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= this.heapSize) break;
      const right = left + 1;
      const child = right < this.heapSize && this.before(heap[right]!, heap[left]!) ? right : left;
      if (!this.before(heap[child]!, slot)) break;
      heap[at] = heap[child]!;
      this.heapAt[heap[at]!] = at;
      at = child;
    }
    heap[at] = slot;
    this.heapAt[slot] = at;
    return at;
  }

  private siftUp(at: number): void {
    const heap = this.heap;
    const slot = heap[at]!;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.before(slot, heap[parent]!)) break;
      heap[at] = heap[parent]!;
      this.heapAt[heap[at]!] = at;
      at = parent;
    }
    heap[at] = slot;
    this.heapAt[slot] = at;
  }
}
