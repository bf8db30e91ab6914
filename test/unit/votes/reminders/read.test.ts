import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JOURNAL_HEADER, pendingLine, recordLine } from '../../../../src/votes/ledger-records.js';
import { lastSentInLedger } from '../../../../src/votes/reminders/read.js';
import type { Vote } from '../../../../src/votes/types.js';

/*
 * The last reminders sent, read from the end of the reminder ledger's journal: what a restarted
 * agent's status page and `listing-agent votes reminders` list.
 */

const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const HOUR = 3_600_000;
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const reminder = (i: number): Vote => ({
  key: `reminder:u${i}:${T0 + i}`,
  userId: `u${i}`,
  platformId: null,
  projectId: '8',
  weight: 1,
  createdAt: new Date(T0 + i).toISOString(),
  expiresAt: new Date(T0 + i + 12 * HOUR).toISOString(),
  road: 'webhook',
});

/** A journal of `count` reminders, each recorded, its hook done and completed, with `between` after each record. */
async function ledgerDirectory(count: number, between: (i: number, vote: Vote) => string = () => ''): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'reminders-read-'));
  dirs.push(directory);
  let text = recordLine(JOURNAL_HEADER);
  for (let i = 0; i < count; i += 1) {
    const vote = reminder(i);
    text += pendingLine(vote) + between(i, vote) + recordLine({ t: 'h', k: vote.key, h: 'dm' }) + recordLine({ t: 'c', k: vote.key });
  }
  await mkdir(join(directory, 'reminders'));
  // A torn last record (a crash mid-append) is no reminder.
  await writeFile(join(directory, 'reminders', 'votes.journal'), `${text}["p","reminder:torn`);
  return directory;
}

describe('the last reminders sent, from the end of the reminder ledger', () => {
  it('lists the newest first, from a journal much longer than the part it reads', async () => {
    const directory = await ledgerDirectory(3_000);
    const sent = await lastSentInLedger(directory, 5 * 60_000);
    expect(sent.map((info) => info.userId)).toEqual(Array.from({ length: 10 }, (_, i) => `u${2_999 - i}`));
    expect(sent[0]).toEqual({
      voteKey: `u2999:${T0 + 2_999}`,
      userId: 'u2999',
      platformId: null,
      projectId: '8',
      expiresAt: new Date(T0 + 2_999 + 12 * HOUR).toISOString(),
      dueAt: new Date(T0 + 2_999 + 12 * HOUR + 5 * 60_000).toISOString(),
    });
  });

  it('reads further back when the end holds fewer than asked (long dead letters between them)', async () => {
    const letter = (vote: Vote) => recordLine({ t: 'd', l: { key: vote.key, hook: 'dm', vote, attempts: 3, error: 'x'.repeat(20_000), failedAt: new Date(T0).toISOString() } });
    const directory = await ledgerDirectory(40, (_, vote) => letter(vote));
    expect((await lastSentInLedger(directory, 0, 10)).map((info) => info.userId)).toEqual(Array.from({ length: 10 }, (_, i) => `u${39 - i}`));
    expect(await lastSentInLedger(directory, 0, 100)).toHaveLength(40);
  });

  it('is empty without a journal', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'reminders-read-'));
    dirs.push(directory);
    expect(await lastSentInLedger(directory, 0)).toEqual([]);
  });
});
