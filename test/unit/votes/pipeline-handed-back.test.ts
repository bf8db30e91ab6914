import { describe, expect, it } from 'vitest';
import { createMemoryVoteLedger } from '../../../src/votes/ledger-memory.js';
import type { LedgerEntry, Vote, VoteLedger } from '../../../src/votes/types.js';
import { fakeHook, harness, settle } from './pipeline-harness.js';
import { makeVote } from './votes-fixtures.js';

/**
 * Votes a ledger's sweep hands back (`onRecovered`) while this agent runs them or just did.
 *
 * A vote rewarded here whose completion the ledger has not made durable yet (the Redis ledger
 * keeps it queued while Redis refuses writes) is still pending in the ledger, and a sweep may hand
 * it back (`onRecovered`): the pipeline does not run it again, though its job is gone (issue 35).
 * The Redis ledger itself is in test/integration/votes/ledger-redis-queued.test.ts.
 *
 * A vote whose earlier record was uncertain (its reply lost in a failover), recorded again by an
 * ingest, is claimed by the sweep from that very record while the ingest waits for Redis to
 * confirm it: handed over first, then accepted, it runs once, not once per road.
 */

/** A memory ledger whose `recordComplete` waits until `complete()`, and whose `recover` plays a sweep. */
function slowToComplete() {
  const listeners: Array<(entries: LedgerEntry[]) => void> = [];
  const memory = createMemoryVoteLedger();
  const waiting: Array<() => void> = [];
  const record = memory.recordComplete.bind(memory); // Object.assign below replaces it on `memory`
  const ledger: VoteLedger & { recover(entries: LedgerEntry[]): void; complete(): void } = Object.assign(memory, {
    recordComplete: (key: string) => new Promise<void>((resolve) => waiting.push(resolve)).then(() => record(key)),
    onRecovered: (listener: (entries: LedgerEntry[]) => void) => void listeners.push(listener),
    recover: (entries: LedgerEntry[]) => listeners.forEach((listener) => listener(entries)),
    complete: () => waiting.splice(0).forEach((resolve) => resolve()),
  });
  return ledger;
}

describe('vote pipeline: a vote handed back while its completion is being recorded', () => {
  it('is not run again, though its job is gone', async () => {
    const ledger = slowToComplete();
    const pay = fakeHook('pay');
    const { pipeline } = harness(ledger, [pay]);
    await pipeline.start();
    const vote = makeVote(1);
    await pipeline.ingest([vote], 'webhook');
    await settle();
    expect(pay.calls.map((call) => call.key)).toEqual([vote.key]);
    expect(pipeline.stats().votes).toBe(0); // the job is gone; its `complete` is not recorded yet
    ledger.recover([{ vote, done: [], complete: false }]);
    await settle();
    expect(pay.calls.map((call) => call.key)).toEqual([vote.key]);
    ledger.complete();
    await pipeline.idle();
    expect(pay.calls).toHaveLength(1);
  });
});

/** A memory ledger whose `recordPending` answers only when `answer()` is called, and whose `recover` plays a sweep. */
function slowToRecord() {
  const listeners: Array<(entries: LedgerEntry[]) => void> = [];
  const memory = createMemoryVoteLedger();
  const record = memory.recordPending.bind(memory);
  const waiting: Array<() => void> = [];
  const ledger = Object.assign(memory, {
    recordPending: async (votes: readonly Vote[]) => {
      const accepted = await record(votes);
      await new Promise<void>((resolve) => waiting.push(resolve));
      return accepted;
    },
    onRecovered: (listener: (entries: LedgerEntry[]) => void) => void listeners.push(listener),
    recover: (entries: LedgerEntry[]) => listeners.forEach((listener) => listener(entries)),
    answer: () => waiting.splice(0).forEach((resolve) => resolve()),
  });
  return ledger;
}

describe('vote pipeline: a vote handed back while its ingest waits for the ledger', () => {
  it('runs once', async () => {
    const ledger = slowToRecord();
    let release: () => void = () => undefined;
    const pay = fakeHook('pay', 0, () => new Promise<void>((resolve) => (release = resolve)));
    const { pipeline } = harness(ledger, [pay]);
    await pipeline.start();
    const vote = makeVote(1);
    const ingested = pipeline.ingest([vote], 'webhook');
    await settle();
    ledger.recover([{ vote, done: [], complete: false }]); // the sweep claimed the record just made
    await settle();
    ledger.answer();
    expect((await ingested).accepted).toHaveLength(1);
    await settle();
    release(); // the handed-over job's call, still running when the ingest was answered
    await settle();
    release();
    await pipeline.idle();
    await settle();
    expect(pay.calls.map((call) => call.key)).toEqual([vote.key]);
  });
});
