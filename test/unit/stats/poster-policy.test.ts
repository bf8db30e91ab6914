import { describe, expect, it } from 'vitest';
import { UnprocessableEntityError } from '../../../src/api/errors.js';
import {
  afterBatchAccepted,
  afterPatchAccepted,
  batchMaySendLast,
  batchToSend,
  failedReading,
  flushReadsCounts,
  judgeReading,
  PAYLOAD_BUG_FIX,
  postedSample,
  postScheduleOptions,
  readyDetail,
  recordSample,
  refusedBatch,
  v0SampleFor,
} from '../../../src/stats/poster-policy.js';
import { emptyBuffer, type Sample, type SampleBuffer } from '../../../src/stats/samples.js';

const T0 = Date.parse('2026-03-04T10:00:00Z');
const sample = (minute: number, serverCount = 100 + minute): Sample => ({ timestamp: T0 + minute * 60_000, serverCount, shardCount: 2 });
const refused = (detail: string) =>
  new UnprocessableEntityError({ status: 422, method: 'POST', url: 'https://top.gg/api/v1/projects/@me/metrics/batch', family: 'v1', attempts: 1, problem: { type: 'about:blank', title: 'Unprocessable', status: 422, detail } });

describe('readyDetail', () => {
  it('names what is posted, how often, and from where', () => {
    expect(readyDetail({ mode: 'batch', schedule: undefined, interval: 3_600_000 }, 'push endpoint')).toBe('posting batches every 1h from push endpoint');
    expect(readyDetail({ mode: 'patch', schedule: '0 * * * *', interval: 3_600_000 }, 'a client')).toBe("posting counts on '0 * * * *' from a client");
  });
});

describe('judgeReading', () => {
  it('stamps a ready reading with the time it was read, copying the shards', () => {
    const shards = [40, 60];
    const verdict = judgeReading({ ready: true, serverCount: 100, shardCount: 2, shards }, T0);
    expect(verdict).toEqual({ kind: 'sample', sample: { timestamp: T0, serverCount: 100, shardCount: 2, shards: [40, 60] } });
    shards.push(1);
    expect(verdict.kind === 'sample' && verdict.sample.shards).toEqual([40, 60]);
  });

  it('passes a reason on, and turns a source that threw into one', () => {
    expect(judgeReading({ ready: false, reason: 'cache filling' }, T0)).toEqual({ kind: 'not_ready', reason: 'cache filling' });
    expect(judgeReading(failedReading(new Error('boom')), T0)).toEqual({ kind: 'not_ready', reason: 'the source failed: boom' });
  });

  it('refuses counts the service cannot take, naming the field', () => {
    const verdict = judgeReading({ ready: true, serverCount: -1, shardCount: 1 }, T0);
    expect(verdict.kind).toBe('invalid');
    expect(verdict.kind === 'invalid' && verdict.problems.map((p) => p.path)).toContain('server_count');
  });
});

describe('recordSample', () => {
  it('appends in batch mode (skipping unchanged counts) and only remembers the newest in patch mode', () => {
    const once = recordSample(emptyBuffer(), sample(0, 10), { mode: 'batch', skipUnchanged: true });
    const twice = recordSample(once, sample(1, 10), { mode: 'batch', skipUnchanged: true });
    expect(twice.samples).toEqual([sample(0, 10)]);
    expect(twice.last).toEqual(sample(1, 10));
    const patch = recordSample(emptyBuffer(), sample(0), { mode: 'patch', skipUnchanged: false });
    expect(patch).toEqual({ samples: [], last: sample(0) });
  });
});

describe('what a flush sends', () => {
  it('reads the counts first except for a batch retry, which resends what is pending', () => {
    expect(flushReadsCounts('tick', 'batch')).toBe(true);
    expect(flushReadsCounts('first', 'batch')).toBe(true);
    expect(flushReadsCounts('retry', 'batch')).toBe(false);
    expect(flushReadsCounts('retry', 'patch')).toBe(true);
  });

  it('sends the newest sample seen when nothing is buffered only after a read or on a retry', () => {
    const buffer: SampleBuffer = { samples: [], last: sample(3) };
    expect(batchMaySendLast('tick', undefined)).toBe(false);
    expect(batchMaySendLast('tick', sample(3))).toBe(true);
    expect(batchMaySendLast('retry', undefined)).toBe(true);
    expect(batchToSend(buffer, false)).toEqual([]);
    expect(batchToSend(buffer, true)).toEqual([sample(3)]);
    expect(batchToSend({ samples: [sample(1), sample(2)], last: sample(2) }, false)).toEqual([sample(1), sample(2)]);
  });

  it('posts to v0 the counts just read, or the newest seen only to retry', () => {
    const buffer: SampleBuffer = { samples: [], last: sample(3) };
    expect(v0SampleFor('tick', sample(4), buffer)).toEqual(sample(4));
    expect(v0SampleFor('tick', undefined, buffer)).toBeUndefined();
    expect(v0SampleFor('retry', undefined, buffer)).toEqual(sample(3));
  });
});

describe('the buffer after an answer', () => {
  it('drops the accepted samples (by identity) and remembers the newest as posted at the answer time', () => {
    const [a, b, c] = [sample(1), sample(2), sample(3)];
    const buffer: SampleBuffer = { samples: [a, b, c], last: c };
    const after = afterBatchAccepted(buffer, [a, b], T0 + 99);
    expect(after.samples).toEqual([c]);
    expect(after.posted).toEqual({ ...b, timestamp: T0 + 99 });
    expect(buffer.samples).toHaveLength(3);
    expect(afterPatchAccepted({ samples: [], last: a }, a, T0 + 5)).toEqual({ samples: [], last: a, posted: { ...a, timestamp: T0 + 5 } });
  });

  it('keeps an entry refused only for its timestamp (our clock is ahead) and drops the applied ones before it', () => {
    const sent = [sample(1), sample(2), sample(3)];
    const result = refusedBatch({ samples: sent, last: sent[2] }, refused('data[1].timestamp: too far in the future'), sent);
    expect(result.buffer.samples).toEqual([sample(2), sample(3)]);
    expect(result.dropped).toBe(1);
    expect(result.fix).toContain('NTP');
  });

  it('drops a refused payload and calls it a bug to report', () => {
    const sent = [sample(1), sample(2)];
    const result = refusedBatch({ samples: sent }, refused('data[0].metrics.server_count: too large'), sent);
    expect(result.buffer.samples).toEqual([sample(2)]);
    expect(result.fix).toBe(PAYLOAD_BUG_FIX);
    expect(result.summary).toContain('entry 0');
  });

  it('shows a posted sample with the time it was read, or the time it was sent as', () => {
    expect(postedSample(sample(0))).toEqual({ timestamp: '2026-03-04T10:00:00.000Z', serverCount: 100, shardCount: 2 });
    expect(postedSample(sample(0), 'sent-as')).toEqual({ timestamp: 'sent-as', serverCount: 100, shardCount: 2 });
  });
});

describe('postScheduleOptions', () => {
  const config = { schedule: undefined, interval: 60_000, jitter: 5_000 };
  it('posts every interval, the first after firstDelayMs (never negative) when given', () => {
    expect(postScheduleOptions(config, undefined, undefined)).toEqual({ name: 'post', intervalMs: 60_000, jitterMs: 5_000 });
    expect(postScheduleOptions(config, -10, undefined)).toEqual({ name: 'post', intervalMs: 60_000, firstDelayMs: 0, jitterMs: 5_000 });
  });
  it('follows a cron schedule instead, ignoring the first delay, and passes the randomness on', () => {
    const random = () => 0.5;
    expect(postScheduleOptions({ ...config, schedule: '*/5 * * * *' }, 1_000, random)).toEqual({ name: 'post', cron: '*/5 * * * *', jitterMs: 5_000, random });
  });
});
