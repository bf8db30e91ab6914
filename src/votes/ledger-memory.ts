import { StoreError } from '../store/errors.js';
import { createLedgerOperations } from './ledger-ops.js';
import { createLedgerState } from './ledger-state.js';
import type { VoteLedger } from './types.js';

/** Options of {@link createMemoryVoteLedger}. */
export interface MemoryVoteLedgerOptions {
  /** How long a finished vote's key is kept past its `expiresAt`. Default 3 600 000 (1 h, the config's `votes.keepKeysFor`). */
  keepKeysForMs?: number;
}

/**
 * A {@link VoteLedger} in memory only (tests, and embedded users who keep no state): nothing
 * survives the process, so after a restart a vote may fire its hooks again. It behaves like the
 * file ledger where callers can tell: votes are copied in and out, changes after `close()` are
 * refused until `open()` again, and `open()` after `close()` returns what is still pending.
 */
export function createMemoryVoteLedger(options: MemoryVoteLedgerOptions = {}): VoteLedger {
  const state = createLedgerState(options.keepKeysForMs ?? 3_600_000);
  let isOpen = false;
  const requireOpen = (action: string) => {
    if (!isOpen) throw new StoreError(`cannot ${action} the memory vote ledger: it is not open (call open() first)`, 'memory');
  };
  const operations = createLedgerOperations(() => state, async () => undefined, requireOpen);

  return {
    ...operations,
    async open() {
      isOpen = true;
      return state.pending();
    },
    has: (key) => state.has(key),
    deadLetters: async () => state.letters(),
    async compact(now) {
      requireOpen('compact');
      state.forget(now);
    },
    stats: () => ({ ...state.counts(), bytes: 0 }),
    async close() {
      isOpen = false;
    },
    describe: () => 'memory (nothing survives a restart: votes may fire again after one)',
  };
}
