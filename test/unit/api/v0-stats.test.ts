import { describe, expect, it } from 'vitest';
import { botsQueryProblems, v0StatsBody, v0StatsProblems, type V0StatsPost } from '../../../src/api/v0/index.js';
import { BOT_FIELDS } from '../../../src/api/schemas/v0.js';

describe('v0 stats post', () => {
  it('maps each form to the wire body', () => {
    expect(v0StatsBody({ serverCount: 12 })).toEqual({ server_count: 12 });
    expect(v0StatsBody({ serverCount: 12, shardCount: 2 })).toEqual({ server_count: 12, shard_count: 2 });
    expect(v0StatsBody({ serverCount: 5, shardId: 1, shardCount: 2 })).toEqual({ server_count: 5, shard_id: 1, shard_count: 2 });
    // Per-shard counts go as `shards`, with their sum as the total.
    expect(v0StatsBody({ shards: [3, 4, 0] })).toEqual({ server_count: 7, shards: [3, 4, 0] });
    expect(v0StatsBody({ shards: [3], shardCount: 1 })).toEqual({ server_count: 3, shards: [3], shard_count: 1 });
  });

  it('accepts the edges and names each problem by its input field', () => {
    expect(v0StatsProblems({ serverCount: 0 })).toEqual([]);
    expect(v0StatsProblems({ serverCount: 0, shardId: 0, shardCount: 1 })).toEqual([]);
    expect(v0StatsProblems({ shards: [0], shardCount: 1 })).toEqual([]);
    expect(v0StatsProblems({ serverCount: 1, shardId: 1, shardCount: 1 }).map((i) => i.path)).toEqual(['shardId']);
    expect(v0StatsProblems({ serverCount: Number.NaN }).map((i) => i.path)).toEqual(['serverCount']);
    expect(v0StatsProblems({ serverCount: 2 ** 53 }).map((i) => i.path)).toEqual(['serverCount']);
    expect(v0StatsProblems({ shards: 'many' } as unknown as V0StatsPost).map((i) => i.path)).toEqual(['shards']);
    expect(v0StatsProblems(null as unknown as V0StatsPost).length).toBeGreaterThan(0);
  });
});

describe('v0 bots query', () => {
  it('allows limits 1 to 500, offsets from 0, known sort and field names', () => {
    expect(botsQueryProblems({ limit: 1, offset: 0, sort: '-monthlyPoints', fields: ['id', 'username'] })).toEqual([]);
    expect(botsQueryProblems({ limit: 500, sort: 'date' })).toEqual([]);
    expect(botsQueryProblems({ limit: 501 }).map((i) => i.path)).toEqual(['limit']);
    expect(BOT_FIELDS).toHaveLength(24);
  });
});

describe('v0 bots query from plain JavaScript', () => {
  it('reports a query that is not an object', () => {
    expect(botsQueryProblems(null as never).map((i) => i.path)).toEqual(['']);
    expect(botsQueryProblems({ fields: 'id' as never }).map((i) => i.path)).toEqual(['fields']);
  });
});
