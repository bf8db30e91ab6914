import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, CHUNK_MASK, CHUNK_SLOTS, SlotChunks, type SlotChunk } from '../../../../src/votes/reminders/slots.js';
import { random } from '../../../helpers/random.js';

type Column = 'userHigh' | 'userLow' | 'platformHigh' | 'platformLow' | 'created' | 'expires' | 'project' | 'hash' | 'weight' | 'flags';
/** Each column, and the largest value it keeps exactly (an integer below it). */
const COLUMNS: [Column, number][] = [
  ['userHigh', 2 ** 53],
  ['platformHigh', 2 ** 53],
  ['created', 2 ** 53],
  ['expires', 2 ** 53],
  ['userLow', 2 ** 32],
  ['platformLow', 2 ** 32],
  ['project', 2 ** 32],
  ['hash', 2 ** 31],
  ['weight', 256],
  ['flags', 256],
];

describe('the reminder table’s columns in chunks', () => {
  it('keeps every column of every slot apart, across chunk boundaries, as a plain model does', () => {
    const next = random(46);
    const slots = new SlotChunks();
    const model = new Map<string, number>();
    const slotCount = 3 * CHUNK_SLOTS + 5;
    // Growing one slot at a time, as the table does, writing as it goes: earlier chunks keep what they hold.
    for (let slot = 0; slot < slotCount; slot++) {
      slots.ensure(slot + 1);
      expect(slots.capacity).toBe(Math.ceil((slot + 1) / CHUNK_SLOTS) * CHUNK_SLOTS);
      for (const [column, limit] of COLUMNS) {
        const value = Math.floor(next() * limit);
        slots.chunkOf(slot)[column][slot & CHUNK_MASK] = value;
        model.set(`${slot}.${column}`, value);
      }
    }
    // Random rewrites, near the chunk boundaries most of all.
    for (let step = 0; step < 20_000; step++) {
      const boundary = (1 + Math.floor(next() * 3)) * CHUNK_SLOTS;
      const slot = next() < 0.5 ? boundary - 2 + Math.floor(next() * 4) : Math.floor(next() * slotCount);
      const [column, limit] = COLUMNS[Math.floor(next() * COLUMNS.length)]!;
      const value = Math.floor(next() * limit);
      slots.chunkOf(slot)[column][slot & CHUNK_MASK] = value;
      model.set(`${slot}.${column}`, value);
    }
    for (let slot = 0; slot < slotCount; slot++) {
      const chunk: SlotChunk = slots.chunkOf(slot);
      for (const [column] of COLUMNS) expect(chunk[column][slot & CHUNK_MASK]).toBe(model.get(`${slot}.${column}`));
    }
    expect(slots.chunks).toHaveLength(4);
    expect(slots.bytes()).toBe(4 * CHUNK_BYTES);
    expect(CHUNK_BYTES / CHUNK_SLOTS).toBe(50);
  });

  it('adds chunks without moving the ones it has, and starts empty again after clear', () => {
    const slots = new SlotChunks();
    expect(slots.capacity).toBe(0);
    slots.ensure(1);
    const first = slots.chunkOf(0);
    first.created[CHUNK_SLOTS - 1] = 42;
    slots.ensure(10 * CHUNK_SLOTS);
    expect(slots.chunkOf(CHUNK_SLOTS - 1)).toBe(first);
    expect(first.created[CHUNK_SLOTS - 1]).toBe(42);
    expect(slots.chunkOf(CHUNK_SLOTS)).not.toBe(first);
    expect(slots.chunkOf(CHUNK_SLOTS).created[0]).toBe(0);
    slots.ensure(5);
    expect(slots.capacity).toBe(10 * CHUNK_SLOTS);
    slots.clear();
    expect(slots.capacity).toBe(0);
    slots.ensure(1);
    expect(slots.chunkOf(0)).not.toBe(first);
    expect(slots.chunkOf(0).created[CHUNK_SLOTS - 1]).toBe(0);
  });
});
