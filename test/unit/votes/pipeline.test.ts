import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { CapabilityContext } from '../../../src/runtime/capability.js';
import { ListingAgentError } from '../../../src/errors.js';
import { nodeJournalFs, type JournalFs } from '../../../src/votes/journal.js';
import { createFileVoteLedger } from '../../../src/votes/ledger-file.js';
import { createMemoryVoteLedger } from '../../../src/votes/ledger-memory.js';
import { createVotePipeline, type VotePipelineEmit } from '../../../src/votes/pipeline.js';
import type { Vote, VoteLedger } from '../../../src/votes/types.js';
import { capturedLog } from '../../helpers/log-lines.js';
import { fakeHook, harness, settle, untilAborted } from './pipeline-harness.js';
import { makeVote, removeVoteDirs, T0, voteDir } from './votes-fixtures.js';

afterEach(removeVoteDirs);

const started = async (ledger: VoteLedger, ...args: Parameters<typeof harness> extends [unknown, ...infer R] ? R : never) => {
  const subject = harness(ledger, ...args);
  await subject.pipeline.start();
  return subject;
};

describe('vote pipeline: ingest', () => {
  it('dedupes across roads and fires each hook once per key, with the key as idempotency key', async () => {
    const ledger = createMemoryVoteLedger();
    const [exec, http] = [fakeHook('exec'), fakeHook('http')];
    const { pipeline, metrics, events } = await started(ledger, [exec, http]);
    const [a, b, c] = [makeVote(1), makeVote(2), makeVote(3)];

    expect(await pipeline.ingest([a, b, a], 'poll')).toEqual({ accepted: [a, b], duplicates: 1 });
    const webhook = await pipeline.ingest([{ ...b, road: 'webhook', voteId: '1' }, { ...c, road: 'poll' }], 'webhook');
    expect(webhook).toEqual({ accepted: [{ ...c, road: 'webhook' }], duplicates: 1 });
    await pipeline.idle();

    for (const hook of [exec, http]) {
      expect(hook.calls.map((call) => [call.key, call.idempotencyKey, call.attempt])).toEqual([a, b, c].map((vote) => [vote.key, vote.key, 1]));
    }
    expect(await metrics.votesReceived.get({ road: 'poll' })).toBe(3);
    expect(await metrics.votesReceived.get({ road: 'webhook' })).toBe(2);
    expect(await metrics.hookRuns.get({ hook: 'exec', result: 'ok' })).toBe(3);
    expect(events.filter((event) => event.name === 'voteReceived').map((event) => (event.args[0] as Vote).key)).toEqual([a.key, b.key, c.key]);
    expect(ledger.stats()).toMatchObject({ keys: 3, pending: 0 });
    // A key already finished stays a duplicate.
    expect(await pipeline.ingest([a], 'webhook')).toEqual({ accepted: [], duplicates: 1 });
    await pipeline.idle();
    expect(exec.calls).toHaveLength(3);
  });

  it('resolves once the votes are durably pending, before any hook runs', async () => {
    const base = createMemoryVoteLedger();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ledger: VoteLedger = { ...base, recordPending: async (votes) => gate.then(() => base.recordPending(votes)) };
    const hook = fakeHook('exec', 0, () => new Promise(() => undefined)); // never answers
    const { pipeline } = await started(ledger, [hook]);

    let resolved = false;
    const ingesting = pipeline.ingest([makeVote(1)], 'webhook').then((result) => {
      resolved = true;
      expect(hook.calls).toHaveLength(0); // the caller (a webhook's 2xx) goes first
      return result;
    });
    await settle();
    expect(resolved).toBe(false);
    release();
    expect((await ingesting).accepted).toHaveLength(1);
    await settle();
    expect(hook.calls).toHaveLength(1);
  });

  /** A file ledger whose journal logs each append (`write <users of its p lines>`) and fsync start (`sync`); `gate` holds up the appends it returns a promise for. */
  async function loggedLedger(events: string[], gate: (users: string) => Promise<void> | undefined = () => undefined) {
    const fs: JournalFs = {
      ...nodeJournalFs,
      async open(path, flags, mode) {
        const handle = await nodeJournalFs.open(path, flags, mode);
        if (!path.endsWith('votes.journal')) return handle;
        const pendingUsers = (data: string) => data.split('\n').flatMap((line) => (line.startsWith('{"t":"p"') ? [(JSON.parse(line) as { v: { userId: string } }).v.userId] : []));
        return {
          ...handle,
          async writeFile(data) {
            const users = pendingUsers(data).join(',');
            events.push(`write ${users}`);
            await gate(users);
            await handle.writeFile(data);
          },
          datasync: () => (events.push('sync'), handle.datasync()),
        };
      },
    };
    return createFileVoteLedger({ directory: await voteDir(), keepKeysForMs: 3_600_000, now: () => T0, fs });
  }

  /** A pipeline with one hook on a logged file ledger whose append of vote 3 hangs until `release()`; `hooked()`: the hook calls so far. */
  async function secondWriteHangs() {
    const events: string[] = [];
    let release = () => undefined as void;
    const hung = new Promise<void>((resolve) => (release = resolve));
    const ledger = await loggedLedger(events, (users) => (users === '3' ? hung : undefined));
    const hook = fakeHook('exec', 0, (vote) => void events.push(`hook ${vote.userId}`));
    const { pipeline } = await started(ledger, [hook]);
    return { pipeline, ledger, release: () => release(), hooked: () => events.filter((event) => event.startsWith('hook')) };
  }

  it.each(['poll', 'webhook'] as const)("runs a vote's hooks once its ingest resolved, without waiting for the next write (%s)", async (road) => {
    const { pipeline, ledger, hooked, release } = await secondWriteHangs();

    await pipeline.ingest([makeVote(1)], road);
    const next = pipeline.ingest([makeVote(3)], road);
    await settle(10);
    // Vote 3's write hangs; vote 1's hook did not wait for it, whichever road brought it.
    expect(hooked()).toEqual(['hook 1']);
    release();
    await next;
    await pipeline.idle();
    expect(hooked()).toEqual(['hook 1', 'hook 3']);
    await pipeline.stop(T0);
    await ledger.close();
  });

  it('refuses votes before start and after stop', async () => {
    const { pipeline } = harness(createMemoryVoteLedger(), []);
    const error = await pipeline.ingest([makeVote(1)], 'poll').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ListingAgentError);
    expect(error).toMatchObject({ code: 'votes_not_running' });
    await pipeline.start();
    await pipeline.stop(Date.now());
    await expect(pipeline.ingest([makeVote(1)], 'poll')).rejects.toMatchObject({ code: 'votes_not_running' });
  });

  it('finishes votes at once when there are no hooks, and refuses two hooks with one name', async () => {
    const ledger = createMemoryVoteLedger();
    const { pipeline } = await started(ledger, []);
    await pipeline.ingest([makeVote(1)], 'poll');
    await pipeline.idle();
    expect(ledger.stats()).toMatchObject({ keys: 1, pending: 0 });
    expect(() => harness(ledger, [fakeHook('a'), fakeHook('a')])).toThrow(/unique/);
  });

  it("accepts the agent's emit", () => {
    expectTypeOf<CapabilityContext['emit']>().toExtend<VotePipelineEmit>();
  });
});

describe('vote pipeline: scheduling', () => {
  it('keeps at most `concurrency` hook calls in flight', async () => {
    const releases: Array<() => void> = [];
    const hook = fakeHook('exec', 0, () => new Promise<void>((resolve) => releases.push(resolve)));
    const { pipeline } = await started(createMemoryVoteLedger(), [hook], { concurrency: 4 });
    await pipeline.ingest(Array.from({ length: 10 }, (_, i) => makeVote(i)), 'poll');
    await settle();
    expect(hook.calls).toHaveLength(4);
    expect(pipeline.stats()).toMatchObject({ votes: 10, running: 4, waiting: 6 });
    while (releases.length > 0) {
      releases.shift()!();
      await settle();
    }
    await pipeline.idle();
    expect(hook.calls).toHaveLength(10);
    expect(hook.peak()).toBe(4);
  });

  it("calls one user's votes in order, also across a retry; other users do not wait", async () => {
    const first = makeVote(1, 0);
    const hook = fakeHook('exec', 1, (vote, context) => {
      if (vote.key === first.key && context.attempt === 1) throw new Error('bot restarting');
    });
    const { pipeline, time } = await started(createMemoryVoteLedger(), [hook]);
    await pipeline.ingest([first, makeVote(1, 1000), makeVote(2), makeVote(1, 2000)], 'poll');
    await settle();
    expect(hook.calls.map((call) => call.key)).toEqual([first.key, makeVote(2).key]);
    await time.advance(1_000);
    await pipeline.idle();
    expect(hook.calls.map((call) => `${call.key}#${call.attempt}`)).toEqual([
      `${first.key}#1`,
      `${makeVote(2).key}#1`,
      `${first.key}#2`,
      `${makeVote(1, 1000).key}#1`,
      `${makeVote(1, 2000).key}#1`,
    ]);
  });

  it('compacts the ledger every compactEveryMs while running', async () => {
    const base = createMemoryVoteLedger();
    const compactions: number[] = [];
    const ledger: VoteLedger = { ...base, compact: async (now) => void compactions.push(now) };
    const { pipeline, time } = await started(ledger, [], { compactEveryMs: 60_000 });
    await time.advance(150_000);
    expect(compactions).toEqual([time.now() - 30_000 - 60_000, time.now() - 30_000]);
    await pipeline.stop(time.now());
    await time.advance(600_000);
    expect(compactions).toHaveLength(2);
  });
});

describe('vote pipeline: with a real hook list', () => {
  it('is created by the plain factory with defaults', async () => {
    const pipeline = createVotePipeline({ ledger: createMemoryVoteLedger(), hooks: [fakeHook('exec')], logger: { error() {}, warn() {}, info() {}, debug() {}, child: () => ({}) as never }, now: Date.now });
    await pipeline.start();
    await pipeline.ingest([makeVote(1)], 'poll');
    await pipeline.idle();
    await pipeline[Symbol.asyncDispose]();
    expect(pipeline.stats()).toEqual({ votes: 0, running: 0, waiting: 0, retrying: 0 });
  });

  it('aborts a hook still running at the stop deadline', async () => {
    const hook = fakeHook('exec', 3, (_vote, context) => untilAborted(context.signal));
    const { pipeline, time } = await started(createMemoryVoteLedger(), [hook]);
    await pipeline.ingest([makeVote(1)], 'poll');
    await settle();
    const stopping = pipeline.stop(time.now() + 5_000);
    await time.advance(4_999);
    expect(hook.calls[0]!.signal.aborted).toBe(false);
    await time.advance(1);
    await stopping;
    expect(hook.calls[0]!.signal.aborted).toBe(true);
    expect(hook.calls).toHaveLength(1); // no retry after a stop
  });

  it('gives the calls of a new start a signal that is not aborted, after a stop that aborted the last run', async () => {
    let blocking = true;
    const hook = fakeHook('exec', 3, (_vote, context) => (blocking ? untilAborted(context.signal) : Promise.resolve()));
    const { pipeline, time } = await started(createMemoryVoteLedger(), [hook]);
    await pipeline.ingest([makeVote(1)], 'poll');
    await settle();
    const stopping = pipeline.stop(time.now() + 1_000);
    await time.advance(1_000);
    await stopping;
    expect(hook.calls[0]!.signal.aborted).toBe(true);
    blocking = false;
    await pipeline.start(); // the aborted vote is still pending: it runs again, with a live signal
    await pipeline.ingest([makeVote(2)], 'poll');
    await pipeline.idle();
    expect(hook.calls.map((call) => [call.key, call.signal.aborted])).toEqual([
      [makeVote(1).key, true],
      [makeVote(1).key, false],
      [makeVote(2).key, false],
    ]);
    expect(hook.calls[1]!.signal).toBe(hook.calls[2]!.signal); // one signal per run, not one per call
  });
});

describe('vote pipeline: backlog', () => {
  it('holds a poller while too many votes wait for their hooks, never a webhook delivery', async () => {
    const gates: Array<() => void> = [];
    const hook = fakeHook('slow', 0, () => new Promise<void>((resolve) => gates.push(resolve)));
    const { pipeline } = await started(createMemoryVoteLedger(), [hook], { maxBacklog: 4, concurrency: 1 });
    let held = false;
    const poll = pipeline.ingest([1, 2, 3, 4, 5].map((n) => makeVote(n)), 'poll').then((result) => {
      held = false;
      return result;
    });
    held = true;
    await settle();
    expect(held).toBe(true);
    // A webhook delivery in the same backlog is answered at once: the service waits only 5 s.
    expect((await pipeline.ingest([makeVote(6)], 'webhook')).accepted).toHaveLength(1);
    // The poller goes on once the hooks are down to half the backlog (2 votes left).
    for (let released = 0; released < 4; released += 1) {
      await settle();
      gates.shift()?.();
    }
    expect((await poll).accepted).toHaveLength(5);
    while (gates.length > 0 || hook.calls.length < 6) {
      await settle();
      gates.shift()?.();
    }
    await pipeline.idle();
    expect(hook.calls).toHaveLength(6);
  });
});

describe('vote pipeline: finished records of one write', () => {
  it('names every vote whose finished record a failed group write lost: the first on a line, the rest in the summary', async () => {
    const ledger = createMemoryVoteLedger();
    const failure = new Error('EROFS: read-only file system');
    // One promise for the records of a turn, as a ledger with group commits gives (the file ledger).
    let shared: { promise: Promise<void>; reject: (error: unknown) => void } | undefined;
    const asked: string[] = [];
    const grouped: VoteLedger = {
      ...ledger,
      recordComplete(key) {
        asked.push(key);
        if (shared === undefined) {
          let reject!: (error: unknown) => void;
          const promise = new Promise<void>((_, fail) => (reject = fail));
          shared = { promise, reject };
          setImmediate(() => {
            shared = undefined;
            reject(failure);
          });
        }
        return shared.promise;
      },
    };
    const { logger, lines } = capturedLog({ level: 'warn' });
    const { pipeline } = harness(grouped, [fakeHook('exec')], { logger });
    await pipeline.start();
    const votes = [1, 2, 3].map((user) => makeVote(user));
    await pipeline.ingest(votes, 'poll');
    await pipeline.idle();
    expect(asked).toEqual(votes.map((vote) => vote.key));
    await pipeline.stop(Date.now() + 1_000);
    // The first failure of the interval is a line of its own; the summary at the stop names the other two.
    expect(lines.map((line) => line.msg)).toEqual([expect.stringMatching(/^could not record that a vote is finished/), expect.stringMatching(/^2 more record\(s\) of finished votes/)]);
    expect(lines[0]!.key).toBe(votes[0]!.key);
    expect(lines[1]!.keys).toEqual([votes[1]!.key, votes[2]!.key]);
  });
});
