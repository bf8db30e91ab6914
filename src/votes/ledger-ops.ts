import type { JournalRecord } from './ledger-records.js';
import { copyVote, type DeadLetterFilter, type LedgerState } from './ledger-state.js';
import type { DeadLetter, Vote, VoteLedger } from './types.js';

/** The changing half of a {@link VoteLedger}, shared by the memory and the file ledger. */
export type LedgerOperations = Pick<
  VoteLedger,
  'recordPending' | 'recordHookDone' | 'recordComplete' | 'recordDeadLetter' | 'takeDeadLetters'
>;

/**
 * Turns each change into journal records, applies them to the `current()` state at once (so `has()` answers
 * for a vote whose record is still on its way to disk), and resolves once `persist` says they are
 * durable. `persist` is called in the same tick as the change, also with no records: a caller
 * told "already known" must still wait until the record that made it known is durable (a webhook
 * retry racing the first delivery must not be answered 2xx before the vote is on disk).
 */
export function createLedgerOperations(
  current: () => LedgerState,
  persist: (records: JournalRecord[]) => Promise<void>,
  requireOpen: (action: string) => void,
): LedgerOperations {
  async function change(action: string, records: JournalRecord[]): Promise<void> {
    requireOpen(action);
    const state = current();
    for (const record of records) state.apply(record);
    await persist(records);
  }

  return {
    async recordPending(votes: readonly Vote[]) {
      requireOpen('record votes in');
      const state = current();
      const fresh: Vote[] = [];
      const records: JournalRecord[] = [];
      for (const vote of votes) {
        if (state.has(vote.key)) continue;
        // A copy: nothing the caller or a hook does to the vote later changes what is recorded.
        const record: JournalRecord = { t: 'p', v: copyVote(vote) };
        // Applied one by one: a key twice in one batch is recorded once.
        state.apply(record);
        records.push(record);
        fresh.push(vote);
      }
      await persist(records);
      return fresh;
    },

    recordHookDone: (key, hook) => change('record a hook run in', [{ t: 'h', k: key, h: hook }]),

    recordComplete: (key) => change('record a finished vote in', [{ t: 'c', k: key }]),

    recordDeadLetter: (letter: DeadLetter) =>
      change('record a dead letter in', [{ t: 'd', l: { ...letter, vote: copyVote(letter.vote) } }]),

    async takeDeadLetters(filter?: DeadLetterFilter) {
      requireOpen('take dead letters from');
      const taken = current().letters(filter);
      await change('take dead letters from', taken.map((letter): JournalRecord => ({ t: 'x', k: letter.key, h: letter.hook })));
      return taken;
    },
  };
}
