import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { createMemoryVoteLedger } from '../../../src/votes/ledger-memory.js';
import { createVotePipeline } from '../../../src/votes/pipeline.js';
import { createVoteLog, VOTE_LOG_DEFAULTS } from '../../../src/votes/vote-log.js';
import { fakeHook, manualTime } from './pipeline-harness.js';
import { makeVote } from './votes-fixtures.js';

/**
 * What an operator reads at the default level: one `info` line per vote received (new ones only)
 * and one per vote rewarded (every hook succeeded), and at a high rate, past
 * `linesPerInterval` lines of a kind in an interval, one summary line per interval with the counts.
 */

interface Line {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** The daemon's logger (pino, JSON lines, level `info`), into an array the test reads. */
function readableLogger(level: 'info' | 'warn' = 'info') {
  const lines: Line[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Line);
      done();
    },
  });
  return { logger: createLogger({ level, format: 'json', destination }), lines };
}

async function pipelineWithLog(options: { level?: 'info' | 'warn'; failingHook?: boolean } = {}) {
  const time = manualTime();
  const log = readableLogger(options.level);
  const hooks = [fakeHook('reward'), ...(options.failingHook ? [fakeHook('broken', 0, () => Promise.reject(new Error('down')))] : [])];
  const pipeline = createVotePipeline({ ledger: createMemoryVoteLedger(), hooks, logger: log.logger, now: time.now, schedule: time.schedule });
  await pipeline.start();
  return { pipeline, time, lines: log.lines, of: (msg: string) => log.lines.filter((line) => line.msg === msg) };
}

describe('vote log lines', () => {
  it('logs each new vote once when received (with its key, road and trace ID) and once when rewarded; duplicates not at info', async () => {
    const { pipeline, of } = await pipelineWithLog();
    const [a, b] = [makeVote('alice'), makeVote('bob', 1)];
    await pipeline.ingest([{ ...a, road: 'webhook', voteId: 'v-1' }], 'webhook', { traceId: 'trace-1' });
    await pipeline.ingest([a, b], 'poll');
    await pipeline.idle();
    expect(of('vote received').map((line) => [line.key, line.road, line.voteId, line.traceId, line.userId])).toEqual([
      [a.key, 'webhook', 'v-1', 'trace-1', 'alice'],
      [b.key, 'poll', undefined, undefined, 'bob'],
    ]);
    expect(of('vote rewarded').map((line) => [line.key, line.hooks])).toEqual([
      [a.key, ['reward']],
      [b.key, ['reward']],
    ]);
    await pipeline.stop(Date.now() + 1_000);
  });

  it('logs no reward for a vote a hook gave up on (that is an error line of its own)', async () => {
    const { pipeline, of, lines } = await pipelineWithLog({ failingHook: true });
    await pipeline.ingest([makeVote('carol')], 'poll');
    await pipeline.idle();
    expect(of('vote received')).toHaveLength(1);
    expect(of('vote rewarded')).toHaveLength(0);
    expect(lines.some((line) => line.level === 'error' && line.hook === 'broken')).toBe(true);
    await pipeline.stop(Date.now() + 1_000);
  });

  it('past the lines of an interval, counts the votes and writes one summary line at its end', async () => {
    const { pipeline, time, of, lines } = await pipelineWithLog();
    const { linesPerInterval, intervalMs } = VOTE_LOG_DEFAULTS;
    const votes = Array.from({ length: 1_000 }, (_, i) => makeVote(`user${i}`, i));
    for (let i = 0; i < votes.length; i += 100) await pipeline.ingest(votes.slice(i, i + 100), 'webhook');
    await pipeline.idle();
    expect(of('vote received')).toHaveLength(linesPerInterval);
    expect(of('vote rewarded')).toHaveLength(linesPerInterval);
    const before = lines.length;

    await time.advance(intervalMs);
    const summaries = lines.slice(before);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ level: 'info', received: 1_000, rewarded: 1_000, loggedOneByOne: linesPerInterval, intervalMs });
    expect(summaries[0]!.msg).toContain('1000 received, 1000 rewarded');

    // A quiet interval: each vote has its lines again, and no summary follows.
    await pipeline.ingest([makeVote('late', 5_000)], 'poll');
    await pipeline.idle();
    await time.advance(intervalMs);
    expect(lines.slice(before + 1).map((line) => line.msg)).toEqual(['vote received', 'vote rewarded']);
    await pipeline.stop(time.now() + 1_000);
  });

  it('writes what an interval counted when the pipeline stops', async () => {
    const { pipeline, of, time, lines } = await pipelineWithLog();
    const votes = Array.from({ length: 60 }, (_, i) => makeVote(`user${i}`, i));
    await pipeline.ingest(votes, 'poll');
    await pipeline.idle();
    expect(lines.filter((line) => line.loggedOneByOne !== undefined)).toEqual([]);
    await pipeline.stop(time.now() + 1_000);
    expect(of('vote received')).toHaveLength(50);
    expect(lines.filter((line) => line.loggedOneByOne !== undefined)).toMatchObject([{ received: 60, rewarded: 60 }]);
  });

  it('costs nothing above info: no line is built', () => {
    const { logger, lines } = readableLogger('warn');
    const log = createVoteLog({ logger, now: () => 0 });
    for (let i = 0; i < 100; i += 1) log.received(makeVote(i));
    log.flush();
    expect(lines).toEqual([]);
  });
});
