import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent, type ListingAgent, type Vote } from '../../../src/index.js';
import { createFileVoteLedger, voteHookBody, voteKey, type DeadLetter } from '../../../src/public/votes.js';
import { signDelivery } from '../../../src/public/webhooks.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { freePort } from '../../helpers/ports.js';
import { startReceiver } from '../../helpers/receiver.js';

/*
 * State directories written by earlier versions open to the same votes today. Under
 * test/fixtures/journals/ are two, each written by the real agent of its version running one
 * scenario (generate.mjs says how, and from which commit): 0.1.0 (journal version 1, no vote
 * reminders) and main when issue 33 began (journal version 2, the reminders riding the votes
 * journal). Each test opens a copy (opening may rewrite a journal) through the public entries and
 * expects the same outcome of both: the same pending votes with the same hooks left, the same
 * dead letter, every key known (a vote seen again is a duplicate, by either road), and the
 * reminders still to send. Only what a user sees is asserted, never a journal's lines, so the
 * test holds whatever writes the journal next.
 */

const FIXTURES = fileURLToPath(new URL('../../fixtures/journals/', import.meta.url));
const MIN = 60_000;
const HOUR = 60 * MIN;
/** When the fixtures were written; they were closed at T0 + 2 min. */
const T0 = Date.parse('2026-03-04T10:00:00.000Z');
/** When they are opened again: every key is still kept (votes.keepKeysFor, 1 h past each expiry). */
const OPENED_AT = T0 + 5 * MIN;
const PROJECT = '1300000000000000001';
const SECRET = 'whs_journal_fixture_secret';
const TOKEN = 'journal.fixture.token';
/** The reward hooks of the scenario, in their order: the agent's `vote` listener, then two http hooks. */
const HOOKS = ['vote-event', 'grant', 'announce'];

/**
 * A vote of the scenario as the hooks get it; it lives 12 h. By webhook (with the delivery's vote
 * ID and voter), unless `polled`: the cursor has neither.
 */
function scenarioVote(name: string, userId: string, createdAt: string, extra: { weight?: number; polled?: boolean } = {}): Vote {
  const vote: Vote = {
    key: voteKey(userId, createdAt),
    userId,
    platformId: `31${userId}`,
    projectId: PROJECT,
    weight: extra.weight ?? 1,
    createdAt,
    expiresAt: new Date(Date.parse(createdAt) + 12 * HOUR).toISOString(),
    road: extra.polled ? 'poll' : 'webhook',
  };
  return extra.polled ? vote : { ...vote, voteId: `vote-${name}`, user: { name: `voter ${name}`, avatarUrl: null } };
}

const A = scenarioVote('A', '200000000000000001', '2026-03-04T09:55:00.000Z');
const B = scenarioVote('B', '200000000000000002', '2026-03-04T09:56:00.000Z', { polled: true });
const C = scenarioVote('C', '200000000000000003', '2026-03-04T09:57:00.000Z');
const D = scenarioVote('D', '200000000000000004', '2026-03-04T09:58:00.000Z');
const E = scenarioVote('E', '200000000000000005', '2026-03-04T09:59:00.000Z');
const R = scenarioVote('R', '200000000000000006', '2026-03-03T22:01:00.000Z');
const A2 = scenarioVote('A2', '200000000000000001', '2026-03-04T09:59:30.000Z', { weight: 2 });
const X = scenarioVote('X', '200000000000000007', '2026-03-03T21:50:00.000Z');
const ALL = [A, B, C, D, E, R, A2, X];

/** What every fixture must open to, whichever version wrote it. */
const EXPECTED = {
  /** The votes still pending, and the hooks still to run for each. */
  pending: [
    { vote: C, hooksLeft: ['announce'] },
    { vote: E, hooksLeft: ['grant'] },
  ],
  deadLetters: [
    {
      key: D.key,
      hook: 'announce',
      vote: D,
      attempts: 1,
      error: expect.stringContaining('answered 500 Internal Server Error'),
      failedAt: '2026-03-04T10:00:00.000Z',
    },
  ],
};

/** The reminders as an operator lists them (`listing-agent votes reminders --json`): each due at its vote's expiry. */
const listed = (vote: Vote) => ({
  voteKey: vote.key,
  userId: vote.userId,
  platformId: vote.platformId,
  projectId: PROJECT,
  expiresAt: vote.expiresAt,
  dueAt: vote.expiresAt,
});

/**
 * The versions, and the reminders each fixture holds. 0.1.0 had none: its votes were recorded
 * while no reminder followed them, so none is scheduled for them (docs/votes.md). main's: every
 * vote's but A's (replaced by A2, its voter's newer vote), R's (sent before the fixture closed)
 * and X's (it arrived expired); R is the last sent.
 */
const VERSIONS = [
  { version: '0.1.0', scheduled: [] as Vote[], sentBefore: [] as Vote[] },
  { version: 'main', scheduled: [B, C, D, E, A2], sentBefore: [R] },
];

const agents: ListingAgent[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.stop({ deadlineMs: 1_000 });
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A copy of a fixture's state directory, removed after the test. */
async function copyOf(version: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `journal-fixture-${version}-`));
  dirs.push(dir);
  await cp(join(FIXTURES, version), join(dir, 'state'), { recursive: true });
  return join(dir, 'state');
}

/** The hooks left of a pending entry: those neither done nor dead-lettered, in the configured order. */
const hooksLeft = (entry: { done: readonly string[]; deadLettered?: readonly string[] }) =>
  HOOKS.filter((hook) => !entry.done.includes(hook) && !(entry.deadLettered ?? []).includes(hook));

/** `listing-agent votes <argv> --json` on the state directory (it reads the journals without the lock, beside a running agent). */
async function votesCli(directory: string, argv: string[]): Promise<string[]> {
  const config = join(directory, '..', 'config.json');
  const settings = { service: { token: TOKEN }, state: { directory }, votes: { enabled: true, reminders: { enabled: true } } };
  await writeFile(config, JSON.stringify(settings));
  const result = await runCliInProcess(['votes', ...argv, '--json', '--config', config]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result.stdout.split('\n').filter((line) => line !== '');
}

async function listedReminders(directory: string) {
  const [line] = await votesCli(directory, ['reminders']);
  const { scheduled, next, lastSent } = JSON.parse(line!) as { scheduled: number; next: unknown[]; lastSent: unknown[] };
  return { scheduled, next, lastSent };
}

/**
 * A signed `vote.create` of `vote`, as the service delivers it. Its vote ID is a Snowflake made of
 * the voter's ID: the fixtures' (`vote-A`) are older than the rule that a delivery's `data.id` is
 * one (issue 34), and the vote key does not use it.
 */
function delivery(vote: Vote, now: number) {
  const body = JSON.stringify({
    type: 'vote.create',
    data: {
      id: `1${vote.userId}`,
      weight: vote.weight,
      created_at: vote.createdAt,
      expires_at: vote.expiresAt,
      project: { id: PROJECT, type: 'bot', platform: 'discord', platform_id: '1300000000000000002' },
      user: { id: vote.userId, platform_id: vote.platformId, name: vote.user?.name, avatar_url: null },
    },
  });
  const signature = signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(now / 1000) });
  return { method: 'POST', body, headers: { 'content-type': 'application/json', ...signature } };
}

/**
 * An agent started on `directory` with the scenario's hooks (`grant` and `announce` answered 204
 * by a recording server, the `vote` listener) and reminders on, at {@link OPENED_AT} on a clock
 * the test moves; the service is down (nothing listens at its address), as the vote path allows.
 */
async function startAgentOn(directory: string) {
  const hookServer = await startReceiver(() => ({ status: 204 }));
  const service = `http://127.0.0.1:${await freePort()}`;
  const clock = { time: OPENED_AT };
  const hook = (name: string) => ({ name, url: `${hookServer.url}/${name}`, retries: 0 });
  const agent = createListingAgent({
    config: {
      service: { token: TOKEN, v1: `${service}/api/v1`, v0: `${service}/api` },
      state: { directory },
      health: { enabled: false },
      votes: { enabled: true, hooks: [hook('grant'), hook('announce')], reminders: { enabled: true } },
      webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [SECRET] },
    },
    now: () => clock.time,
    reconnectDelaysMs: [HOUR],
    transport: { retry: { maxAttempts: 1 } },
    votes: { reminderLookMs: 20 },
  });
  agent.on('error', () => undefined);
  const rewarded: Vote[] = [];
  agent.on('vote', (vote) => void rewarded.push(vote));
  const reminded: Vote[] = [];
  agent.on('reminder', (vote) => void reminded.push(vote));
  agents.push(agent);
  await agent.start();
  return { agent, hookServer, clock, rewarded, reminded };
}

describe.each(VERSIONS)('a state directory written by $version', ({ version, scheduled, sentBefore }) => {
  it('the file vote ledger opens to the same pending votes, dead letter and known keys', async () => {
    const ledger = createFileVoteLedger({ directory: await copyOf(version), now: () => OPENED_AT });
    try {
      const pending = await ledger.open();
      expect(ledger.warnings()).toEqual([]);
      const opened = pending.map((entry) => ({ vote: entry.vote, hooksLeft: hooksLeft(entry) }));
      expect(opened.sort((a, b) => a.vote.key.localeCompare(b.vote.key))).toEqual(EXPECTED.pending);
      expect(await ledger.deadLetters()).toEqual(EXPECTED.deadLetters);
      for (const vote of ALL) expect(ledger.has(vote.key), vote.key).toBe(true);
      // Seen again, each vote is a duplicate: none is recorded a second time.
      expect(await ledger.recordPending(ALL)).toEqual([]);
      expect(ledger.stats()).toMatchObject({ keys: ALL.length, pending: 2, deadLetters: 1 });
    } finally {
      await ledger.close();
    }
  });

  it('an agent started on it runs only the hooks left, takes every vote again as a duplicate, keeps the dead letter', async () => {
    const directory = await copyOf(version);
    const { agent, hookServer, rewarded } = await startAgentOn(directory);
    const pipeline = agent.votePipeline!;
    // The restart runs what was left: C's announce and E's grant, each with the vote as recorded.
    await hookServer.waitFor(2);
    await pipeline.idle();
    const calls = hookServer.requests.map((request) => [request.path, request.json]);
    expect(calls.sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ['/hook/announce', voteHookBody(C)],
      ['/hook/grant', voteHookBody(E)],
    ]);
    expect(rewarded).toEqual([]);

    // Every vote again, by the cursor and by signed deliveries: all duplicates, no hook runs.
    const again = await pipeline.ingest(ALL.map((vote) => ({ ...vote, road: 'poll' as const })), 'poll');
    expect(again).toEqual({ accepted: [], duplicates: ALL.length });
    for (const vote of ALL.filter((v) => v.road === 'webhook')) {
      const answer = await fetch(agent.webhookReceiverUrl!, delivery(vote, OPENED_AT));
      expect(answer.status, vote.key).toBe(204);
    }
    await pipeline.idle();
    expect(hookServer.requests).toHaveLength(2);
    expect(rewarded).toEqual([]);
    expect(await pipeline.failed()).toEqual(EXPECTED.deadLetters);
    const failed = await votesCli(directory, ['failed']);
    expect(failed.map((line) => JSON.parse(line) as DeadLetter)).toEqual(EXPECTED.deadLetters);
  });

  it('the reminders left are listed, soonest first, with the last sent; once due, each is sent once', async () => {
    const directory = await copyOf(version);
    const { clock, reminded } = await startAgentOn(directory);
    const reminders = await listedReminders(directory);
    expect(reminders).toEqual({ scheduled: scheduled.length, next: scheduled.map(listed), lastSent: sentBefore.map(listed) });

    clock.time = T0 + 12 * HOUR + MIN;
    await vi.waitFor(() => expect(reminded).toHaveLength(scheduled.length), { timeout: 5_000 });
    await vi.waitFor(async () => expect((await listedReminders(directory)).scheduled).toBe(0), { timeout: 5_000 });
    expect(reminded.map((vote) => vote.key).sort()).toEqual(scheduled.map((vote) => `reminder:${vote.key}`).sort());
    const { lastSent } = await listedReminders(directory);
    expect(lastSent).toHaveLength(scheduled.length + sentBefore.length);
    expect(lastSent).toEqual(expect.arrayContaining([...scheduled, ...sentBefore].map(listed)));
  });
});
