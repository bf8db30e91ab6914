import { describe, expect, it } from 'vitest';
import { metricsBatchProblems, metricsPayloadProblems } from '../../../src/api/v1/metrics.js';

const NOW = Date.parse('2026-03-04T10:00:00Z');
const paths = (problems: { path: string }[]) => problems.map((p) => p.path);

describe('metricsPayloadProblems without a kind (the rules of every platform)', () => {
  it('accepts any platform\'s fields, nulls beside a value, and doubles for the Minecraft rates', () => {
    expect(metricsPayloadProblems({ server_count: 10, shard_count: null })).toEqual([]);
    expect(metricsPayloadProblems({ member_count: 50, online_count: 50 })).toEqual([]);
    expect(metricsPayloadProblems({ player_count: 0 })).toEqual([]);
    expect(metricsPayloadProblems({ tick_rate: 19.5, tick_duration_avg: 41.2, uptime_seconds: 2 ** 40 })).toEqual([]);
  });

  it('names each field that is unknown, negative, fractional, over int32 or of the wrong type', () => {
    expect(paths(metricsPayloadProblems({ servers: 1, server_count: 1 }))).toEqual(['servers']);
    expect(paths(metricsPayloadProblems({ server_count: -1 }))).toEqual(['server_count']);
    expect(paths(metricsPayloadProblems({ shard_count: 1.5, server_count: 1 }))).toEqual(['shard_count']);
    expect(paths(metricsPayloadProblems({ member_count: 2 ** 31 }))).toEqual(['member_count']);
    expect(paths(metricsPayloadProblems({ server_count: '10' }))).toEqual(['server_count', '']);
    expect(paths(metricsPayloadProblems({ server_count: Number.NaN }))).toEqual(['server_count']);
  });

  it('refuses a body that is not an object, an empty one and an all-null one', () => {
    expect(paths(metricsPayloadProblems([]))).toEqual(['']);
    expect(paths(metricsPayloadProblems(null))).toEqual(['']);
    expect(paths(metricsPayloadProblems({}))).toEqual(['']);
    expect(paths(metricsPayloadProblems({ server_count: null, member_count: null }))).toEqual(['']);
  });

  it('keeps online_count within member_count and players_online within players_max', () => {
    expect(paths(metricsPayloadProblems({ member_count: 5, online_count: 6 }))).toEqual(['online_count']);
    expect(paths(metricsPayloadProblems({ players_online: 21, players_max: 20 }))).toEqual(['players_online']);
    expect(metricsPayloadProblems({ players_online: 20, players_max: 20 })).toEqual([]);
  });

  it('applies the whole per-platform rule when the kind is known', () => {
    expect(metricsPayloadProblems({ member_count: 5 })).toEqual([]);
    expect(paths(metricsPayloadProblems({ member_count: 5 }, 'discord/bot'))).toContain('member_count');
    expect(paths(metricsPayloadProblems({ shard_count: 2 }, 'roblox/game'))).toContain('player_count');
    expect(metricsPayloadProblems({ server_count: 5 }, 'discord/bot')).toEqual([]);
  });
});

describe('metricsBatchProblems', () => {
  const entry = (server_count: number, timestamp?: string) => (timestamp ? { metrics: { server_count }, timestamp } : { metrics: { server_count } });

  it('accepts 1 and 100 entries and timestamps up to exactly 5 minutes ahead', () => {
    expect(metricsBatchProblems({ data: [entry(1)] }, NOW)).toEqual([]);
    expect(metricsBatchProblems({ data: Array.from({ length: 100 }, () => entry(1)) }, NOW)).toEqual([]);
    expect(metricsBatchProblems({ data: [entry(1, new Date(NOW + 300_000).toISOString())] }, NOW)).toEqual([]);
    expect(metricsBatchProblems({ data: [entry(1, '2026-03-04T12:04:00+02:00')] }, NOW)).toEqual([]);
  });

  it('names the entry and field of each problem', () => {
    expect(metricsBatchProblems({ data: [entry(1, new Date(NOW + 300_001).toISOString())] }, NOW)).toEqual([
      { path: 'data[0].timestamp', message: 'must not be more than 300 seconds in the future (it is 301 s ahead)' },
    ]);
    expect(paths(metricsBatchProblems({ data: [entry(1), entry(-1)] }, NOW))).toEqual(['data[1].metrics.server_count']);
    expect(paths(metricsBatchProblems({ data: [{ timestamp: new Date(NOW).toISOString() }] }, NOW))).toEqual(['data[0].metrics']);
    expect(paths(metricsBatchProblems({ data: [{ metrics: { server_count: 1 }, at: 'now' }] }, NOW))).toEqual(['data[0].at']);
    expect(paths(metricsBatchProblems({ data: [entry(1, '2026-03-04 10:00')] }, NOW))).toEqual(['data[0].timestamp']);
  });

  it('refuses 0 and 101 entries and a body without data', () => {
    expect(paths(metricsBatchProblems({ data: [] }, NOW))).toEqual(['data']);
    expect(paths(metricsBatchProblems({ data: Array.from({ length: 101 }, () => entry(1)) }, NOW))).toEqual(['data']);
    expect(paths(metricsBatchProblems({}, NOW))).toEqual(['data']);
  });

  it('checks the per-platform rule per entry when the kind is known', () => {
    expect(paths(metricsBatchProblems({ data: [{ metrics: { member_count: 3 } }] }, NOW, 'discord/bot')))
      .toContain('data[0].metrics.member_count');
  });
});
