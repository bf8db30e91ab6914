import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent } from '../../../src/agent/agent.js';
import type { AgentLogger } from '../../../src/log/agent-logger.js';
import { createReadiness } from '../../../src/runtime/readiness.js';
import type { ListingClient } from '../../../src/api/client.js';
import { createManualScheduler } from '../../helpers/manual-scheduler.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { cursorStateKey, type CursorState } from '../../../src/votes/cursor-state.js';
import { createHasVoted } from '../../../src/votes/has-voted.js';
import { createMemoryVoteLedger } from '../../../src/votes/ledger-memory.js';
import { createVotePipeline, type VotePipeline } from '../../../src/votes/pipeline.js';
import { createVotePoller, type VoteIngest } from '../../../src/votes/poller.js';
import { voteKey, type Vote, type VoteHook } from '../../../src/votes/types.js';
import { clientFor, createFakeClock, type FakeClock } from '../../helpers/client.js';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

function recordingLogger(lines: LogLine[]): AgentLogger {
  const at = (level: string) => (obj: object | string, msg?: string) =>
    void lines.push(typeof obj === 'string' ? { level, fields: {}, msg: obj } : { level, fields: obj as Record<string, unknown>, msg: msg ?? '' });
  const logger: AgentLogger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: () => logger };
  return logger;
}

const pipelines: { pipeline: VotePipeline; clock: FakeClock }[] = [];
afterEach(async () => {
  await Promise.all(pipelines.splice(0).map(({ pipeline, clock }) => pipeline.stop(clock.now())));
});

/** A pipeline over a memory ledger with one hook that records every call. */
async function recordingPipeline(clock: FakeClock) {
  const fired: Vote[] = [];
  const hook: VoteHook = { name: 'record', retries: 0, run: async (vote) => void fired.push(vote) };
  const pipeline = createVotePipeline({ ledger: createMemoryVoteLedger(), hooks: [hook], logger: recordingLogger([]), now: clock.now });
  await pipeline.start();
  pipelines.push({ pipeline, clock });
  return { pipeline, fired };
}

/** An emulator on a fake clock, a bot with voters, a pipeline, a store and a poller on manual schedules. */
async function setup(options: { settings?: { cursorTtlSeconds?: number; votesPageSize?: number }; lookbackMs?: number } = {}) {
  const clock = createFakeClock();
  const emu = await startTestEmulator({ now: () => clock.now(), ...(options.settings ? { settings: options.settings } : {}) });
  const fx = setupBot(emu);
  const voters = Array.from({ length: 10 }, (_, i) => emu.admin.createUser({ username: `voter${i}` }));
  const store = createMemoryStore();
  await store.open();
  const { pipeline, fired } = await recordingPipeline(clock);
  const readiness = createReadiness(clock.now);
  const logs: LogLine[] = [];
  const schedules = createManualScheduler(clock.now);
  const makePoller = (client: ListingClient, ingest: VoteIngest = pipeline, projectIds?: () => Promise<string[]>) =>
    createVotePoller({
      client,
      store,
      pipeline: ingest,
      lookbackMs: options.lookbackMs ?? 12 * HOUR,
      pollIntervalMs: MINUTE,
      logger: recordingLogger(logs),
      readiness,
      now: clock.now,
      schedules: schedules.factory,
      ...(projectIds ? { projectIds } : {}),
    });
  const client = clientFor(emu, { projectToken: fx.projectToken, clock });
  const poller = makePoller(client);
  /** Casts a vote by voter `i` `agoMs` before now (default: now) on `projectId` (default the bot). */
  const cast = (i: number, agoMs = 0, projectId = fx.projectId) =>
    emu.admin.castVote({ project_id: projectId, user_id: voters[i % voters.length]!.id, created_at: iso(clock.now() - agoMs) });
  const state = async (projectId = fx.projectId) => store.get<CursorState>(cursorStateKey(projectId));
  const firedKeys = () => fired.map((vote) => vote.key);
  return { clock, emu, fx, voters, store, pipeline, fired, firedKeys, readiness, logs, schedules, client, poller, makePoller, cast, state };
}

function voteRequests(emu: TestEmulator) {
  return emu.admin.requests().filter((r) => r.method === 'GET' && /\/votes$/.test(r.path));
}

const keyOf = (vote: { user_id: string; created_at: string }) => voteKey(vote.user_id, vote.created_at);

describe('the votes poller', () => {
  it('bootstraps from the start minus the lookback: an older vote is not fired, the checkpoint names the newest vote', async () => {
    const t = await setup();
    const old = t.cast(0, 13 * HOUR);
    const inside = [t.cast(1, 11 * HOUR), t.cast(2, 1 * HOUR)];
    const result = await t.poller.poll();
    await t.pipeline.idle();

    expect(result.failures).toEqual([]);
    expect(result.projects).toEqual([t.fx.projectId]);
    expect(result.accepted).toBe(2);
    expect(t.firedKeys()).toEqual(inside.map(keyOf));
    expect(t.firedKeys()).not.toContain(keyOf(old));
    expect(t.fired[0]).toMatchObject({ road: 'poll', projectId: t.fx.projectId, userId: inside[0]!.user_id, platformId: inside[0]!.platform_id, weight: inside[0]!.weight });
    const requests = voteRequests(t.emu);
    expect(requests[0]!.path).toBe('/api/v1/projects/@me/votes');
    expect(requests[0]!.query).toBe(`?startDate=${encodeURIComponent(iso(t.clock.now() - 12 * HOUR))}`);
    expect(requests.slice(1).every((r) => r.query.startsWith('?cursor='))).toBe(true);
    const saved = await t.state();
    expect(saved).toMatchObject({ newestCreatedAt: inside[1]!.created_at, newestKey: keyOf(inside[1]!) });
    expect(saved!.cursor).toEqual(expect.any(String));
    expect(t.readiness.snapshot().components.votes).toMatchObject({ ready: true, detail: 'polling 1 project every 1m' });
  });

  it('clamps a lookback longer than the contract allows to just inside one year', async () => {
    const t = await setup({ lookbackMs: 400 * 24 * HOUR });
    t.cast(0, 364 * 24 * HOUR);
    const result = await t.poller.poll();
    expect(result.failures).toEqual([]);
    expect(result.accepted).toBe(1);
    const startDate = Date.parse(decodeURIComponent(voteRequests(t.emu)[0]!.query.slice('?startDate='.length)));
    expect(t.clock.now() - startDate).toBe(365 * 24 * HOUR - HOUR);
  });

  it('pages through 250 votes back to back (100/100/50/empty), each fired once, and resumes with the stored cursor', async () => {
    const t = await setup();
    const cast = Array.from({ length: 250 }, (_, i) => t.cast(i, 10 * HOUR - i * SECOND));
    const first = await t.poller.poll();
    await t.pipeline.idle();
    expect(first).toMatchObject({ pages: 4, accepted: 250, duplicates: 0, failures: [] });
    expect(t.firedKeys()).toEqual(cast.map(keyOf));
    expect(voteRequests(t.emu)).toHaveLength(4);
    const stored = (await t.state())!;
    expect(stored.newestKey).toBe(keyOf(cast.at(-1)!));

    // The next poll, from the schedule: one request, with exactly the stored cursor; only the new vote fires.
    t.clock.advance(MINUTE);
    const late = t.cast(3);
    t.poller.start();
    await t.schedules.get('votes-poll')!.tick();
    await t.pipeline.idle();
    const requests = voteRequests(t.emu).slice(4);
    expect(requests[0]!.query).toBe(`?cursor=${encodeURIComponent(stored.cursor!)}`);
    expect(t.firedKeys().slice(250)).toEqual([keyOf(late)]);
    expect((await t.state())!.newestKey).toBe(keyOf(late));
    await t.poller.stop(t.clock.now());
  });

  it('falls back to the newest vote already seen when the cursor expired: no gap, no second fire, logged once', async () => {
    const t = await setup({ settings: { cursorTtlSeconds: 60 } });
    const before = [t.cast(0, 2 * HOUR), t.cast(1, HOUR), t.cast(2, 30 * MINUTE)];
    await t.poller.poll();
    await t.pipeline.idle();
    const newest = before[2]!;

    // The stored cursor outlives its 60 s; meanwhile votes arrive, one in the same millisecond as the newest seen.
    t.clock.advance(5 * MINUTE);
    const after = [t.cast(4, 35 * MINUTE), t.cast(5, 2 * MINUTE), t.cast(6)];
    expect(after[0]!.created_at).toBe(newest.created_at);
    const result = await t.poller.poll();
    await t.pipeline.idle();

    expect(result.failures).toEqual([]);
    expect(result.fellBack).toEqual([t.fx.projectId]);
    expect(result.duplicates).toBe(1);
    expect(t.firedKeys()).toEqual([...before, ...after].map(keyOf));
    expect(new Set(t.firedKeys()).size).toBe(t.fired.length);
    const queries = voteRequests(t.emu).map((r) => r.query);
    const refused = voteRequests(t.emu).filter((r) => r.status === 400);
    expect(refused).toHaveLength(1);
    expect(queries).toContain(`?startDate=${encodeURIComponent(newest.created_at)}`);

    // A second expiry is handled the same way, and logged at debug only.
    t.clock.advance(5 * MINUTE);
    const third = await t.poller.poll();
    expect(third.fellBack).toEqual([t.fx.projectId]);
    expect(third.accepted).toBe(0);
    const warned = t.logs.filter((l) => l.level === 'warn' && l.msg.includes('refused the votes cursor'));
    expect(warned).toHaveLength(1);
    expect(warned[0]!.fields).toMatchObject({ project: t.fx.projectId, startDate: newest.created_at });
    expect(t.readiness.snapshot().components.votes!.ready).toBe(true);
  });

  it('falls back to where the first poll started when the refused cursor came before any vote was seen', async () => {
    const t = await setup({ settings: { cursorTtlSeconds: 60 }, lookbackMs: 0 });
    const started = t.clock.now();
    const skipped = t.cast(0, MINUTE);
    await t.poller.poll();
    expect(await t.state()).toMatchObject({ newestCreatedAt: null, startDate: iso(started) });
    t.clock.advance(10 * MINUTE);
    const vote = t.cast(1, 5 * MINUTE);
    const result = await t.poller.poll();
    await t.pipeline.idle();
    expect(result.fellBack).toEqual([t.fx.projectId]);
    // The vote cast before the first start stays unrewarded; the one after it is not lost.
    expect(t.firedKeys()).toEqual([keyOf(vote)]);
    expect(t.firedKeys()).not.toContain(keyOf(skipped));
    expect(voteRequests(t.emu).at(-2)!.query).toBe(`?startDate=${encodeURIComponent(iso(started))}`);
  });

  it('fires a vote once whichever roads and pollers bring it', async () => {
    const t = await setup();
    const votes = Array.from({ length: 30 }, (_, i) => t.cast(i, HOUR - i * SECOND));
    // The webhook road brings the first ten before any poll.
    const webhookVotes: Vote[] = votes.slice(0, 10).map((v) => ({
      key: keyOf(v),
      userId: v.user_id,
      platformId: v.platform_id,
      projectId: t.fx.projectId,
      weight: v.weight,
      createdAt: v.created_at,
      expiresAt: v.expires_at,
      road: 'webhook',
      voteId: v.id,
    }));
    await t.pipeline.ingest(webhookVotes, 'webhook');
    // Two pollers with their own checkpoints (two agents sharing one ledger, or a restart that lost the state).
    const otherStore = createMemoryStore();
    await otherStore.open();
    const second = createVotePoller({ client: t.client, store: otherStore, pipeline: t.pipeline, lookbackMs: 12 * HOUR, now: t.clock.now });
    const [a, b] = await Promise.all([t.poller.poll(), second.poll()]);
    await t.pipeline.idle();
    expect(a.accepted + b.accepted).toBe(20);
    expect(a.duplicates + b.duplicates).toBe(40);
    expect([...t.firedKeys()].sort()).toEqual(votes.map(keyOf).sort());
    expect(t.fired.filter((v) => v.road === 'webhook').map((v) => v.key)).toEqual(webhookVotes.map((v) => v.key));
  });

  it('polls every project an application token reaches, refreshed at each poll, and the one project of an OAuth token', async () => {
    const t = await setup();
    const other = t.emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: t.fx.ownerId, name: 'Other Bot' }).project;
    t.emu.admin.grantAuthorization({ client_id: t.fx.clientId, user_id: t.fx.ownerId, project_id: other.id, scopes: ['project.votes.read'] });
    const { application_token } = t.emu.admin.rotateApplicationToken(t.fx.clientId);
    const app = clientFor(t.emu, { applicationToken: application_token, clock: t.clock });
    const mine = t.cast(0, HOUR);
    const theirs = t.cast(1, HOUR, other.id);
    const poller = t.makePoller(app);
    const first = await poller.poll();
    await t.pipeline.idle();
    expect(first.failures).toEqual([]);
    expect(first.projects.sort()).toEqual([t.fx.projectId, other.id].sort());
    expect(t.fired.map((v) => `${v.projectId} ${v.key}`).sort()).toEqual([`${t.fx.projectId} ${keyOf(mine)}`, `${other.id} ${keyOf(theirs)}`].sort());
    expect(await t.state(other.id)).toMatchObject({ newestKey: keyOf(theirs) });

    // A project granted later is polled from the next poll on, from its own bootstrap.
    const third = t.emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: t.fx.ownerId, name: 'Third Bot' }).project;
    t.emu.admin.grantAuthorization({ client_id: t.fx.clientId, user_id: t.fx.ownerId, project_id: third.id, scopes: ['project.votes.read'] });
    const late = t.cast(2, 2 * HOUR, third.id);
    const next = await poller.poll();
    await t.pipeline.idle();
    expect(next.projects).toHaveLength(3);
    expect(t.firedKeys().at(-1)).toBe(keyOf(late));
    expect(t.fired.at(-1)!.projectId).toBe(third.id);

    // An OAuth access token polls the authorization's project, under the same checkpoint as the app did.
    const oauth = clientFor(t.emu, { accessToken: t.fx.accessToken, clock: t.clock });
    const fresh = t.cast(3);
    const viaOauth = await t.makePoller(oauth).poll();
    await t.pipeline.idle();
    expect(viaOauth).toMatchObject({ projects: [t.fx.projectId], accepted: 1, duplicates: 0, failures: [] });
    expect(t.firedKeys().at(-1)).toBe(keyOf(fresh));
  });

  it('does not move the cursor past a page whose ingest failed, marks votes not ready, and resumes there', async () => {
    const t = await setup();
    const cast = Array.from({ length: 150 }, (_, i) => t.cast(i, 5 * HOUR - i * SECOND));
    let calls = 0;
    const flaky: VoteIngest = {
      ingest: async (votes, road) => {
        calls += 1;
        if (calls === 2) throw new Error('disk full');
        return t.pipeline.ingest(votes, road);
      },
    };
    const poller = t.makePoller(t.client, flaky);
    const failed = await poller.poll();
    await t.pipeline.idle();
    expect(failed.failures.map((f) => f.error.message)).toEqual(['disk full']);
    expect(t.fired).toHaveLength(100);
    const afterFirstPage = (await t.state())!;
    expect(afterFirstPage.newestKey).toBe(keyOf(cast[99]!));
    expect(t.readiness.snapshot().components.votes).toMatchObject({ ready: false });
    expect(t.readiness.snapshot().components.votes!.detail).toContain('disk full');
    expect(t.logs.some((l) => l.level === 'warn' && l.fields.err === 'disk full')).toBe(true);

    const resumed = await poller.poll();
    await t.pipeline.idle();
    expect(resumed).toMatchObject({ accepted: 50, duplicates: 0, failures: [] });
    expect(voteRequests(t.emu).at(-2)!.query).toBe(`?cursor=${encodeURIComponent(afterFirstPage.cursor!)}`);
    expect(t.firedKeys()).toEqual(cast.map(keyOf));
    expect(t.readiness.snapshot().components.votes!.ready).toBe(true);
  });

  it('survives a service that cannot be reached: not ready with the reason, and the next poll catches up', async () => {
    const t = await setup();
    const vote = t.cast(0, HOUR);
    t.emu.admin.injectFault({ method: 'GET', path: '/api/v1/projects/@me/votes', status: 500, count: 10 });
    const client = clientFor(t.emu, { projectToken: t.fx.projectToken, clock: t.clock, retry: { maxAttempts: 1 } });
    const poller = t.makePoller(client);
    const failed = await poller.poll();
    expect(failed.failures).toHaveLength(1);
    expect(t.readiness.snapshot().components.votes!.ready).toBe(false);
    t.emu.admin.clearFaults();
    const ok = await poller.poll();
    await t.pipeline.idle();
    expect(ok.failures).toEqual([]);
    expect(t.firedKeys()).toEqual([keyOf(vote)]);
  });
});

describe('agent.hasVoted', () => {
  it('asks the status endpoint once per answer: a yes until expires_at, a no for 30 s, one request for concurrent questions', async () => {
    const clock = createFakeClock();
    const emu = await startTestEmulator({ now: () => clock.now() });
    const fx = setupBot(emu);
    const voter = emu.admin.createUser({ username: 'voter' });
    const client = clientFor(emu, { projectToken: fx.projectToken, clock });
    const check = createHasVoted({ client, now: clock.now });
    const asked = (id: string) => emu.admin.requests().filter((r) => r.path === `/api/v1/projects/@me/votes/${id}`).length;

    expect(await Promise.all([check.hasVoted(voter.id), check.hasVoted(voter.id)])).toEqual([false, false]);
    expect(asked(voter.id)).toBe(1);
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    clock.advance(29 * SECOND);
    expect(await check.hasVoted(voter.id)).toBe(false);
    clock.advance(2 * SECOND);
    expect(await check.hasVoted(voter.id)).toBe(true);
    expect(asked(voter.id)).toBe(2);
    clock.advance(11 * HOUR);
    expect(await check.hasVoted(voter.id)).toBe(true);
    expect(asked(voter.id)).toBe(2);
    // Past expires_at the answer is asked again, and the service says the vote expired.
    clock.advance(HOUR);
    expect(await check.hasVoted(voter.id)).toBe(false);
    expect(asked(voter.id)).toBe(3);
    // The Discord namespace is cached apart.
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    expect(await check.hasVoted(voter.platform_id, { source: 'discord' })).toBe(true);
    expect(asked(voter.platform_id)).toBe(1);
  });
});

describe('the votes capability in the agent', () => {
  it('polls, calls the vote listeners once per vote, exposes the pipeline and hasVoted, and keeps a memory ledger on a memory store', async () => {
    const clock = createFakeClock();
    const emu = await startTestEmulator({ now: () => clock.now() });
    const fx = setupBot(emu);
    const voters = Array.from({ length: 3 }, (_, i) => emu.admin.createUser({ username: `v${i}` }));
    const schedules = createManualScheduler(clock.now);
    const store = createMemoryStore();
    const directory = await mkdtemp(join(tmpdir(), 'la-votes-agent-'));
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        health: { enabled: false },
        state: { directory },
        // The votes cast before the start are a backfill: a first start asks for it.
        votes: { enabled: true, pollInterval: '10s', lookback: '1h' },
      },
      store,
      client: clientFor(emu, { projectToken: fx.projectToken, clock }),
      now: clock.now,
      votes: { schedules: schedules.factory },
    });
    const rewarded: Vote[] = [];
    const received: string[] = [];
    agent.on('vote', async (vote) => void rewarded.push(vote));
    agent.on('voteReceived', (vote) => void received.push(vote.key));
    const before = voters.slice(0, 2).map((v, i) => emu.admin.castVote({ project_id: fx.projectId, user_id: v.id, created_at: iso(clock.now() - (i + 1) * MINUTE) }));
    await agent.start();
    expect(agent.votePipeline).toBeDefined();
    await vi.waitFor(() => expect(rewarded).toHaveLength(2));

    const late = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[2]!.id });
    await schedules.get('votes-poll')!.tick();
    await agent.votePipeline!.idle();
    expect(rewarded.map((v) => v.key)).toEqual([...before.reverse(), late].map(keyOf));
    expect(received).toEqual(rewarded.map((v) => v.key));
    expect(agent.readiness.snapshot().components.votes).toMatchObject({ ready: true, detail: 'polling 1 project every 10s' });
    expect(await store.get(cursorStateKey(fx.projectId))).toMatchObject({ newestKey: keyOf(late) });
    expect(await agent.hasVoted(late.user_id)).toBe(true);
    expect(await agent.metrics.votesReceived.get({ road: 'poll' })).toBe(3);

    await agent.stop();
    expect(agent.votePipeline).toBeUndefined();
    // A memory store gets a memory ledger: nothing was written to the state directory.
    expect(await readdir(directory)).toEqual([]);
  });
});
