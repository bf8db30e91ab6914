import { describe, expect, it } from 'vitest';
import {
  batchApplicationOrder,
  metricsBatchEntryProblems,
  parseMetricsBatch,
  validateMetricsBatch,
} from '../../../src/contract/metrics-batch.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const at = (offsetSeconds: number) => new Date(NOW + offsetSeconds * 1000).toISOString();
const entry = (n: number, timestamp?: string) => (timestamp === undefined ? { metrics: { server_count: n } } : { metrics: { server_count: n }, timestamp });

describe('parseMetricsBatch', () => {
  it('needs 1 to 100 entries', () => {
    const sizes = (n: number) => parseMetricsBatch({ data: Array.from({ length: n }, (_, i) => entry(i)) });
    expect(sizes(0)).toEqual({ ok: false, problems: [{ path: 'data', message: 'must hold 1 to 100 entries (got 0)' }] });
    expect(sizes(101).ok).toBe(false);
    expect(sizes(1).ok).toBe(true);
    expect(sizes(100).ok).toBe(true);
    expect(parseMetricsBatch({}).ok).toBe(false);
    expect(parseMetricsBatch([]).ok).toBe(false);
  });

  it('refuses malformed envelopes with the entry index', () => {
    const result = parseMetricsBatch({ data: [entry(1), 5, { metrics: {}, timestamp: 'yesterday' }, { metrics: {}, when: 1 }, { metrics: {}, timestamp: null }] });
    expect(result.ok ? [] : result.problems.map((p) => p.path)).toEqual(['data[1]', 'data[2].timestamp', 'data[3].when', 'data[4].timestamp']);
    const noOffset = parseMetricsBatch({ data: [{ metrics: {}, timestamp: '2024-05-01T12:00:00' }] });
    expect(noOffset.ok).toBe(false);
  });
});

describe('batchApplicationOrder', () => {
  it('puts untimestamped entries first in request order, then timestamps ascending (stable)', () => {
    const parsed = parseMetricsBatch({ data: [entry(0, at(-10)), entry(1), entry(2, at(-30)), entry(3), entry(4, at(-10)), entry(5, '2024-05-01T13:59:00+02:00')] });
    if (!parsed.ok) throw new Error('expected a valid batch');
    expect(batchApplicationOrder(parsed.value).map((e) => e.index)).toEqual([1, 3, 5, 2, 0, 4]);
  });
});

describe('metricsBatchEntryProblems', () => {
  it('allows timestamps up to 5 minutes ahead', () => {
    const parsed = parseMetricsBatch({ data: [entry(0, at(299)), entry(1, at(300)), entry(2, at(301))] });
    if (!parsed.ok) throw new Error('expected a valid batch');
    const problems = parsed.value.map((e) => metricsBatchEntryProblems(e, 'discord/bot', NOW));
    expect(problems[0]).toEqual([]);
    expect(problems[1]).toEqual([]);
    expect(problems[2]?.[0]?.path).toBe('data[2].timestamp');
  });

  it('names the entry index in metrics problems', () => {
    const parsed = parseMetricsBatch({ data: [entry(0), entry(1), { metrics: { server_count: -1 } }, {}] });
    if (!parsed.ok) throw new Error('expected a valid batch');
    expect(metricsBatchEntryProblems(parsed.value[2]!, 'discord/bot', NOW)).toEqual([
      { path: 'data[2].metrics.server_count', message: 'must be an integer 0 or more (got -1)' },
    ]);
    expect(metricsBatchEntryProblems(parsed.value[3]!, 'discord/bot', NOW)[0]?.path).toBe('data[3].metrics');
  });
});

describe('validateMetricsBatch', () => {
  it('reports every problem and returns entries in application order', () => {
    const bad = validateMetricsBatch({ data: [{ metrics: { member_count: 1 } }, entry(1, at(600))] }, 'discord/bot', NOW);
    expect(bad.ok ? [] : bad.problems.map((p) => p.path)).toEqual(['data[0].metrics.member_count', 'data[0].metrics', 'data[1].timestamp']);
    const good = validateMetricsBatch({ data: [entry(0, at(-5)), entry(1)] }, 'discord/bot', NOW);
    expect(good.ok && good.value.map((e) => e.index)).toEqual([1, 0]);
  });
});
