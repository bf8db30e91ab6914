import { expect, it } from 'vitest';
import { createMemoryVoteLedger } from '../../../src/votes/ledger-memory.js';
import { describeLedgerContract } from './ledger-contract.js';
import { makeVote } from './votes-fixtures.js';

describeLedgerContract('memory', async ({ keepKeysForMs }) => {
  const ledger = createMemoryVoteLedger({ keepKeysForMs });
  return {
    ledger,
    async reopen() {
      await ledger.close();
      return ledger;
    },
  };
});

it('memory ledger: says that nothing survives a restart, and reports no bytes', async () => {
  const ledger = createMemoryVoteLedger();
  await ledger.open();
  await ledger.recordPending([makeVote(1)]);
  expect(ledger.describe()).toMatch(/nothing survives/);
  expect(ledger.stats()).toEqual({ keys: 1, pending: 1, deadLetters: 0, bytes: 0 });
});
