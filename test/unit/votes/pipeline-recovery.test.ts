import { afterEach, describe, expect, it } from 'vitest';
import { nodeJournalFs, type JournalFs } from '../../../src/votes/journal.js';
import { createFileVoteLedger, type FileVoteLedger } from '../../../src/votes/ledger-file.js';
import { createMemoryVoteLedger } from '../../../src/votes/ledger-memory.js';
import type { DeadLetter, VoteLedger } from '../../../src/votes/types.js';
import { fakeHook, harness, settle, untilAborted } from './pipeline-harness.js';
import { makeVote, removeVoteDirs, T0, voteDir } from './votes-fixtures.js';

const ledgers: FileVoteLedger[] = [];
const fileLedger = (directory: string, fs?: JournalFs) => {
  const ledger = createFileVoteLedger({ directory, now: () => T0, ...(fs ? { fs } : {}) });
  ledgers.push(ledger);
  return ledger;
};

afterEach(async () => {
  await Promise.all(ledgers.splice(0).map((ledger) => ledger.close().catch(() => undefined)));
  await removeVoteDirs();
});

const started = async (ledger: VoteLedger, ...rest: Parameters<typeof harness> extends [unknown, ...infer R] ? R : never) => {
  const subject = harness(ledger, ...rest);
  await subject.pipeline.start();
  return subject;
};

describe('vote pipeline: retries and dead letters', () => {
  it('retries with exponential backoff and full jitter, then dead-letters and finishes the vote', async () => {
    const ledger = createMemoryVoteLedger();
    const failing = fakeHook('exec', 3, () => {
      throw new Error('exit code 3');
    });
    const ok = fakeHook('http');
    const { pipeline, time, metrics, events } = await started(ledger, [failing, ok], { backoff: { baseMs: 1_000, maxMs: 3_000 } });
    const vote = makeVote(1);
    await pipeline.ingest([vote], 'poll');
    await settle();
    expect(failing.calls).toHaveLength(1);
    // random() is 0.5: half of 1 s, 2 s, then 4 s capped at 3 s.
    await time.advance(499);
    expect(failing.calls).toHaveLength(1);
    await time.advance(1);
    expect(failing.calls).toHaveLength(2);
    await time.advance(1_000);
    expect(failing.calls).toHaveLength(3);
    expect(ledger.stats().pending).toBe(1);
    await time.advance(1_500);
    await pipeline.idle();
    expect(failing.calls.map((call) => call.attempt)).toEqual([1, 2, 3, 4]);
    expect(time.delays.filter((ms) => ms < 10_000)).toEqual([500, 1_000, 1_500]);

    const letter: DeadLetter = { key: vote.key, hook: 'exec', vote, attempts: 4, error: 'exit code 3', failedAt: new Date(time.now()).toISOString() };
    expect(await pipeline.failed()).toEqual([letter]);
    expect(events.filter((event) => event.name === 'voteDeadLettered').map((event) => event.args[0])).toEqual([letter]);
    expect(await metrics.hookRuns.get({ hook: 'exec', result: 'error' })).toBe(3);
    expect(await metrics.hookRuns.get({ hook: 'exec', result: 'dead_letter' })).toBe(1);
    expect(ok.calls).toHaveLength(1);
    expect(ledger.stats()).toMatchObject({ pending: 0, deadLetters: 1 });
  });

  it('retry() takes the dead letters and runs only their hooks again, with fresh retries', async () => {
    const ledger = createMemoryVoteLedger();
    let broken = true;
    const exec = fakeHook('exec', 0, () => {
      if (broken) throw new Error('down');
    });
    const http = fakeHook('http');
    const { pipeline } = await started(ledger, [exec, http]);
    const votes = [makeVote(1), makeVote(2), makeVote(3)];
    await pipeline.ingest(votes, 'poll');
    await pipeline.idle();
    expect((await pipeline.failed()).map((letter) => letter.key)).toEqual(votes.map((vote) => vote.key));

    broken = false;
    await expect(pipeline.retry({ hook: 'sms' })).rejects.toThrow(/no vote hook is named "sms"; the hooks are: exec, http/);
    expect(await pipeline.retry({ keys: [votes[1]!.key] })).toBe(1);
    await pipeline.idle();
    expect(exec.calls.map((call) => `${call.key}#${call.attempt}`)).toEqual([...votes.map((vote) => `${vote.key}#1`), `${votes[1]!.key}#1`]);
    expect(await pipeline.retry({ hook: 'exec' })).toBe(2);
    await pipeline.idle();
    expect(exec.calls).toHaveLength(6);
    expect(http.calls).toHaveLength(3); // never again
    expect(await pipeline.failed()).toEqual([]);
    expect(ledger.stats()).toMatchObject({ pending: 0, deadLetters: 0 });
    expect(await pipeline.retry()).toBe(0);
  });
});

describe('vote pipeline: crash recovery', () => {
  it('a pipeline stopped mid-hook leaves the vote pending; the next one re-runs only the unfinished hook', async () => {
    const dir = await voteDir();
    const ledger = fileLedger(dir);
    const quick = fakeHook('quick');
    const slow = fakeHook('slow', 2, (_vote, context) => untilAborted(context.signal));
    const first = await started(ledger, [quick, slow]);
    const vote = makeVote(1);
    await first.pipeline.ingest([vote], 'webhook');
    await settle();
    expect([quick.calls.length, slow.calls.length]).toEqual([1, 1]);
    const stopping = first.pipeline.stop(first.time.now() + 1_000);
    await first.time.advance(1_000);
    await stopping;
    expect(slow.calls).toHaveLength(1); // aborted, not retried
    await ledger.close(); // the owner closes it; the process "dies" here

    const reopened = fileLedger(dir);
    const [quick2, slow2] = [fakeHook('quick'), fakeHook('slow')];
    const second = await started(reopened, [quick2, slow2]);
    await second.pipeline.idle();
    expect(quick2.calls).toEqual([]);
    expect(slow2.calls.map((call) => [call.key, call.attempt])).toEqual([[vote.key, 1]]);
    expect(reopened.stats()).toMatchObject({ keys: 1, pending: 0 });
  });

  it('a new pipeline on the same open ledger resumes too, and does not re-run dead-lettered hooks', async () => {
    const ledger = createMemoryVoteLedger();
    const dead = fakeHook('dead', 0, () => {
      throw new Error('no');
    });
    const hang = fakeHook('hang', 0, (_vote, context) => untilAborted(context.signal));
    const first = await started(ledger, [dead, hang]);
    await first.pipeline.ingest([makeVote(1)], 'poll');
    await settle();
    const stopping = first.pipeline.stop(first.time.now());
    await first.time.advance(0);
    await stopping;
    expect(ledger.stats()).toMatchObject({ pending: 1, deadLetters: 1 });

    const [dead2, hang2] = [fakeHook('dead'), fakeHook('hang')];
    const second = await started(ledger, [dead2, hang2]);
    await second.pipeline.idle();
    expect([dead2.calls.length, hang2.calls.length]).toEqual([0, 1]);
    expect(ledger.stats()).toMatchObject({ pending: 0, deadLetters: 1 });
  });

  it('stop waits for calls in flight until the deadline, records them, and leaves queued votes pending', async () => {
    const ledger = createMemoryVoteLedger();
    const releases: Array<() => void> = [];
    const hook = fakeHook('exec', 0, () => new Promise<void>((resolve) => releases.push(resolve)));
    const { pipeline, time } = await started(ledger, [hook], { concurrency: 1 });
    await pipeline.ingest([makeVote(1), makeVote(2)], 'poll');
    await settle();
    let stopped = false;
    const stopping = pipeline.stop(time.now() + 10_000).then(() => (stopped = true));
    await time.advance(5_000);
    expect(stopped).toBe(false);
    releases.shift()!();
    await stopping;
    expect(hook.calls).toHaveLength(1);
    expect(ledger.stats()).toMatchObject({ keys: 2, pending: 1 });
    expect((await ledger.open()).map((entry) => entry.vote.userId)).toEqual(['2']);
  });

  it('runs the hooks of a vote whose first recording failed once a later batch finds it durable', async () => {
    let failNext = true;
    const fs: JournalFs = {
      ...nodeJournalFs,
      async open(path, flags, mode) {
        const handle = await nodeJournalFs.open(path, flags, mode);
        return {
          ...handle,
          writeFile: async (data: string) => {
            if (failNext && data.includes('"t":"p"')) {
              failNext = false;
              throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
            }
            await handle.writeFile(data);
          },
          datasync: () => handle.datasync(),
          sync: () => handle.sync(),
          close: () => handle.close(),
        };
      },
    };
    const hook = fakeHook('exec');
    const { pipeline } = await started(fileLedger(await voteDir(), fs), [hook]);
    const vote = makeVote(1);
    await expect(pipeline.ingest([vote], 'webhook')).rejects.toThrow(/input\/output error/);
    await settle();
    expect(hook.calls).toHaveLength(0); // not durable: no hook may run yet
    // The service retries the delivery: the vote is known by then, and durable once this resolves.
    expect(await pipeline.ingest([vote], 'webhook')).toEqual({ accepted: [], duplicates: 1 });
    await pipeline.idle();
    expect(hook.calls.map((call) => call.key)).toEqual([vote.key]);
  });
});
