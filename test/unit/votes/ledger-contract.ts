import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VoteLedger } from '../../../src/votes/types.js';
import { HOUR, makeLetter, makeVote, T0 } from './votes-fixtures.js';

/** A ledger under test. */
export interface LedgerSubject {
  ledger: VoteLedger;
  /**
   * Closes `ledger` and returns a ledger on the same storage, not yet opened (a fresh instance
   * for persistent ledgers; the same one for the memory ledger).
   */
  reopen(): Promise<VoteLedger>;
  cleanup?: () => Promise<void>;
}

/** What the contract asks of the ledger it makes. */
export interface LedgerSettings {
  keepKeysForMs: number;
}

const KEEP = HOUR;

/**
 * The behaviour every `VoteLedger` shares (memory, file, and later Redis). `makeLedger` returns a
 * fresh, empty, not yet opened ledger with the given settings; the contract opens and closes it.
 */
export function describeLedgerContract(name: string, makeLedger: (settings: LedgerSettings) => Promise<LedgerSubject>): void {
  describe(`VoteLedger contract: ${name}`, () => {
    let subject: LedgerSubject;
    let ledger: VoteLedger;

    beforeEach(async () => {
      subject = await makeLedger({ keepKeysForMs: KEEP });
      ledger = subject.ledger;
      expect(await ledger.open()).toEqual([]);
    });

    afterEach(async () => {
      await ledger.close().catch(() => undefined);
      await subject.cleanup?.();
    });

    /** Closes and opens again on the same storage; resolves with what `open()` returned. */
    async function reopen() {
      ledger = await subject.reopen();
      return ledger.open();
    }

    it('starts empty and describes itself', () => {
      expect(ledger.stats()).toMatchObject({ keys: 0, pending: 0, deadLetters: 0 });
      expect(ledger.describe()).toMatch(/\S/);
      expect(ledger.has('1:1')).toBe(false);
    });

    it('records new votes as pending and skips known keys, also twice in one batch', async () => {
      const [a, b, c] = [makeVote(1), makeVote(2), makeVote(3)];
      expect(await ledger.recordPending([a, b])).toEqual([a, b]);
      expect(await ledger.recordPending([b, c, c, { ...a, road: 'webhook' }])).toEqual([c]);
      expect(ledger.has(a.key) && ledger.has(b.key) && ledger.has(c.key)).toBe(true);
      expect(ledger.stats()).toMatchObject({ keys: 3, pending: 3, deadLetters: 0 });
    });

    it('gives exactly one of many concurrent callers a new key', async () => {
      const vote = makeVote(7);
      const results = await Promise.all(Array.from({ length: 20 }, () => ledger.recordPending([vote])));
      expect(results.flat()).toEqual([vote]);
    });

    it('returns pending votes on open, in recording order, with the hooks done so far', async () => {
      const votes = [makeVote(3), makeVote(1), makeVote(2), makeVote(1, 60_000)];
      await ledger.recordPending(votes);
      await ledger.recordHookDone(votes[1]!.key, 'exec');
      await ledger.recordHookDone(votes[1]!.key, 'exec'); // twice is once
      await ledger.recordHookDone(votes[2]!.key, 'http');
      await ledger.recordComplete(votes[0]!.key);
      const pending = await reopen();
      expect(pending.map((entry) => entry.vote)).toEqual(votes.slice(1));
      expect(pending.map((entry) => [entry.done, entry.complete, entry.deadLettered ?? []])).toEqual([
        [['exec'], false, []],
        [['http'], false, []],
        [[], false, []],
      ]);
      expect(ledger.has(votes[0]!.key)).toBe(true);
      expect(await ledger.recordPending([votes[0]!])).toEqual([]);
    });

    it('keeps votes whole: the user block, a webhook vote ID, and nothing shared with the caller', async () => {
      const vote = makeVote(9, 0, { road: 'webhook', voteId: '808499215864008704', user: { name: 'Ada', avatarUrl: null } });
      await ledger.recordPending([vote]);
      vote.user!.name = 'changed later by the caller';
      const [entry] = await reopen();
      expect(entry!.vote).toEqual({ ...vote, user: { name: 'Ada', avatarUrl: null } });
    });

    it('records dead letters, lists them, and keeps the vote finished but not re-run', async () => {
      const vote = makeVote(4);
      await ledger.recordPending([vote]);
      await ledger.recordHookDone(vote.key, 'http');
      await ledger.recordDeadLetter(makeLetter(vote, 'exec'));
      expect(await ledger.deadLetters()).toEqual([makeLetter(vote, 'exec')]);
      // Still pending until complete: a restart now must not run `exec` again by itself.
      const [entry] = await reopen();
      expect(entry).toMatchObject({ done: ['http'], deadLettered: ['exec'], complete: false });
      await ledger.recordComplete(vote.key);
      expect(await reopen()).toEqual([]);
      expect(ledger.stats()).toMatchObject({ keys: 1, pending: 0, deadLetters: 1 });
    });

    it('takes dead letters by key and by hook, and the vote is pending again for those hooks', async () => {
      const [a, b] = [makeVote(5), makeVote(6)];
      await ledger.recordPending([a, b]);
      for (const vote of [a, b]) {
        await ledger.recordHookDone(vote.key, 'http');
        await ledger.recordDeadLetter(makeLetter(vote, 'exec'));
        await ledger.recordDeadLetter(makeLetter(vote, 'sms'));
        await ledger.recordComplete(vote.key);
      }
      expect(await ledger.takeDeadLetters({ keys: [a.key], hook: 'exec' })).toEqual([makeLetter(a, 'exec')]);
      expect(await ledger.takeDeadLetters({ keys: ['nobody:1'] })).toEqual([]);
      const pending = await reopen();
      expect(pending).toEqual([{ vote: a, done: ['http'], complete: false, deadLettered: ['sms'] }]);
      expect((await ledger.deadLetters()).map((letter) => `${letter.key} ${letter.hook}`)).toEqual([`${a.key} sms`, `${b.key} exec`, `${b.key} sms`]);
      expect(await ledger.takeDeadLetters()).toHaveLength(3);
      expect(await ledger.deadLetters()).toEqual([]);
      expect((await reopen()).map((entry) => entry.vote.key)).toEqual([a.key, b.key]);
    });

    it('forgets finished keys only after expiry plus keepKeysFor, and never a pending one', async () => {
      const finished = makeVote(1);
      const pending = makeVote(2);
      const lettered = makeVote(3);
      const later = makeVote(4, 6 * HOUR);
      await ledger.recordPending([finished, pending, lettered, later]);
      for (const vote of [finished, lettered, later]) await ledger.recordComplete(vote.key);
      await ledger.recordDeadLetter(makeLetter(lettered, 'exec'));
      const expiry = T0 + 12 * HOUR;

      await ledger.compact(expiry + KEEP);
      expect(ledger.has(finished.key)).toBe(true); // not yet *past* the slack
      await ledger.compact(expiry + KEEP + 1);
      expect(ledger.has(finished.key)).toBe(false);
      expect([pending, lettered, later].map((vote) => ledger.has(vote.key))).toEqual([true, true, true]);
      expect(ledger.stats()).toMatchObject({ keys: 3, pending: 1, deadLetters: 1 });

      // Forgotten for good, also after a restart; the key may then be recorded as a new vote.
      expect((await reopen()).map((entry) => entry.vote.key)).toEqual([pending.key]);
      await ledger.compact(expiry + KEEP + 1);
      expect(ledger.has(finished.key)).toBe(false);
      expect(await ledger.recordPending([finished])).toEqual([finished]);
      await ledger.compact(T0 + 100 * HOUR);
      expect(ledger.has(later.key)).toBe(false);
      expect(ledger.has(pending.key) && ledger.has(finished.key)).toBe(true);
    });

    it('holds its own pending votes, and every key it cannot tell about (holds is optional)', async () => {
      // A ledger of one agent has no `holds`: every vote is its own.
      if (ledger.holds === undefined) return;
      const [pending, unknown] = [makeVote(40), makeVote(41)];
      await ledger.recordPending([pending]);
      expect(await ledger.holds(pending.key)).toBe(true);
      // No record at all (lost, or never here): a retry rather than a lost vote.
      expect(await ledger.holds(unknown.key)).toBe(true);
    });

    it('refuses changes after close', async () => {
      await ledger.close();
      await expect(ledger.recordPending([makeVote(1)])).rejects.toThrow(/closed|open/);
      await expect(ledger.recordHookDone('1:1', 'exec')).rejects.toThrow();
    });
  });
}
