import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createListingClient } from '../../../src/public/client.js';
import { createMemoryStore } from '../../../src/public/runtime.js';
import { createVotePoller, voteKey, type Vote } from '../../../src/public/votes.js';
import { createWebhookReceiver, signDelivery } from '../../../src/public/webhooks.js';

/*
 * One vote, two roads (decisions.md): a vote the votes cursor lists and the same vote a signed
 * `vote.create` delivers get the same key, so the reward hooks see it once. Each road is taken
 * from its most public entry: a votes page served over HTTP to the service client, read by
 * `createVotePoller`; a signed delivery POSTed to `createWebhookReceiver`. Both hand their votes
 * to a sink that only records them. The instants are arbitrary within what both roads take (a
 * year back to 5 minutes ahead of the clock: VOTE_FIELD_LIMITS), and each road gets its own
 * spelling of the same instant: with or without fractional seconds (or seconds), `Z`, `+00:00`
 * or another offset, as an ISO 8601 timestamp may be written. Outside that window, or with an ID
 * that is not a Snowflake, both roads refuse the vote alike.
 */

const SECRET = 'whs_vote_key_roads_secret';
const PROJECT_ID = '1300000000000000001';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The clock of both roads (the client's, the poller's, the receiver's): a delivery is signed at this instant. */
const NOW = Date.parse('2026-03-04T10:00:00.000Z');
/** The earliest and the latest `created_at` both roads take at {@link NOW}: a year back, 5 minutes ahead. */
const EARLIEST = NOW - 365 * DAY;
const LATEST = NOW + 5 * 60_000;

/** One vote as the generator makes it: its voter, instant, weight, and how each road spells the instant. */
interface Case {
  userId: string;
  ms: number;
  weight: number;
  cursorText: string;
  webhookText: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * `ms` written as an ISO 8601 timestamp at `offsetMinutes` from UTC, with `fraction` digits of
 * seconds (0: none; -1: no seconds either), the offset as `Z` or `±hh:mm` (`zulu`: `Z` for 0).
 */
function spell(ms: number, offsetMinutes: number, fraction: number, zulu: boolean): string {
  const local = new Date(ms + offsetMinutes * 60_000);
  const date = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`;
  let time = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}`;
  if (fraction >= 0) time += `:${pad(local.getUTCSeconds())}`;
  if (fraction > 0) time += `.${pad(local.getUTCMilliseconds(), 3).padEnd(fraction, '0').slice(0, fraction)}`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const [hours, minutes] = [Math.floor(Math.abs(offsetMinutes) / 60), Math.abs(offsetMinutes) % 60];
  const offset = offsetMinutes === 0 && zulu ? 'Z' : `${sign}${pad(hours)}:${pad(minutes)}`;
  return `${date}T${time}${offset}`;
}

/**
 * Fraction widths that spell `ms` exactly: 3, 6 or 9 digits always, 1 or 2 when the rest are 0,
 * none on a whole second, no seconds either on a whole minute.
 */
function exactFractions(ms: number): number[] {
  const sub = ((ms % 1000) + 1000) % 1000;
  const widths = [3, 6, 9];
  if (sub % 10 === 0) widths.push(2);
  if (sub % 100 === 0) widths.push(1);
  if (sub === 0) widths.push(0);
  if (ms % 60_000 === 0) widths.push(-1);
  return widths;
}

/** A spelling of `ms`: the service's own (`toISOString`), or another offset and precision. */
const spelling = (ms: number) =>
  fc.oneof(
    fc.constant(new Date(ms).toISOString()),
    fc
      .record({
        offset: fc.oneof(
          fc.constant(0),
          fc.integer({ min: -14 * 60, max: 14 * 60 }),
          fc.constantFrom(-12 * 60, -5 * 60 - 30, 60, 5 * 60 + 45, 14 * 60),
        ),
        fraction: fc.constantFrom(...exactFractions(ms)),
        zulu: fc.boolean(),
      })
      .map(({ offset, fraction, zulu }) => spell(ms, offset, fraction, zulu)),
  );

/** Instants both roads take, from a year back to 5 minutes ahead of {@link NOW}, often whole seconds or minutes, often the last day. */
const instant = fc.oneof(
  fc.integer({ min: EARLIEST, max: LATEST }),
  fc.integer({ min: NOW - DAY, max: NOW }),
  fc.integer({ min: Math.ceil(EARLIEST / 1000), max: Math.floor(LATEST / 1000) }).map((s) => s * 1000),
  fc.integer({ min: Math.ceil(EARLIEST / 60_000), max: Math.floor(LATEST / 60_000) }).map((m) => m * 60_000),
);

/** Service user IDs: Snowflakes, canonical decimals of 17 to 20 digits (up to 2^64 - 1). */
const userId = fc.bigInt({ min: 10n ** 16n, max: 2n ** 64n - 1n }).map(String);

/** The voter's platform ID: another ID of the same length as theirs. */
const platformOf = (userId: string) => `3${userId.slice(1)}`;

const oneCase: fc.Arbitrary<Case> = fc
  .tuple(userId, instant, fc.constantFrom(1, 2))
  .chain(([id, ms, weight]) =>
    fc.tuple(spelling(ms), spelling(ms)).map(([cursorText, webhookText]) => ({ userId: id, ms, weight, cursorText, webhookText })),
  );

/** Up to 6 votes, of distinct voters (a page of the cursor lists each vote once). */
const cases = fc.uniqueArray(oneCase, { minLength: 1, maxLength: 6, selector: (c) => c.userId });

/** The records of the votes page the fake service serves next. */
let page: Record<string, unknown>[] = [];
let service: Server;
let serviceUrl: string;
/** What each road handed on, for the case being checked. */
const polled: Vote[] = [];
const delivered: Vote[] = [];
/** A sink that records what a road hands on and takes every vote as new. */
const recordingInto = (into: Vote[]) => ({
  ingest: async (votes: readonly Vote[]) => {
    into.push(...votes);
    return { accepted: [...votes], duplicates: 0 };
  },
});
const receiver = createWebhookReceiver({
  listen: { host: '127.0.0.1', port: 0 },
  secrets: [SECRET],
  now: () => NOW,
  pipeline: recordingInto(delivered),
});
let receiverUrl: string;

beforeAll(async () => {
  // GET /api/v1/projects/:id/votes: the page (from a startDate), then an empty one (from its cursor).
  service = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://service');
    const first = url.searchParams.has('startDate');
    const data = first ? page : [];
    res.writeHead(url.pathname === `/api/v1/projects/${PROJECT_ID}/votes` ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ cursor: first ? 'after-the-page' : 'after-the-end', data }));
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}/api/v1`;
  receiverUrl = await receiver.start();
});

afterAll(async () => {
  await receiver.stop();
  await new Promise((resolve) => service.close(resolve));
});

/** The votes of `list` as the votes cursor brings them: one poll of a fresh poller (and how many it refused). */
async function byCursor(list: readonly Case[]): Promise<Vote[] & { refused?: number }> {
  page = list.map((c) => ({
    user_id: c.userId,
    platform_id: platformOf(c.userId),
    weight: c.weight,
    created_at: c.cursorText,
    expires_at: new Date(c.ms + 12 * HOUR).toISOString(),
  }));
  polled.length = 0;
  const clock = { now: () => NOW, sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };
  const client = createListingClient({ applicationToken: 'vote-key-roads', v1BaseUrl: serviceUrl, retry: { maxAttempts: 1 }, clock });
  try {
    const poller = createVotePoller({
      client,
      projectIds: async () => [PROJECT_ID],
      store: createMemoryStore(),
      pipeline: recordingInto(polled),
      now: () => NOW,
    });
    const result = await poller.poll();
    expect(result.failures).toEqual([]);
    return Object.assign([...polled], { refused: result.refused });
  } finally {
    await client.close();
  }
}

/** The votes of `list` as signed `vote.create` deliveries bring them, each answered `status` (default 204). */
async function byWebhook(list: readonly Case[], status = 204): Promise<Vote[]> {
  delivered.length = 0;
  for (const [i, c] of list.entries()) {
    const rawBody = JSON.stringify({
      type: 'vote.create',
      data: {
        id: String(1_300_000_000_000_000_100n + BigInt(i)),
        weight: c.weight,
        created_at: c.webhookText,
        expires_at: new Date(c.ms + 12 * HOUR).toISOString(),
        project: { id: PROJECT_ID, type: 'bot', platform: 'discord', platform_id: '1300000000000000002' },
        user: { id: c.userId, platform_id: platformOf(c.userId), name: 'voter', avatar_url: null },
      },
    });
    const headers = { 'content-type': 'application/json', ...signDelivery({ secret: SECRET, rawBody, timestampSeconds: NOW / 1000 }) };
    const answer = await fetch(receiverUrl, { method: 'POST', body: rawBody, headers });
    expect(answer.status, `${c.webhookText} by webhook`).toBe(status);
  }
  return [...delivered];
}

describe('one vote, two roads: the votes cursor and a signed delivery give it the same key', () => {
  it('for arbitrary Snowflakes and instants of the last year, however each road spells the instant', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(cases, async (list) => {
        const cursor = await byCursor(list);
        const webhook = await byWebhook(list);
        expect(cursor).toHaveLength(list.length);
        expect(webhook).toHaveLength(list.length);
        for (const [i, c] of list.entries()) {
          const [fromCursor, fromWebhook] = [cursor[i]!, webhook[i]!];
          expect(fromWebhook.key, `${c.cursorText} by the cursor, ${c.webhookText} by webhook`).toBe(fromCursor.key);
          // The key the contract names: `<user_id>:<created_at as epoch ms>`, whichever spelling came.
          expect(fromCursor.key).toBe(voteKey(c.userId, c.ms));
          expect(fromCursor.key).toBe(`${c.userId}:${c.ms}`);
          expect([fromCursor.road, fromWebhook.road]).toEqual(['poll', 'webhook']);
          for (const vote of [fromCursor, fromWebhook]) {
            expect(Date.parse(vote.createdAt)).toBe(c.ms);
            expect(vote).toMatchObject({ userId: c.userId, projectId: PROJECT_ID, weight: c.weight, platformId: platformOf(c.userId) });
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('also for the spellings at the edges: the ends of the window, the widest offsets', async () => {
    const edge = (ms: number, [cursorText, webhookText]: [string, string]) => ({ ms, weight: 1, cursorText, webhookText });
    const list = [
      edge(EARLIEST, ['2025-03-04T10:00:00.000Z', '2025-03-04T05:00-05:00']),
      edge(LATEST, ['2026-03-05T00:05:00.000+14:00', '2026-03-04T10:05:00.000000+00:00']),
      edge(Date.parse('2026-03-04T09:58:00.000Z'), ['2026-03-04T09:58:00Z', '2026-03-03T20:58:00.000-13:00']),
      edge(Date.parse('2026-03-04T09:58:00.120Z'), ['2026-03-04T09:58:00.12Z', '2026-03-04T15:28:00.120000000+05:30']),
    ].map((c, i) => ({ ...c, userId: `20000000000000000${i}` }));
    const cursor = await byCursor(list);
    const webhook = await byWebhook(list);
    expect(cursor.map((vote) => vote.key)).toEqual(list.map((c) => `${c.userId}:${c.ms}`));
    expect(webhook.map((vote) => vote.key)).toEqual(cursor.map((vote) => vote.key));
  });

  it('refuses alike on both roads a vote just outside the window, or whose user ID is not a Snowflake', async () => {
    const refused = [
      { userId: '200000000000000010', ms: EARLIEST - 1 },
      { userId: '200000000000000011', ms: LATEST + 1 },
      { userId: '2000000000000001', ms: NOW },
      { userId: '200000000000000012\n', ms: NOW },
      { userId: 'reminder', ms: NOW },
    ].map((c) => ({ ...c, weight: 1, cursorText: new Date(c.ms).toISOString(), webhookText: new Date(c.ms).toISOString() }));
    const cursor = await byCursor(refused);
    expect([...cursor]).toEqual([]);
    expect(cursor.refused).toBe(refused.length);
    expect(await byWebhook(refused, 400)).toEqual([]);
  });
});
