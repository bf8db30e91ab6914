import { describe, expect, it } from 'vitest';
import { clusterPrefix, keySlot } from '../../../src/redis/cluster.js';

describe('Redis Cluster keys: one hash tag for every key of the agent', () => {
  it('makes the prefix a hash tag, and keeps one that has a tag already', () => {
    expect(clusterPrefix('listing-agent:')).toBe('{listing-agent}:');
    expect(clusterPrefix('bot-1')).toBe('{bot-1}');
    expect(clusterPrefix('{bot}:')).toBe('{bot}:');
    expect(clusterPrefix('app:{bot}:')).toBe('app:{bot}:');
  });

  it('computes the slot as Redis does (CRC16 of the tag, modulo 16384)', () => {
    expect(keySlot('123456789')).toBe(12_739);
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    expect(keySlot('{listing-agent}:state:votes:cursor')).toBe(keySlot('{listing-agent}:leader'));
    // `{}` is no tag: the whole key is hashed.
    expect(keySlot('foo{}{bar}')).not.toBe(keySlot('bar'));
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'));
  });
});
