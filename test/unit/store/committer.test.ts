import { describe, expect, it } from 'vitest';
import { createCommitter } from '../../../src/store/committer.js';

/** A write the test finishes by hand: each call is one write, with the changes counted at its start. */
function manualWrites() {
  const writes: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  const write = () =>
    new Promise<void>((resolve, reject) => {
      writes.push({ resolve, reject });
    });
  return { writes, write };
}

/** Lets the committer's turn end (it starts a write in the check phase) and the microtasks run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('committer (group commit)', () => {
  it('gives the callers of one write one promise, and resolves it once that write succeeded', async () => {
    const { writes, write } = manualWrites();
    const committer = createCommitter(write);
    const first = committer.commit(committer.change());
    const second = committer.commit(committer.change());
    expect(second).toBe(first);
    await turn();
    expect(writes).toHaveLength(1);
    let done = false;
    void first.then(() => (done = true));
    await turn();
    expect(done).toBe(false);
    writes[0]!.resolve();
    await first;
    expect(committer.pending).toBe(false);
    expect(committer.stats()).toMatchObject({ writes: 1, failedWrites: 0 });
    // Nothing new to write: resolved at once, no write.
    await committer.commit();
    expect(writes).toHaveLength(1);
  });

  it('a change made during a write waits for the next write; a caller with nothing new shares the one under way', async () => {
    const { writes, write } = manualWrites();
    const committer = createCommitter(write);
    const first = committer.commit(committer.change());
    await turn();
    // The write has started (and taken change 1): a caller with no change of its own is covered by it.
    const covered = committer.commit();
    expect(covered).toBe(first);
    const later = committer.commit(committer.change());
    expect(later).not.toBe(first);
    let laterDone = false;
    void later.then(() => (laterDone = true));
    writes[0]!.resolve();
    await first;
    await turn();
    expect(laterDone).toBe(false);
    expect(writes).toHaveLength(2);
    writes[1]!.resolve();
    await later;
    expect(committer.stats().writes).toBe(2);
  });

  it('a failed write rejects its callers only; those that came during it get a fresh attempt, which a later caller shares', async () => {
    const { writes, write } = manualWrites();
    const committer = createCommitter(write);
    const first = committer.commit(committer.change());
    await turn();
    const during = committer.commit(committer.change());
    const failure = new Error('ENOSPC: no space left on device');
    writes[0]!.reject(failure);
    await expect(first).rejects.toBe(failure);
    expect(committer.stats()).toMatchObject({ writes: 0, failedWrites: 1, lastError: failure });
    expect(committer.pending).toBe(true);
    await turn();
    expect(writes).toHaveLength(2);
    writes[1]!.resolve();
    await expect(during).resolves.toBeUndefined();
    expect(committer.pending).toBe(false);
    expect(committer.stats().lastError).toBeUndefined();
  });

  it('a rejected group nobody listens to is not an unhandled rejection', async () => {
    const { writes, write } = manualWrites();
    const committer = createCommitter(write);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      void committer.commit(committer.change()).catch(() => undefined);
      await turn();
      // A caller covered by the failing write, that never handles the outcome.
      committer.commit();
      writes[0]!.reject(new Error('EIO'));
      await turn();
      await turn();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
