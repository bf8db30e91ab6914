import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readFileReminders } from '../../../src/votes/reminders/read.js';
import { startTsChild } from '../../helpers/ts-child.js';
import { voteAt } from '../../helpers/votes.js';

/*
 * Reminders on the agent's default store, across a SIGKILL and two restarts, with real processes
 * (test/helpers/reminders-process.ts: the votes capability on the file store; the schedule in
 * `reminders.journal`, written before each batch of votes is acknowledged). Votes acknowledged
 * before the kill have their reminders at the next start, by the rules they were scheduled with:
 * superseded by a newer vote of the same voter, none for a vote that arrived expired, late ones
 * skipped (counted once), and none fired twice across the restarts. A kill in the middle of a
 * stream of deliveries leaves every vote acknowledged before it with its reminder.
 */

const HOUR = 3_600_000;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const vote = (userId: string, createdMs: number, platformId: string | null = `9${userId.length}0123456789012345`) =>
  voteAt(userId, createdMs, { platformId, projectId: '803190510032756736', road: 'webhook' });

async function run(directory: string, events: string, clock: number, mode: 'ingest' | 'fire', votesFile?: string) {
  const child = startTsChild('reminders-process.ts', [directory, events, String(clock), mode, ...(votesFile ? [votesFile] : [])]);
  await child.waitForLine(mode === 'ingest' ? /^ingested$/ : /^stopped$/, 20_000);
  return child;
}

const eventLines = async (path: string) => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean);

describe('vote reminders on the file vote ledger, across a kill and restarts (real processes)', () => {
  it('schedules from the votes acknowledged before the kill; fires each once, by the rules', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'reminders-kill-'));
    dirs.push(directory);
    const events = join(directory, 'events.log');
    const u = {
      early: '300000000000000001', // due T0 + 0.5 h: 11.25 h late at the restart, skipped
      expired: '300000000000000002', // arrived expired: never
      mid: '300000000000000003', // due T0 + 10 h: 1.75 h late, skipped
      twice: '300000000000000004', // superseded by its own newer vote, due T0 + 11 h: sent
      text: 'voter-five', // an ID kept as text, no platform ID, due T0 + 11.5 h: sent
      later: '300000000000000006', // due T0 + 12 h: after the first restart
    };
    const batches = [
      [vote(u.early, T0 - 11.5 * HOUR), vote(u.expired, T0 - 13 * HOUR), vote(u.mid, T0 - 2 * HOUR), vote(u.twice, T0 - 11 * HOUR)],
      [vote(u.twice, T0 - HOUR), vote(u.text, T0 - 0.5 * HOUR, null), vote(u.later, T0)],
    ];
    const votesFile = join(directory, 'votes.json');
    await writeFile(votesFile, JSON.stringify(batches));

    const first = await run(directory, events, T0, 'ingest', votesFile);
    expect(first.lines).toContain('acked 2');
    await first.kill(); // no graceful stop: only what the ledger made durable survives

    // Read beside (no lock), as `listing-agent votes reminders` does: the five scheduled.
    const reading = await readFileReminders(directory, 0);
    expect(reading).toMatchObject({ exists: true, path: join(directory, 'reminders.journal'), size: 5 });
    expect(reading.next.map((r) => r.userId)).toEqual([u.early, u.mid, u.twice, u.text, u.later]);
    expect(reading.next.find((r) => r.userId === u.twice)?.voteKey).toBe(`${u.twice}:${T0 - HOUR}`);
    expect(reading.next.find((r) => r.userId === u.text)?.platformId).toBeNull();

    await run(directory, events, T0 + 11.75 * HOUR, 'fire');
    expect((await eventLines(events)).sort()).toEqual([`reminded reminder:${u.twice}:${T0 - HOUR}`, `reminded reminder:${u.text}:${T0 - 0.5 * HOUR}`, 'skipped 2']);

    await run(directory, events, T0 + 12.5 * HOUR, 'fire');
    const all = await eventLines(events);
    expect(all.slice(3)).toEqual([`reminded reminder:${u.later}:${T0}`]);
    expect((await readFileReminders(directory, 0)).size).toBe(0);
  }, 60_000);

  it('a kill in the middle of a stream of deliveries: every vote acknowledged before it has its reminder', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'reminders-kill-'));
    dirs.push(directory);
    const child = startTsChild('reminders-process.ts', [directory, join(directory, 'events.log'), String(T0), 'stream', '100000']);
    // Killed while deliveries are in flight: some votes recorded and not yet scheduled, or the reverse.
    await child.waitForLine(/^acked 400000000000000300$/, 30_000);
    await child.kill();
    const acked = child.lines.filter((line) => line.startsWith('acked ')).map((line) => line.slice(6));
    expect(acked.length).toBeGreaterThanOrEqual(300);
    const reading = await readFileReminders(directory, 0, 100_000);
    const scheduled = new Set(reading.next.map((info) => info.userId));
    expect(acked.filter((userId) => !scheduled.has(userId))).toEqual([]);
    expect(reading.size).toBeGreaterThanOrEqual(acked.length);
  }, 60_000);
});
