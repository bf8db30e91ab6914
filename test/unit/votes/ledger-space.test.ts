import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createReadiness } from '../../../src/runtime/readiness.js';
import { errno } from '../store/helpers.js';
import { createWriteHealth } from '../../../src/store/write-health.js';
import type { FileStoreFs } from '../../../src/store/fs.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { DEFAULT_RESERVE_BYTES, LedgerCloseError, listKeys, unwrittenRecords } from '../../../src/votes/ledger-file-space.js';
import { createVotesReadiness, unwritableVotesDetail } from '../../../src/votes/ledger-readiness.js';
import { recordLine } from '../../../src/votes/ledger-records.js';
import { createRecordFailureLog, recordFailureLine } from '../../../src/votes/record-failures.js';
import { makeLetter, makeVote } from './votes-fixtures.js';

describe('the reserve for finished votes', () => {
  it('holds the completion records of 4,096 votes with two hooks each, at the longest keys', () => {
    const key = `${'9'.repeat(20)}:${'9'.repeat(13)}`;
    const perVote = Buffer.byteLength(recordLine({ t: 'c', k: key })) + Buffer.byteLength(recordLine({ t: 'h', k: key, h: 'a-hook-name-12345' }));
    expect(4_096 * perVote).toBeLessThanOrEqual(DEFAULT_RESERVE_BYTES * 2);
    // With one hook, only the completion record: about 5,000 fit.
    expect(Math.floor(DEFAULT_RESERVE_BYTES / Buffer.byteLength(recordLine({ t: 'c', k: key })))).toBeGreaterThan(5_000);
  });

  it('sorts the records that never reached the disk: finished or hook-done votes are rewarded again, a vote not on disk is not', () => {
    const [a, b, c, d] = [makeVote(1), makeVote(2), makeVote(3), makeVote(4)];
    const lines = [
      recordLine({ t: 'p', v: d }),
      recordLine({ t: 'c', k: a.key }),
      recordLine({ t: 'h', k: b.key, h: 'shop' }),
      recordLine({ t: 'd', l: makeLetter(c, 'http') }),
      recordLine({ t: 'h', k: d.key, h: 'shop' }),
      'not a record\n',
    ];
    expect(unwrittenRecords(lines)).toEqual({ rewardedAgain: [a.key, b.key, c.key], notRecorded: [d.key] });
    expect(unwrittenRecords([])).toEqual({ rewardedAgain: [], notRecorded: [] });
  });

  it('names at most 20 keys, then how many more', () => {
    expect(listKeys(['a', 'b'])).toBe('a, b');
    expect(listKeys(Array.from({ length: 23 }, (_, i) => `k${i}`))).toMatch(/^k0, k1, .*k19 and 3 more$/);
  });

  it('a close that cannot write says which votes are rewarded again, and why', () => {
    const error = new LedgerCloseError('/s/votes.journal', 'the state directory /s is read-only: nothing can be written there', { rewardedAgain: ['1:10', '2:20'], notRecorded: ['3:30'] }, errno('EROFS', 'x'));
    expect(error.message).toBe(
      'could not write the last records of /s/votes.journal at close: the state directory /s is read-only: nothing can be written there; 2 vote(s) whose hooks succeeded (or gave up) are not recorded as done, so their hooks run again at the next start: 1:10, 2:20; 1 new vote(s) were never recorded and were refused, so the service sends them again',
    );
    expect(error.rewardedAgain).toEqual(['1:10', '2:20']);
    expect(error.code).toBe('store');
  });
});

describe('the lines of records that could not be written', () => {
  it('the first says what it costs and when; the rest of the interval is one summary with the keys', () => {
    const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const logger = {
      warn: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'warn', fields, message }),
      error() {},
      info() {},
      debug() {},
      child: () => logger,
    };
    let now = 0;
    let fire: (() => void) | undefined;
    const log = createRecordFailureLog({ logger, now: () => now, schedule: (fn) => ((fire = fn), () => (fire = undefined)) });
    const full = errno('ENOSPC', 'no space left on device');
    log.failed('finished', '1:10', undefined, full);
    for (let i = 2; i <= 30; i += 1) log.failed('finished', `${i}:10`, undefined, full);
    log.failed('hook', '31:10', 'shop', full);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toBe(recordFailureLine('finished', '1:10', undefined, full).message);
    expect(lines[0]!.message).toMatch(/waits in memory and is written with the next write that succeeds; if none does before the agent stops, this vote is rewarded again at the next start/);
    expect(lines[0]!.fields).toMatchObject({ key: '1:10', error: expect.stringContaining('ENOSPC') });
    now = 10_000;
    fire!();
    expect(lines).toHaveLength(2);
    expect(lines[1]!.message).toMatch(/^30 more record\(s\) of finished votes or hooks could not be written in the last 10 s/);
    expect((lines[1]!.fields.keys as string[]).length).toBe(20);
    // A new interval starts with a line of its own again.
    log.failed('finished', '40:10', undefined, full);
    expect(lines).toHaveLength(3);
    log.flush();
    expect(lines).toHaveLength(3);
  });
});

describe('the votes readiness over the ledger\'s write health', () => {
  it('is not ready with the reason while the directory cannot be written, and gives the last word back after', async () => {
    const fs = { open: async () => ({ writeFile: async () => undefined, datasync: async () => undefined, sync: async () => undefined, close: async () => undefined }), unlink: async () => undefined } as unknown as FileStoreFs;
    let fire: (() => void) | undefined;
    const health = createWriteHealth({ directory: '/s', fs, schedule: (fn) => ((fire = fn), () => undefined) });
    const readiness = createReadiness(() => 0);
    const votes = createVotesReadiness(readiness, 'votes');
    const unwatch = votes.watch(health);
    votes.set('votes', true, 'polling 1 project every 1m');
    expect(readiness.snapshot().components.votes).toMatchObject({ ready: true, detail: 'polling 1 project every 1m' });

    health.failed(errno('ENOSPC', 'x'));
    const detail = unwritableVotesDetail(health.state());
    expect(detail).toMatch(/^cannot record new votes: no space left on the device holding \/s; they are refused \(webhook deliveries answered 503, the cursor waits\)/);
    expect(readiness.snapshot().components.votes).toMatchObject({ ready: false, detail });
    // The poller's word while the disk is full does not hide it.
    votes.set('votes', true, 'polling 1 project every 1m');
    expect(readiness.snapshot().components.votes?.ready).toBe(false);

    fire!();
    await health.settled();
    expect(readiness.snapshot().components.votes).toMatchObject({ ready: true, detail: 'polling 1 project every 1m' });
    unwatch();
    health.failed(errno('EROFS', 'x'));
    expect(readiness.snapshot().components.votes?.ready).toBe(true);
  });

  it('listing_agent_state_writable follows it, and the errors are counted by problem, once for a health two watch', async () => {
    const fs = { open: async () => ({ writeFile: async () => undefined, datasync: async () => undefined, sync: async () => undefined, close: async () => undefined }), unlink: async () => undefined } as unknown as FileStoreFs;
    const health = createWriteHealth({ directory: '/s', fs, schedule: () => () => undefined });
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    const scrape = async () => (await registry.metrics()).split('\n').filter((line) => line.startsWith('listing_agent_state_')).join('\n');
    const unwatchStore = metrics.watchStateWrites(health);
    const unwatchLedger = metrics.watchStateWrites(health);
    expect(await scrape()).toContain('listing_agent_state_writable 1');
    health.failed(errno('ENOSPC', 'x'));
    health.failed(errno('EROFS', 'x'));
    const text = await scrape();
    expect(text).toContain('listing_agent_state_writable 0');
    expect(text).toContain('listing_agent_state_write_errors_total{problem="no_space"} 1');
    expect(text).toContain('listing_agent_state_write_errors_total{problem="read_only"} 1');
    expect(text).toContain('listing_agent_state_write_errors_total{problem="denied"} 0');
    unwatchLedger();
    health.failed(errno('ENOSPC', 'x'));
    expect(await scrape()).toContain('listing_agent_state_write_errors_total{problem="no_space"} 2');
    unwatchStore();
    expect(await scrape()).toContain('listing_agent_state_writable 1');
  });
});
