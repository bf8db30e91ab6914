import { describe, expect, it } from 'vitest';
import { createMemoryVoteLedger } from '../../../src/votes/ledger-memory.js';
import type { LedgerEntry, Vote, VoteLedger } from '../../../src/votes/types.js';
import { fakeHook, harness, settle } from './pipeline-harness.js';
import { makeVote } from './votes-fixtures.js';

/**
 * A hook retry asks the ledger whether this agent still holds the vote (`VoteLedger.holds`, the
 * Redis ledger's): another agent took it over while the first call here was in flight, so the
 * retry would reward it a third time. The ledger here is the memory one with a `holds` the test
 * answers; the Redis one is in test/integration/votes/ledger-redis-holds.test.ts.
 */

/** A memory ledger whose `holds` answers `answer` and counts the questions; `recover` plays its sweep. */
function ledgerHolding(answer: (key: string) => Promise<boolean>) {
  const asked: string[] = [];
  const listeners: Array<(entries: LedgerEntry[]) => void> = [];
  const ledger: VoteLedger & { asked: string[]; recover(entries: LedgerEntry[]): void } = Object.assign(createMemoryVoteLedger(), {
    asked,
    holds: (key: string) => {
      asked.push(key);
      return answer(key);
    },
    onRecovered: (listener: (entries: LedgerEntry[]) => void) => void listeners.push(listener),
    recover: (entries: LedgerEntry[]) => listeners.forEach((listener) => listener(entries)),
  });
  return ledger;
}

const failOnce = (name: string, retries = 3) =>
  fakeHook(name, retries, (_vote, _context, call) => {
    if (call === 1) throw new Error('the hook timed out after 5000 ms');
  });

describe('vote pipeline: a retry of a vote another agent holds now', () => {
  it('is let go: no call, no record of its own, the lane goes on, the other hooks record their success', async () => {
    const ledger = ledgerHolding(() => Promise.resolve(false));
    const pay = failOnce('pay');
    let finishLog: () => void = () => undefined;
    const log = fakeHook('log', 0, () => new Promise<void>((resolve) => (finishLog = resolve)));
    const finished: Vote[] = [];
    const { pipeline, time } = harness(ledger, [pay, log], { onFinished: (vote) => finished.push(vote) });
    await pipeline.start();
    const [first, second] = [makeVote(1), makeVote(1, 60_000)]; // one user: the second waits in pay's lane
    await pipeline.ingest([first, second], 'poll');
    await settle();
    expect(pay.calls.map((call) => call.key)).toEqual([first.key]);
    await time.advance(1_000);
    expect(ledger.asked).toEqual([first.key]);
    // Not retried; the lane went on to the user's next vote.
    expect(pay.calls.map((call) => `${call.key}#${call.attempt}`)).toEqual([`${first.key}#1`, `${second.key}#1`]);
    finishLog();
    await settle();
    finishLog();
    await pipeline.idle();
    // The first vote stays as the other agent leaves it (here: pending, with log's success only).
    const pending = await ledger.open();
    expect(pending.map((entry) => [entry.vote.key, entry.done])).toEqual([[first.key, ['log']]]);
    expect(finished.map((vote) => vote.key)).toEqual([second.key]);
    expect(pipeline.stats()).toMatchObject({ votes: 0, retrying: 0 });
  });

  it('runs the hook let go again when the vote comes back to this agent (its holder stopped), and then records the finish', async () => {
    const ledger = ledgerHolding(() => Promise.resolve(false));
    const pay = failOnce('pay');
    let finishLog: () => void = () => undefined;
    const log = fakeHook('log', 0, () => new Promise<void>((resolve) => (finishLog = resolve)));
    const finished: Vote[] = [];
    const { pipeline, time } = harness(ledger, [pay, log], { onFinished: (vote) => finished.push(vote) });
    await pipeline.start();
    const vote = makeVote(1);
    await pipeline.ingest([vote], 'poll');
    await settle();
    await time.advance(1_000);
    expect(pay.calls).toHaveLength(1); // let go: another agent holds the vote
    // That agent stopped before finishing it; this agent's sweep takes it (log still runs here).
    ledger.recover([{ vote, done: [], complete: false, deadLettered: [] }]);
    await settle();
    expect(pay.calls.map((call) => call.attempt)).toEqual([1, 1]);
    expect(log.calls).toHaveLength(1);
    finishLog();
    await pipeline.idle();
    expect(ledger.stats()).toMatchObject({ pending: 0 });
    expect(finished.map((done) => done.key)).toEqual([vote.key]);
  });

  it('runs when the ledger cannot say (it rejects), and when this agent holds the vote', async () => {
    let answer = (): Promise<boolean> => Promise.reject(new Error('Redis: connection closed'));
    const ledger = ledgerHolding(() => answer());
    const pay = fakeHook('pay', 3, (_vote, _context, call) => {
      if (call <= 2) throw new Error('503 from the reward service');
    });
    const { pipeline, time } = harness(ledger, [pay]);
    await pipeline.start();
    const vote = makeVote(1);
    await pipeline.ingest([vote], 'poll');
    await settle();
    await time.advance(1_000);
    expect(pay.calls).toHaveLength(2);
    answer = () => Promise.resolve(true);
    await time.advance(2_000);
    await pipeline.idle();
    expect(pay.calls.map((call) => call.attempt)).toEqual([1, 2, 3]);
    expect(ledger.stats()).toMatchObject({ pending: 0, deadLetters: 0 });
  });

  it('runs all the same for a vote that dead-lettered a hook here (a replay of that letter runs only its hook)', async () => {
    const ledger = ledgerHolding(() => Promise.resolve(false));
    const dead = fakeHook('dead', 0, () => {
      throw new Error('exit code 1');
    });
    const pay = failOnce('pay');
    const { pipeline, time } = harness(ledger, [dead, pay]);
    await pipeline.start();
    await pipeline.ingest([makeVote(1)], 'poll');
    await settle();
    await time.advance(1_000);
    await pipeline.idle();
    expect(ledger.asked).toEqual([]);
    expect(pay.calls.map((call) => call.attempt)).toEqual([1, 2]);
    expect(ledger.stats()).toMatchObject({ pending: 0, deadLetters: 1 });
  });

  it('is not run when the pipeline stops while the ledger is asked: the vote stays pending', async () => {
    let answer: (held: boolean) => void = () => undefined;
    const ledger = ledgerHolding(() => new Promise<boolean>((resolve) => (answer = resolve)));
    const pay = failOnce('pay');
    const { pipeline, time } = harness(ledger, [pay]);
    await pipeline.start();
    await pipeline.ingest([makeVote(1)], 'poll');
    await settle();
    await time.advance(1_000);
    expect(ledger.asked).toHaveLength(1);
    const stopping = pipeline.stop(time.now() + 1_000);
    answer(true);
    await stopping;
    expect(pay.calls).toHaveLength(1);
    expect(ledger.stats()).toMatchObject({ pending: 1 });
  });
});
