import { describe, expect, it } from 'vitest';
import { CredentialError, ForbiddenError, ServerError, UnauthorizedError } from '../../../src/api/errors.js';
import type { V0StatsPost } from '../../../src/api/v0/index.js';
import type { BotsQuery } from '../../../src/api/v0/index.js';
import { ValidationError } from '../../../src/errors.js';
import { clientFor, createFakeClock } from '../../helpers/client.js';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';

/** The emulator's log of requests to `path` (below the v0 base `/api`). */
const logged = (emu: TestEmulator, method: string, path: string) =>
  emu.admin.requests().filter((r) => r.method === method && r.path === `/api${path}`);

async function setup() {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  return { emu, fx, client: clientFor(emu, { projectToken: fx.projectToken }) };
}

describe('client.v0 bots', () => {
  it('iterates 120 bots in offset pages of 50: 3 requests, 120 bots', async () => {
    const { emu, client } = await setup();
    for (let i = 1; i < 120; i += 1) emu.admin.createProject({ platform: 'discord', type: 'bot', name: `Bot ${i}` });
    emu.admin.createProject({ platform: 'discord', type: 'server' }); // not a bot: not listed
    const bots = [];
    for await (const bot of client.v0.bots({ limit: 50 })) bots.push(bot);
    expect(bots).toHaveLength(120);
    expect(new Set(bots.map((b) => b.id)).size).toBe(120);
    expect(bots[1]).toMatchObject({ username: 'Bot 1', server_count: null, points: 0, certifiedBot: false });
    expect(logged(emu, 'GET', '/bots').map((r) => r.query)).toEqual([
      '?limit=50&offset=0',
      '?limit=50&offset=50',
      '?limit=50&offset=100',
    ]);
  });

  it('uses the default page size of 50, stops at an empty page, and returns raw pages', async () => {
    const { emu, client } = await setup();
    for (let i = 1; i < 60; i += 1) emu.admin.createProject({ platform: 'discord', type: 'bot' });
    let count = 0;
    for await (const _ of client.v0.bots()) count += 1;
    expect(count).toBe(60);
    expect(logged(emu, 'GET', '/bots').map((r) => r.query)).toEqual(['?offset=0', '?offset=50']);

    const beyond = [];
    for await (const bot of client.v0.bots({ offset: 500 })) beyond.push(bot);
    expect(beyond).toEqual([]);
    expect(logged(emu, 'GET', '/bots')).toHaveLength(3);

    const page = await client.v0.botsPage({ limit: 10, offset: 55 });
    expect(page).toMatchObject({ limit: 10, offset: 55, count: 5, total: 60 });
    expect(page.results).toHaveLength(5);
  });

  it('sorts and picks fields; the results carry only those fields', async () => {
    const { emu, fx, client } = await setup();
    const other = emu.admin.createProject({ platform: 'discord', type: 'bot', name: 'Popular' });
    const voter = emu.admin.createUser({ username: 'voter' });
    emu.admin.castVote({ project_id: other.project.id, user_id: voter.id, weight: 3 });
    const picked = [];
    for await (const bot of client.v0.bots({ sort: '-points', fields: ['id', 'points'] })) picked.push(bot);
    expect(picked).toEqual([
      { id: other.project.platform_id, points: 3 },
      { id: fx.platformId, points: 0 },
    ]);
    expect(logged(emu, 'GET', '/bots')[0]!.query).toBe('?offset=0&sort=-points&fields=id%2Cpoints');
  });

  it('checks the query before sending', async () => {
    const { emu, client } = await setup();
    const cases: Array<[unknown, string]> = [
      [{ limit: 0 }, 'limit'],
      [{ limit: 501 }, 'limit'],
      [{ limit: 2.5 }, 'limit'],
      [{ offset: -1 }, 'offset'],
      [{ sort: 'nope' }, 'sort'],
      [{ sort: '--points' }, 'sort'],
      [{ fields: ['id', 'nope'] }, 'fields[1]'],
    ];
    for (const [query, path] of cases) {
      const page = await client.v0.botsPage(query as BotsQuery).catch((e: unknown) => e);
      expect(page, JSON.stringify(query)).toBeInstanceOf(ValidationError);
      expect((page as ValidationError).subject).toBe('request');
      expect((page as ValidationError).issues.map((i) => i.path)).toEqual([path]);
      await expect(client.v0.bots(query as BotsQuery).next()).rejects.toBeInstanceOf(ValidationError);
    }
    expect(emu.admin.requests()).toEqual([]);
  });
});

describe('client.v0 stats', () => {
  it('reads and posts stats for the bot named in the project token', async () => {
    const { emu, fx, client } = await setup();
    expect(await client.v0.getStats()).toEqual({ shards: [] });
    await client.v0.postStats({ serverCount: 42 });
    expect(await client.v0.getStats()).toEqual({ server_count: 42, shards: [] });
    expect(logged(emu, 'POST', `/bots/${fx.platformId}/stats`)).toHaveLength(1);
    expect(logged(emu, 'GET', `/bots/${fx.platformId}/stats`)).toHaveLength(2);

    await client.v0.postStats({ shards: [10, 20] });
    expect(await client.v0.getStats(fx.platformId)).toEqual({ server_count: 30, shards: [10, 20], shard_count: 2 });
    await client.v0.postStats({ serverCount: 5, shardId: 2, shardCount: 3 });
    expect(await client.v0.getStats()).toEqual({ server_count: 35, shards: [10, 20, 5], shard_count: 3 });
  });

  it('sends the wire body {server_count, shards?, shard_id?, shard_count?}', async () => {
    const { emu, fx, client } = await setup();
    await client.v0.postStats({ shards: [1, 2, 3], shardCount: 4 });
    await client.v0.postStats({ serverCount: 7, shardId: 0, shardCount: 4 });
    await client.v0.postStats({ serverCount: 99, shardCount: 4 });
    expect(emu.context.state.projects.get(fx.projectId)!.metrics.map((m) => m.metrics)).toEqual([
      { server_count: 6, shards: [1, 2, 3], shard_count: 4 },
      { server_count: 7, shard_id: 0, shard_count: 4 },
      { server_count: 99, shard_count: 4 },
    ]);
  });

  it('checks a stats post before sending', async () => {
    const { emu, client } = await setup();
    const cases: Array<[unknown, string[]]> = [
      [{ serverCount: -1 }, ['serverCount']],
      [{ serverCount: 1.5 }, ['serverCount']],
      [{ serverCount: 1, shardId: 2, shardCount: 2 }, ['shardId']],
      [{ serverCount: 1, shardId: -1 }, ['shardId']],
      [{ shards: [1, -2, 3] }, ['shards[1]']],
      [{ shards: [] }, ['shards']],
      [{ shards: [1, 2, 3], shardCount: 2 }, ['shards']],
      [{ shards: [1], shardId: 0 }, ['shardId']],
      [{ serverCount: 1, shards: [1] }, ['']],
      [{}, ['']],
      [{ serverCount: 1, shardCount: -3 }, ['shardCount']],
    ];
    for (const [stats, paths] of cases) {
      const error = await client.v0.postStats(stats as V0StatsPost).catch((e: unknown) => e);
      expect(error, JSON.stringify(stats)).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues.map((i) => i.path)).toEqual(paths);
    }
    await expect(client.v0.getStats('not-a-snowflake')).rejects.toBeInstanceOf(ValidationError);
    expect(emu.admin.requests()).toEqual([]);
  });

  it('retries a stats post on 502: it overwrites, so sending it twice is safe', async () => {
    const { emu, fx, client } = await setup();
    const path = `/bots/${fx.platformId}/stats`;
    emu.admin.injectFault({ method: 'POST', path: `/api${path}`, status: 502, count: 1 });
    await client.v0.postStats({ serverCount: 12 });
    expect(logged(emu, 'POST', path).map((r) => r.status)).toEqual([502, 200]);
    expect((await client.v0.getStats()).server_count).toBe(12);

    emu.admin.injectFault({ method: 'POST', path: `/api${path}`, status: 502, count: 4 });
    const error = await client.v0.postStats({ serverCount: 13 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).attempts).toBe(4);
  });

  it("403 ForbiddenError when posting for another bot; 404 reading an unknown bot's stats", async () => {
    const { emu, client } = await setup();
    const other = emu.admin.createProject({ platform: 'discord', type: 'bot' });
    const error = await client.v0.postStats({ serverCount: 1 }, other.project.platform_id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).status).toBe(403);
    expect((error as ForbiddenError).error).toMatch(/Forbidden/);
    await expect(client.v0.getStats('123456789012345678')).rejects.toMatchObject({ status: 404 });
  });
});

describe('client.v0 votes and users', () => {
  it('checks a vote of the past 12 hours for the bot in the token', async () => {
    const { emu, fx, client } = await setup();
    const voter = emu.admin.createUser({ username: 'voter' });
    const stranger = emu.admin.createUser({ username: 'stranger' });
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    expect(await client.v0.hasVoted(voter.platform_id)).toBe(true);
    expect(await client.v0.hasVoted(stranger.platform_id)).toBe(false);
    expect(logged(emu, 'GET', `/bots/${fx.platformId}/check`).map((r) => r.query)).toEqual([
      `?userId=${voter.platform_id}`,
      `?userId=${stranger.platform_id}`,
    ]);
    await expect(client.v0.hasVoted('')).rejects.toBeInstanceOf(ValidationError);
  });

  it('reads a user profile, or null when there is none', async () => {
    const { emu, client } = await setup();
    const user = emu.admin.createUser({ username: 'profiled', profile: { bio: 'hi', supporter: true, social: { github: 'me' } } });
    const profile = await client.v0.user(user.platform_id);
    expect(profile).toMatchObject({ id: user.platform_id, username: 'profiled', bio: 'hi', supporter: true, social: { github: 'me' } });
    expect(profile).not.toHaveProperty('avatar');
    expect(await client.v0.user('123456789012345678')).toBeNull();
    expect(logged(emu, 'GET', '/users/123456789012345678').map((r) => r.status)).toEqual([404]);
  });
});

describe('client.v0 credentials and limits', () => {
  it('401 UnauthorizedError for a token the service did not issue', async () => {
    const emu = await startTestEmulator();
    const elsewhere = await startTestEmulator();
    const foreign = setupBot(elsewhere);
    const client = clientFor(emu, { projectToken: foreign.projectToken });
    for (const call of [() => client.v0.getStats(), () => client.v0.botsPage(), () => client.v0.user(foreign.ownerPlatformId)]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect((error as UnauthorizedError).status).toBe(401);
      expect((error as Error).message).not.toContain(foreign.projectToken);
    }
  });

  it('needs a project token (or v0Token); an OAuth client with v0Token works', async () => {
    const { emu, fx } = await setup();
    const oauth = clientFor(emu, { accessToken: fx.accessToken });
    await expect(oauth.v0.getStats()).rejects.toBeInstanceOf(CredentialError);
    await expect(oauth.v0.botsPage()).rejects.toBeInstanceOf(CredentialError);
    expect(emu.admin.requests()).toEqual([]);
    const both = clientFor(emu, { accessToken: fx.accessToken, v0Token: fx.projectToken });
    expect(await both.v0.getStats()).toEqual({ shards: [] });
  });

  it('spreads 61 calls over the 60/min bucket: the 61st waits 60 s, and the service never answers 429', async () => {
    const clock = createFakeClock();
    // The emulator reads the same fake clock: its window moves only when the client waits.
    const emu = await startTestEmulator({ now: () => clock.now() });
    const fx = setupBot(emu);
    const client = clientFor(emu, { projectToken: fx.projectToken, clock });
    for (let i = 0; i < 60; i += 1) await client.v0.getStats();
    expect(clock.sleeps).toEqual([]);
    await client.v0.getStats();
    expect(clock.sleeps).toEqual([60_000]);
    const log = logged(emu, 'GET', `/bots/${fx.platformId}/stats`);
    expect(log).toHaveLength(61);
    expect(log.filter((r) => r.status !== 200)).toEqual([]);
  });

  it('does not spend the bot bucket on profile lookups (the contract limits only bot endpoints)', async () => {
    const clock = createFakeClock();
    const emu = await startTestEmulator({ now: () => clock.now() });
    const fx = setupBot(emu);
    const client = clientFor(emu, { projectToken: fx.projectToken, clock });
    for (let i = 0; i < 70; i += 1) await client.v0.user(fx.ownerPlatformId);
    for (let i = 0; i < 60; i += 1) await client.v0.getStats();
    expect(clock.sleeps).toEqual([]);
  });
});
