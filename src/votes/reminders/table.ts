import type { Vote } from '../types.js';
import { DueHeap } from './due-heap.js';
import { voteCreatedInto, voteExpiryInto, type ReminderRecord } from './schedule.js';
import { CHUNK_MASK, SlotChunks } from './slots.js';
import { joinDecimal } from '../../contract/vote-key.js';
import { hashNumber, hashText, idParts, MAX_SLOTS, SlotIndex, splitId, type SlotKeys } from './table-index.js';

/*
 * The reminder schedule, pure (no timer, no file, no clock of its own: every call is given `now`)
 * and lean, so that 100 000 reminders stay a few MiB. One reminder per voter and project: a newer
 * vote of the same user replaces the older one's in place. Each reminder is a slot across typed
 * arrays (IDs packed into numbers, the project an index into a short list), found again by voter
 * through a hash index (`table-index.ts`) and ordered by due time in a binary heap of slot
 * numbers (`due-heap.ts`). Nothing per reminder is a JS object or a string, except an ID that is not a plain
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

/**
 * Votes to schedule in one go, with what was read of each already (`journal-ledger.ts`): the
 * table hashes all their voters first, then schedules them (see {@link ReminderTable.insertBatch}).
 */
export interface VoteBatch {
  /** The votes, the first {@link count} of them. */
  readonly votes: readonly (Vote | undefined)[];
  readonly count: number;
  /** Each vote's expiry (`voteExpiryInto`). */
  readonly expires: Float64Array;
  /**
   * Each vote's key's parts at 3i, 3i + 1, 3i + 2 (`voteKeyPartsInto`: its voter's ID in two
   * numbers, and the vote's ms); NaN at 3i when the vote's key is not one of those.
   */
  readonly keyParts: Float64Array;
}

/** The schedule: at most one reminder per voter and project, ordered by due time (expiry + delay). */
export class ReminderTable implements SlotKeys {
  /** Added to each vote's expiry: `votes.reminders.delay`. */
  readonly delayMs: number;
  /** Slots ever used (the next new one), live reminders, and the first freed slot (-1: none; a free slot's `hash` column holds the next). */
  private top!: number;
  private live!: number;
  private freeHead!: number;
  /** Each slot's voter, times, weight and flags, in chunks that never move (`slots.ts`). */
  private readonly slots = new SlotChunks();
  /** The live slots by due time. */
  private readonly heap = new DueHeap(this.slots);
  /** Each batch vote's voter hash and project number ({@link insertBatch}), reused from batch to batch. */
  private batchHashes = new Int32Array(128);
  private batchProjects = new Int32Array(128);
  /** What {@link SlotIndex.warm} read last: kept, so that the reads are not optimised away. */
  warmth = 0;
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

  /**
   * Schedules a batch of votes ({@link VoteBatch}), whatever the time, as {@link insert} each in
   * order would, and counts into `tally` those scheduled and those that replaced an older vote's.
   * A vote's index lookup is a read at random in a table of a few MiB, nearly always a cache miss:
   * looked up one after the other, each waits for its own. So the voters are hashed first and
   * the cells they start at read in one tight loop, where the processor overlaps the misses; the
   * lookups then find them in the cache.
   */
  insertBatch(batch: VoteBatch, tally: { scheduled: number; replaced: number }): void {
    const { votes, count, expires, keyParts } = batch;
    if (!this.index.fits(this.live + count)) this.index.grow(this.live + count, this.heap.entries, this.heap.size);
    if (this.batchHashes.length < count) {
      this.batchHashes = new Int32Array(count * 2);
      this.batchProjects = new Int32Array(count * 2);
    }
    const hashes = this.batchHashes;
    const projects = this.batchProjects;
    const id = this.wantedId;
    for (let i = 0; i < count; i++) {
      if (keyParts[3 * i] !== keyParts[3 * i]) continue;
      id[0] = keyParts[3 * i]!;
      id[1] = keyParts[3 * i + 1]!;
      projects[i] = this.projectNumber(votes[i]!.projectId);
      hashes[i] = hashNumber(projects[i]!, id);
    }
    this.warmth = this.index.warm(hashes, count);
    for (let i = 0; i < count; i++) {
      const vote = votes[i]!;
      let result: TableResult;
      if (keyParts[3 * i] !== keyParts[3 * i]) result = this.insert(vote, expires[i]!);
      else {
        const wanted = this.wanted;
        wanted.project = projects[i]!;
        wanted.text = undefined;
        id[0] = keyParts[3 * i]!;
        id[1] = keyParts[3 * i + 1]!;
        this.wantedHash[0] = hashes[i]!;
        this.times[0] = keyParts[3 * i + 2]!;
        this.times[1] = expires[i]!;
        result = this.place(this.index.find(hashes[i]!), vote.platformId, vote.weight, vote.road === 'webhook');
      }
      if (result === 'scheduled') tally.scheduled += 1;
      else if (result === 'replaced') tally.replaced += 1;
    }
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
    while (this.heap.size > 0) {
      const slot = this.heap.slotAt(0);
      const due = this.expiresOf(slot) + this.delayMs;
      if (due > now) break;
      (now - due > maxLatenessMs ? taken.late : taken.send).push(this.record(slot));
      this.drop(slot);
    }
    return taken;
  }

  /** When the next reminder is due (epoch ms), or undefined when none is scheduled. */
  nextDue(): number | undefined {
    return this.heap.size === 0 ? undefined : this.expiresOf(this.heap.slotAt(0)) + this.delayMs;
  }

  /** The due time of a reminder under this table's delay. */
  dueOf(record: Pick<ReminderRecord, 'expiresMs'>): number {
    return record.expiresMs + this.delayMs;
  }

  /** The first `limit` reminders by due time (default all), soonest first: a walk of the heap's top, not a sort of it. */
  list(limit = Number.POSITIVE_INFINITY): { due: number; record: ReminderRecord }[] {
    const out: { due: number; record: ReminderRecord }[] = [];
    const heap = this.heap;
    const open = heap.size > 0 ? [0] : [];
    while (out.length < limit && open.length > 0) {
      let best = 0;
      for (let i = 1; i < open.length; i++) if (heap.before(heap.slotAt(open[i]!), heap.slotAt(open[best]!))) best = i;
      const at = open[best]!;
      open[best] = open[open.length - 1]!;
      open.pop();
      const slot = heap.slotAt(at);
      out.push({ due: this.expiresOf(slot) + this.delayMs, record: this.record(slot) });
      for (const child of [2 * at + 1, 2 * at + 2]) if (child < heap.size) open.push(child);
    }
    return out;
  }

  /** Every reminder scheduled, in no particular order (a snapshot). */
  records(): ReminderRecord[] {
    const out: ReminderRecord[] = [];
    for (let at = 0; at < this.heap.size; at++) out.push(this.record(this.heap.slotAt(at)));
    return out;
  }

  /** Forgets every reminder. */
  clear(): void {
    this.top = 0;
    this.live = 0;
    this.freeHead = -1;
    this.slots.clear();
    this.heap.clear();
    this.userTexts.clear();
    this.platformTexts.clear();
    this.weights.clear();
    this.index.clear();
  }

  /** Bytes of the typed arrays (the table's size but for text IDs, odd weights and the Map and object headers). */
  arrayBytes(): number {
    return this.slots.bytes() + this.heap.bytes() + this.index.cells.byteLength;
  }

  /** {@link set} for a vote whose expiry is in `times[1]` already. */
  private setVote(vote: Vote): TableResult {
    if (!voteCreatedInto(vote, this.times, 0) || !Number.isFinite(this.times[1]!)) return 'invalid';
    return this.set(vote.projectId, vote.userId, vote.platformId, vote.weight, vote.road === 'webhook');
  }

  /** Schedules the reminder whose created and expires ms are in {@link times}. */
  private set(projectId: string, userId: string, platformId: string | null, weight: number, webhook: boolean): TableResult {
    if (!this.index.fits(this.live + 1)) this.index.grow(this.live + 1, this.heap.entries, this.heap.size);
    return this.place(this.lookUp(projectId, userId), platformId, weight, webhook);
  }

  /** {@link set} once the voter is looked up: `found` its slot, or -1 (the index's cell is where it goes). */
  private place(found: number, platformId: string | null, weight: number, webhook: boolean): TableResult {
    if (found >= 0) {
      if (this.slots.chunkOf(found).created[found & CHUNK_MASK]! >= this.times[0]!) return 'known';
      this.write(found, platformId, weight, webhook);
      this.heap.moved(found);
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
    this.heap.push(slot);
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
    const platformId = (flags & PLATFORM_NULL) !== 0 ? null : (flags & PLATFORM_TEXT) !== 0 ? this.platformTexts.get(slot)! : joinDecimal(chunk.platformHigh[i]!, chunk.platformLow[i]!);
    return {
      projectId: this.projects[chunk.project[i]!]!,
      userId: (flags & USER_TEXT) !== 0 ? this.userTexts.get(slot)! : joinDecimal(chunk.userHigh[i]!, chunk.userLow[i]!),
      createdMs: chunk.created[i]!,
      expiresMs: chunk.expires[i]!,
      platformId,
      weight: (flags & WEIGHT_OTHER) !== 0 ? this.weights.get(slot)! : chunk.weight[i]!,
      road: (flags & WEBHOOK) !== 0 ? 'webhook' : 'poll',
    };
  }

  /** Removes a live slot from the heap and the index and frees it. */
  private drop(slot: number): void {
    this.heap.remove(slot);
    this.index.remove(slot);
    const chunk = this.slots.chunkOf(slot);
    const flags = chunk.flags[slot & CHUNK_MASK]!;
    if ((flags & USER_TEXT) !== 0) this.userTexts.delete(slot);
    if ((flags & PLATFORM_TEXT) !== 0) this.platformTexts.delete(slot);
    if ((flags & WEIGHT_OTHER) !== 0) this.weights.delete(slot);
    // A free slot's hash is never read (it is in neither the index nor the heap): it links the free list.
    chunk.hash[slot & CHUNK_MASK] = this.freeHead;
    this.freeHead = slot;
    this.live -= 1;
  }

  private allocate(): number {
    if (this.freeHead >= 0) {
      const slot = this.freeHead;
      this.freeHead = this.slots.chunkOf(slot).hash[slot & CHUNK_MASK]!;
      return slot;
    }
    if (this.top === MAX_SLOTS) throw new RangeError(`the reminder schedule holds at most ${MAX_SLOTS} reminders`);
    this.slots.ensure(this.top + 1);
    return this.top++;
  }

  private expiresOf(slot: number): number {
    return this.slots.chunkOf(slot).expires[slot & CHUNK_MASK]!;
  }
}
