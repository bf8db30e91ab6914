// Vote reminders' scheduling cost on the built dist/: 100,000 votes in pages of 100 (as the poller
// hands them over), through the pure schedule and through the file journal (fsync per page).
// Run: node --expose-gc bench/helpers/reminders-schedule.mjs
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReminderSchedule } from '../../dist/votes/reminders/schedule.js';
import { createReminders } from '../../dist/votes/reminders/reminders.js';
import { createFileReminderJournal } from '../../dist/votes/reminders/journal-file.js';
import { silentLogger } from '../../dist/log/agent-logger.js';

export const VOTES = 100_000;
const PAGE = 100;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const gc = () => { globalThis.gc?.(); globalThis.gc?.(); };
const votes = Array.from({ length: VOTES }, (_, i) => {
  const created = T0 + i;
  return { key: `${100000000000000000n + BigInt(i)}:${created}`, userId: String(100000000000000000n + BigInt(i)), platformId: String(200000000000000000n + BigInt(i)), projectId: '123456789012345678', weight: 1, createdAt: new Date(created).toISOString(), expiresAt: new Date(created + 43_200_000).toISOString(), road: 'poll' };
});

export async function measure() {
  gc();
  const before = process.memoryUsage().heapUsed;
  const schedule = createReminderSchedule();
  const start = performance.now();
  for (let i = 0; i < VOTES; i += 1) schedule.add(votes[i], T0);
  const pureUs = ((performance.now() - start) * 1000) / VOTES;
  gc();
  const heap = process.memoryUsage().heapUsed - before;
  const dir = await mkdtemp(join(tmpdir(), 'reminders-bench-'));
  const journal = createFileReminderJournal(dir);
  const reminders = createReminders({ journal, send: async () => undefined, logger: silentLogger, now: () => T0, schedule: () => () => undefined });
  await reminders.start();
  const t = performance.now();
  for (let i = 0; i < VOTES; i += PAGE) await reminders.schedule(votes.slice(i, i + PAGE));
  const journalUs = ((performance.now() - t) * 1000) / VOTES;
  await reminders.stop();
  const { size } = await import('node:fs/promises').then((fs) => fs.stat(join(dir, 'reminders.journal')));
  await rm(dir, { recursive: true, force: true });
  return { pureUs, heapBytes: heap, heapPerVote: heap / VOTES, size: schedule.size, journalUs, journalBytesPerVote: size / VOTES };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await measure());
