import { describe, expect, it } from 'vitest';
import { validateMetricsBatch } from '../../../src/contract/metrics-batch.js';
import {
  appendSample,
  keepAliveDue,
  batchEntries,
  emptyBuffer,
  MAX_BATCH_ENTRIES,
  MAX_FUTURE_MS,
  parseBuffer,
  type Sample,
  type SampleBuffer,
  sampleV0Stats,
  samplesToSend,
  thinSamples,
  timestampCeiling,
  withoutSamples,
} from '../../../src/stats/samples.js';

const T0 = Date.parse('2026-03-04T10:00:00Z');
const MINUTE = 60_000;
const sample = (minute: number, serverCount = 100 + minute, shardCount = 2): Sample => ({ timestamp: T0 + minute * MINUTE, serverCount, shardCount });

function fill(count: number, options = { skipUnchanged: true }): SampleBuffer {
  let buffer = emptyBuffer();
  for (let minute = 0; minute < count; minute += 1) buffer = appendSample(buffer, sample(minute), options).buffer;
  return buffer;
}

describe('appendSample', () => {
  it('skips a sample with the same counts when skipUnchanged, but remembers it as the newest seen', () => {
    let buffer = appendSample(emptyBuffer(), sample(0, 10), { skipUnchanged: true }).buffer;
    const same = appendSample(buffer, sample(5, 10), { skipUnchanged: true });
    expect(same.appended).toBe(false);
    buffer = same.buffer;
    expect(buffer.samples).toEqual([sample(0, 10)]);
    expect(buffer.last).toEqual(sample(5, 10));
    // The comparison is with the newest seen, so a change after it is kept.
    buffer = appendSample(buffer, sample(10, 11), { skipUnchanged: true }).buffer;
    expect(buffer.samples.map((s) => s.serverCount)).toEqual([10, 11]);
  });

  it('keeps equal samples when skipUnchanged is off', () => {
    let buffer = emptyBuffer();
    for (const minute of [0, 5, 10]) buffer = appendSample(buffer, sample(minute, 10), { skipUnchanged: false }).buffer;
    expect(buffer.samples).toHaveLength(3);
  });

  it('compares the shard count and the per-shard counts too', () => {
    let buffer = appendSample(emptyBuffer(), { ...sample(0, 10), shards: [4, 6] }, { skipUnchanged: true }).buffer;
    buffer = appendSample(buffer, { ...sample(1, 10), shards: [5, 5] }, { skipUnchanged: true }).buffer;
    buffer = appendSample(buffer, sample(2, 10, 3), { skipUnchanged: true }).buffer;
    expect(buffer.samples).toHaveLength(3);
  });

  it('does not change the buffer it is given', () => {
    const buffer = fill(3);
    const copy = structuredClone(buffer);
    appendSample(buffer, sample(99), { skipUnchanged: true });
    expect(buffer).toEqual(copy);
  });
});

describe('thinning', () => {
  it('keeps at most 100 entries, spanning the oldest to the newest, with the newest at full resolution', () => {
    const buffer = fill(1_000);
    const kept = buffer.samples;
    expect(kept.length).toBeLessThanOrEqual(MAX_BATCH_ENTRIES);
    expect(kept.length).toBeGreaterThan(MAX_BATCH_ENTRIES / 2);
    // The whole outage is still covered...
    expect(kept[0]).toEqual(sample(0));
    expect(kept.at(-1)).toEqual(sample(999));
    // ...in order...
    for (let i = 1; i < kept.length; i += 1) expect(kept[i]!.timestamp).toBeGreaterThan(kept[i - 1]!.timestamp);
    // ...and the newest half is every sample, one minute apart.
    const newest = kept.slice(-Math.floor(kept.length / 2));
    for (let i = 1; i < newest.length; i += 1) expect(newest[i]!.timestamp - newest[i - 1]!.timestamp).toBe(MINUTE);
    // Older means sparser, never the other way round.
    const gaps = kept.slice(1).map((s, i) => s.timestamp - kept[i]!.timestamp);
    for (let i = 1; i < gaps.length; i += 1) expect(gaps[i]!).toBeLessThanOrEqual(gaps[i - 1]!);
  });

  it('drops every other entry of the oldest half when the buffer goes over', () => {
    const samples = Array.from({ length: 101 }, (_, minute) => sample(minute));
    const thinned = thinSamples(samples, 100);
    // 50 oldest become 25; the 51 newest stay.
    expect(thinned).toHaveLength(76);
    expect(thinned.slice(0, 3).map((s) => s.timestamp)).toEqual([sample(0), sample(2), sample(4)].map((s) => s.timestamp));
    expect(thinned.slice(25)).toEqual(samples.slice(50));
  });

  it('handles tiny bounds', () => {
    const samples = [sample(0), sample(1), sample(2)];
    expect(thinSamples(samples, 1)).toEqual([sample(2)]);
    expect(thinSamples(samples, 2)).toEqual([sample(0), sample(2)]);
    expect(thinSamples(samples, 3)).toEqual(samples);
  });
});

describe('batchEntries', () => {
  const now = T0 + 200 * MINUTE;

  it('sends the buffered samples oldest first as the discord bot payload with ISO timestamps', () => {
    const entries = batchEntries(fill(3), { now });
    expect(entries).toEqual([0, 1, 2].map((minute) => ({
      metrics: { server_count: 100 + minute, shard_count: 2 },
      timestamp: new Date(T0 + minute * MINUTE).toISOString(),
    })));
    // What the contract (and so the emulator) accepts for a discord bot.
    expect(validateMetricsBatch({ data: entries }, 'discord/bot', now).ok).toBe(true);
  });

  it('sends the newest sample seen when nothing new is buffered, and nothing when nothing was seen', () => {
    const sent = fill(1);
    const afterFlush = withoutSamples(sent, samplesToSend(sent));
    expect(afterFlush.samples).toEqual([]);
    const unchanged = appendSample(afterFlush, sample(7, 100), { skipUnchanged: true });
    expect(unchanged.appended).toBe(false);
    expect(batchEntries(unchanged.buffer, { now })).toEqual([
      { metrics: { server_count: 100, shard_count: 2 }, timestamp: new Date(T0 + 7 * MINUTE).toISOString() },
    ]);
    expect(batchEntries(emptyBuffer(), { now })).toEqual([]);
  });

  it('never sends a timestamp in the future: clamped to now, and kept in ascending order', () => {
    // A clock stepped back while sampling: the last two samples are "later" than now.
    const buffer: SampleBuffer = { samples: [sample(0), sample(10), { ...sample(0), timestamp: now + 10 * MINUTE, serverCount: 1 }, { ...sample(0), timestamp: now + 4 * MINUTE, serverCount: 2 }] };
    const times = batchEntries(buffer, { now }).map((e) => Date.parse(e.timestamp));
    for (const time of times) expect(time).toBeLessThanOrEqual(now);
    for (let i = 1; i < times.length; i += 1) expect(times[i]!).toBeGreaterThanOrEqual(times[i - 1]!);
    expect(times.slice(0, 2)).toEqual([sample(0).timestamp, sample(10).timestamp]);
  });

  it('pulls timestamps back when the service clock is known to be behind ours', () => {
    const skew = -20 * MINUTE;
    expect(timestampCeiling(now, skew)).toBeLessThanOrEqual(now + skew + MAX_FUTURE_MS);
    const entries = batchEntries({ samples: [sample(199)] }, { now, serverSkewMs: skew });
    expect(Date.parse(entries[0]!.timestamp) - (now + skew)).toBeLessThanOrEqual(MAX_FUTURE_MS);
    // A service clock ahead of ours changes nothing: a reading is never from the future.
    expect(timestampCeiling(now, 10 * MINUTE)).toBe(now);
  });

  it('sends at most 100 entries whatever the buffer holds', () => {
    const big: SampleBuffer = { samples: Array.from({ length: 300 }, (_, minute) => sample(minute)) };
    const entries = batchEntries(big, { now: T0 + 400 * MINUTE });
    expect(entries.length).toBeLessThanOrEqual(100);
    expect(entries[0]!.timestamp).toBe(new Date(T0).toISOString());
    expect(entries.at(-1)!.timestamp).toBe(new Date(T0 + 299 * MINUTE).toISOString());
  });
});

describe('sampleV0Stats', () => {
  it('sends per-shard counts when every shard is known, else the total', () => {
    expect(sampleV0Stats({ ...sample(0, 10, 2), shards: [4, 6] })).toEqual({ shards: [4, 6], shardCount: 2 });
    expect(sampleV0Stats({ ...sample(0, 10, 3), shards: [4, 6] })).toEqual({ serverCount: 10, shardCount: 3 });
    expect(sampleV0Stats(sample(0, 10, 1))).toEqual({ serverCount: 10, shardCount: 1 });
  });
});

describe('parseBuffer', () => {
  it('reads a stored buffer back, leaving out what is not a sample and putting the rest in order', () => {
    const stored = { version: 1, samples: [sample(2), { timestamp: 'soon' }, sample(1), null], last: sample(2) };
    const { buffer, dropped } = parseBuffer(JSON.parse(JSON.stringify(stored)));
    expect(dropped).toBe(2);
    expect(buffer.samples).toEqual([sample(1), sample(2)]);
    expect(buffer.last).toEqual(sample(2));
    expect(parseBuffer(undefined)).toEqual({ buffer: emptyBuffer(), dropped: 0 });
  });
});

describe('keepAliveDue: may the first post after a start wait?', () => {
  const posted = { timestamp: 1_000_000, serverCount: 120, shardCount: 2 };
  const current = (serverCount = 120, timestamp = 1_600_000) => ({ timestamp, serverCount, shardCount: 2 });
  const interval = 1_800_000;

  it('waits for the last post + the interval when the counts are those of that post and it is younger than the interval', () => {
    expect(keepAliveDue({ samples: [], last: current(), posted }, current(), { now: 1_600_000, intervalMs: interval })).toBe(2_800_000);
    // Unsent samples that say the same (skipUnchanged off) do not change that.
    expect(keepAliveDue({ samples: [current(120, 1_100_000)], posted }, current(), { now: 1_600_000, intervalMs: interval })).toBe(2_800_000);
  });

  it('posts at once when nothing was posted, the counts changed, an unsent sample differs, the keep-alive is due, or the clock went back', () => {
    const options = { now: 1_600_000, intervalMs: interval };
    expect(keepAliveDue({ samples: [] }, current(), options)).toBeUndefined();
    expect(keepAliveDue({ samples: [], posted }, current(121), options)).toBeUndefined();
    expect(keepAliveDue({ samples: [current(125, 1_100_000)], posted }, current(), options)).toBeUndefined();
    expect(keepAliveDue({ samples: [], posted }, current(), { now: 2_800_000, intervalMs: interval })).toBeUndefined();
    expect(keepAliveDue({ samples: [], posted }, current(), { now: 999_000, intervalMs: interval })).toBeUndefined();
    expect(keepAliveDue({ samples: [], posted: { ...posted, shards: [60, 60] } }, { ...current(), shards: [61, 59] }, options)).toBeUndefined();
  });

  it('is remembered across a restart: parseBuffer reads `posted`, appendSample keeps it', () => {
    const { buffer } = parseBuffer({ version: 1, samples: [], last: current(), posted });
    expect(buffer.posted).toEqual(posted);
    expect(appendSample(buffer, current(121), { skipUnchanged: true }).buffer.posted).toEqual(posted);
    expect(appendSample(buffer, current(120), { skipUnchanged: true }).buffer.posted).toEqual(posted);
  });
});
