// Vote reminders' schedule alone, on the built dist/: 100,000 votes of distinct voters scheduled in
// pages of 100 (as the poller hands them over), into the lean table (µs per vote, and the V8 heap
// plus typed arrays it holds), and through the store that rides a file vote ledger when no rewards
// ledger hosts it (`schedule()` a commit of its own per page: the fallback path, for reference).
// The agent's default path (the schedule riding the rewards' ledger, nothing written per vote) is
// measured in bench/votes.bench.ts, against the same ingestion with reminders off.
// Run: node --expose-gc bench/helpers/reminders-schedule.mjs
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReminderTable } from '../../dist/votes/reminders/table.js';
import { createLedgerReminderStore } from '../../dist/votes/reminders/journal-ledger.js';
import { createReminders } from '../../dist/votes/reminders/reminders.js';
import { createFileVoteLedger } from '../../dist/votes/ledger-file.js';
import { silentLogger } from '../../dist/log/agent-logger.js';

export const VOTES = 100_000;
const PAGE = 100;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const settle = async () => {
  for (let i = 0; i < 4; i++) {
    globalThis.gc?.();
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
const held = () => {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};
const votes = Array.from({ length: VOTES }, (_, i) => {
  const created = T0 + i;
  const userId = String(100000000000000000n + BigInt(i));
  return { key: `${userId}:${created}`, userId, platformId: String(200000000000000000n + BigInt(i)), projectId: '123456789012345678', weight: 1, createdAt: new Date(created).toISOString(), expiresAt: new Date(created + 43_200_000).toISOString(), road: 'poll' };
});

export async function measure() {
  let tableUs = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const table = new ReminderTable();
    const started = performance.now();
    for (let i = 0; i < VOTES; i += 1) table.add(votes[i], T0);
    tableUs = Math.min(tableUs, ((performance.now() - started) * 1000) / VOTES);
  }
  await settle();
  const before = held();
  const table = new ReminderTable();
  for (let i = 0; i < VOTES; i += 1) table.add(votes[i], T0);
  await settle();
  const heldBytes = held() - before;

  const dir = await mkdtemp(join(tmpdir(), 'reminders-bench-'));
  const store = createLedgerReminderStore({ now: () => T0, derive: false });
  const ledger = createFileVoteLedger({ directory: dir, now: () => T0, companion: store });
  await ledger.open();
  const reminders = createReminders({ store, send: async () => undefined, logger: silentLogger, now: () => T0, schedule: () => () => undefined });
  await reminders.start();
  const t = performance.now();
  for (let i = 0; i < VOTES; i += PAGE) await reminders.schedule(votes.slice(i, i + PAGE));
  const journalUs = ((performance.now() - t) * 1000) / VOTES;
  await reminders.stop();
  await ledger.close();
  const { size } = await stat(ledger.path);
  await rm(dir, { recursive: true, force: true });
  return { tableUs, heldBytes, heldPerVote: heldBytes / VOTES, arrayBytesPerVote: table.arrayBytes() / VOTES, size: table.size, journalUs, journalBytesPerVote: size / VOTES };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await measure());
