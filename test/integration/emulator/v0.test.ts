import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';

/** 10:00:00 on a Wednesday: the clock stands still here (rate-limit windows included) unless advanced. */
const BASE = Date.parse('2025-01-08T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const BOT_FIELDS = [
  'id', 'username', 'discriminator', 'avatar', 'defAvatar', 'lib', 'prefix', 'shortdesc', 'longdesc', 'tags',
  'website', 'support', 'github', 'owners', 'guilds', 'invite', 'date', 'server_count', 'shard_count',
  'certifiedBot', 'vanity', 'points', 'monthlyPoints', 'donationbotguildid',
];

function start(): Promise<TestEmulator> {
  return startTestEmulator({ now: () => BASE });
}

/** A request with the raw v0 token. */
function v0(emu: TestEmulator, token: string, path: string, json?: unknown) {
  return emu.v0(path, json === undefined ? { authorization: token } : { authorization: token, json });
}

describe('v0 authentication', () => {
  it('answers 401 {error} without a token, with the Bearer prefix, and for tokens it did not issue', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const elsewhere = await start();
    const foreign = setupBot(elsewhere);
    for (const options of [{}, { bearer: bot.projectToken }, { authorization: foreign.projectToken }, { authorization: 'garbage' }]) {
      const res = await emu.v0(`/bots/${bot.platformId}/stats`, options);
      expect(res.status).toBe(401);
      expect(typeof res.body.error).toBe('string');
    }
    expect((await emu.v0(`/users/${bot.ownerPlatformId}`, { bearer: bot.projectToken })).status).toBe(401);
    expect((await v0(emu, bot.projectToken, `/bots/${bot.platformId}/stats`)).status).toBe(200);
  });
});

describe('GET /bots', () => {
  it('lists Discord bots with exactly the Bot (v0) fields', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const admin = emu.admin.createUser({ username: 'helper' });
    emu.admin.setProjectAdmin(bot.projectId, admin.id, true);
    emu.admin.createProject({ platform: 'discord', type: 'server', owner_user_id: bot.ownerId });
    emu.admin.createProject({ platform: 'roblox', type: 'game' });
    const record = emu.context.state.projects.get(bot.projectId)!;
    record.tags = ['music'];
    record.headline = { de: 'Hallo Welt', en: 'A test bot for tests' };
    record.bot.lib = 'discord.js';
    record.bot.support = 'abcdef';
    const voter = emu.admin.createUser({ username: 'voter' });
    emu.admin.castVote({ project_id: bot.projectId, user_id: voter.id, created_at: '2024-12-31T12:00:00Z' }); // Tuesday, last month
    emu.admin.castVote({ project_id: bot.projectId, user_id: voter.id, created_at: '2025-01-04T12:00:00Z' }); // Saturday: 2
    emu.admin.castVote({ project_id: bot.projectId, user_id: voter.id, created_at: '2025-01-07T12:00:00Z' }); // Tuesday: 1

    const res = await v0(emu, bot.projectToken, '/bots');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ limit: 50, offset: 0, count: 1, total: 1 });
    const [listed] = res.body.results;
    expect(Object.keys(listed)).toEqual(BOT_FIELDS);
    expect(listed).toEqual({
      id: bot.platformId,
      username: 'Test Bot',
      discriminator: '0',
      avatar: null,
      defAvatar: null,
      lib: 'discord.js',
      prefix: '/',
      shortdesc: 'A test bot for tests',
      longdesc: record.page_content.en,
      tags: ['music'],
      website: null,
      support: 'abcdef',
      github: null,
      owners: [bot.ownerPlatformId, admin.platform_id],
      guilds: [],
      invite: null,
      date: iso(BASE),
      server_count: null,
      shard_count: null,
      certifiedBot: false,
      vanity: null,
      points: 4,
      monthlyPoints: 3,
      donationbotguildid: '',
    });
    delete record.page_content.en;
    expect((await v0(emu, bot.projectToken, '/bots')).body.results[0].longdesc).toBeNull();
  });

  it('applies limit (default 50, clamped to 500), offset, sort in both directions, and fields', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const ids = [bot.platformId];
    for (let i = 0; i < 54; i += 1) ids.push(emu.admin.createProject({ platform: 'discord', type: 'bot' }).project.platform_id);
    const get = (query: string) => v0(emu, bot.projectToken, `/bots${query}`);

    const byDefault = await get('');
    expect(byDefault.body).toMatchObject({ limit: 50, offset: 0, count: 50, total: 55 });
    expect(byDefault.body.results.map((b: { id: string }) => b.id)).toEqual(ids.slice(0, 50));
    expect((await get('?limit=1000')).body).toMatchObject({ limit: 500, count: 55, total: 55 });
    const page = await get('?limit=10&offset=50');
    expect(page.body).toMatchObject({ limit: 10, offset: 50, count: 5, total: 55 });
    expect(page.body.results.map((b: { id: string }) => b.id)).toEqual(ids.slice(50));
    expect((await get('?offset=100')).body).toMatchObject({ count: 0, total: 55, results: [] });
    for (const bad of ['?limit=-1', '?limit=abc', '?limit=1.5', '?offset=-5', '?offset=x']) {
      const res = await get(bad);
      expect(res.status, bad).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }

    // Points: the third bot gets 3, the second 1, the rest 0.
    const voter = emu.admin.createUser({ username: 'voter' });
    const projectIdOf = (platformId: string) =>
      [...emu.context.state.projects.values()].find((p) => p.platform_id === platformId)!.id;
    emu.admin.castVote({ project_id: projectIdOf(ids[2]!), user_id: voter.id, weight: 3 });
    emu.admin.castVote({ project_id: projectIdOf(ids[1]!), user_id: voter.id, weight: 1 });
    const desc = await get('?sort=-points&limit=3&fields=id,points');
    expect(desc.body.results).toEqual([{ id: ids[2], points: 3 }, { id: ids[1], points: 1 }, { id: ids[0], points: 0 }]);
    const asc = await get('?sort=points&fields=id,points&limit=500');
    expect(asc.body.results.slice(-2)).toEqual([{ id: ids[1], points: 1 }, { id: ids[2], points: 3 }]);
    expect(asc.body.results[0]).toEqual({ id: ids[0], points: 0 });
    const byName = await get('?sort=-username&fields=username&limit=500');
    const names = byName.body.results.map((b: { username: string }) => b.username);
    expect(names).toEqual([...names].sort().reverse());

    const unknownSort = await get('?sort=nope');
    expect(unknownSort.status).toBe(400);
    expect(unknownSort.body.error).toContain('nope');
    expect((await get('?sort=-nope')).status).toBe(400);

    const picked = await get('?fields=username, id,nope&limit=1');
    expect(Object.keys(picked.body.results[0])).toEqual(['id', 'username']);
    expect(Object.keys((await get('?fields=nope&limit=1')).body.results[0])).toEqual(BOT_FIELDS);
  });
});

describe('v0 bot stats', () => {
  it('accepts a number, an array, shards, and shard_id with shard_count; answers 200 with an empty body', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const post = (body: unknown, path = `/bots/${bot.platformId}/stats`) => v0(emu, bot.projectToken, path, body);
    const stats = async () => (await v0(emu, bot.projectToken, `/bots/${bot.platformId}/stats`)).body;

    expect(await stats()).toEqual({ shards: [] });
    const number = await post({ server_count: 100 });
    expect(number.status).toBe(200);
    expect(number.text).toBe('');
    expect(number.headers.get('content-length')).toBe('0');
    expect(await stats()).toEqual({ server_count: 100, shards: [] });

    expect((await post({ server_count: [10, 20] })).status).toBe(200);
    expect(await stats()).toEqual({ server_count: 30, shards: [10, 20], shard_count: 2 });

    expect((await post({ server_count: 999, shards: [1, 2, 3] })).status).toBe(200);
    expect(await stats()).toEqual({ server_count: 6, shards: [1, 2, 3], shard_count: 3 });

    // A number alone sets the total and keeps what is known about shards.
    expect((await post({ server_count: 50 })).status).toBe(200);
    expect(await stats()).toEqual({ server_count: 50, shards: [1, 2, 3], shard_count: 3 });

    expect((await post({ server_count: 7, shard_id: 4, shard_count: 6 })).status).toBe(200);
    expect(await stats()).toEqual({ server_count: 13, shards: [1, 2, 3, 0, 7], shard_count: 6 });
    expect((await post({ server_count: 5, shard_id: 0 })).status).toBe(200);
    expect(await stats()).toEqual({ server_count: 17, shards: [5, 2, 3, 0, 7], shard_count: 6 });
    // Resharding down drops the gone shards.
    expect((await post({ server_count: 9, shard_id: 1, shard_count: 2 })).status).toBe(200);
    expect(await stats()).toEqual({ server_count: 14, shards: [5, 9], shard_count: 2 });

    expect((await post({ server_count: 40 }, '/bots/stats')).status).toBe(200);
    expect(await stats()).toMatchObject({ server_count: 40 });

    const metrics = emu.admin.metrics(bot.projectId);
    expect(metrics.map((m) => m.source)).toEqual(Array(8).fill('v0'));
    expect(metrics[0]).toEqual({ source: 'v0', applied_at: iso(BASE), timestamp: null, metrics: { server_count: 100 } });
    expect(metrics[2]!.metrics).toEqual({ server_count: 999, shards: [1, 2, 3] });
    expect(metrics[4]!.metrics).toEqual({ server_count: 7, shard_id: 4, shard_count: 6 });
    expect(emu.admin.getProject(bot.projectId).stats).toEqual({ server_count: 40, shard_count: 2, shards: [5, 9] });
  });

  it('refuses bad bodies with 400 {error} naming the field, and another bot with 403', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const other = setupBot(emu);
    const post = (body: unknown) => v0(emu, bot.projectToken, `/bots/${bot.platformId}/stats`, body);
    const cases: Array<[unknown, string]> = [
      [{}, 'server_count'],
      [{ server_count: -1 }, 'server_count'],
      [{ server_count: 1.5 }, 'server_count'],
      [{ server_count: '12' }, 'server_count'],
      [{ server_count: null }, 'server_count'],
      [{ server_count: [1, 'a'] }, 'server_count[1]'],
      [{ server_count: 1, shards: [1, -2] }, 'shards[1]'],
      [{ server_count: 1, shard_id: -1 }, 'shard_id'],
      [{ server_count: 1, shard_count: 'x' }, 'shard_count'],
      [{ server_count: 1, shard_id: 3, shard_count: 2 }, 'shard_id'],
      [{ server_count: [1, 2], shard_id: 0 }, 'shard_id'],
      [[1, 2], 'object'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toContain(field);
    }
    const malformed = await emu.v0(`/bots/${bot.platformId}/stats`, {
      authorization: bot.projectToken,
      body: '{"server_count": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(typeof malformed.body.error).toBe('string');

    expect((await post({ server_count: 1 })).status).toBe(200);
    const forbidden = await v0(emu, bot.projectToken, `/bots/${other.platformId}/stats`, { server_count: 5 });
    expect(forbidden.status).toBe(403);
    expect(typeof forbidden.body.error).toBe('string');
    expect(emu.admin.getProject(other.projectId).stats.server_count).toBeNull();
    expect(emu.admin.metrics(bot.projectId)).toHaveLength(1);
  });

  it('shows any bot\'s stats and answers 404 {error} for an unknown bot', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const other = setupBot(emu);
    await v0(emu, other.projectToken, '/bots/stats', { server_count: [3, 4] });
    const seen = await v0(emu, bot.projectToken, `/bots/${other.platformId}/stats`);
    expect(seen.body).toEqual({ server_count: 7, shards: [3, 4], shard_count: 2 });
    const missing = await v0(emu, bot.projectToken, '/bots/123456789012345678/stats');
    expect(missing.status).toBe(404);
    expect(typeof missing.body.error).toBe('string');
  });
});

describe('v0 vote check', () => {
  it('answers 1 within 12 hours of a vote and 0 after, on both paths', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const other = setupBot(emu);
    const voter = emu.admin.createUser({ username: 'voter' });
    const stranger = emu.admin.createUser({ username: 'stranger' });
    emu.admin.castVote({ project_id: bot.projectId, user_id: voter.id });
    emu.admin.castVote({ project_id: other.projectId, user_id: stranger.id });
    const check = (userId: string, path = `/bots/${bot.platformId}/check`) =>
      v0(emu, bot.projectToken, `${path}?userId=${userId}`);

    expect((await check(voter.platform_id)).body).toEqual({ voted: 1 });
    expect((await check(voter.platform_id, '/bots/check')).body).toEqual({ voted: 1 });
    expect((await check(stranger.platform_id)).body).toEqual({ voted: 0 });
    expect((await check(voter.id)).body).toEqual({ voted: 0 });
    emu.admin.advanceClock(12 * 3600 - 1);
    expect((await check(voter.platform_id)).body).toEqual({ voted: 1 });
    emu.admin.advanceClock(2);
    expect((await check(voter.platform_id)).body).toEqual({ voted: 0 });
    expect((await check(voter.platform_id, '/bots/check')).body).toEqual({ voted: 0 });
  });

  it('needs userId (400) and the token\'s own bot (403)', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const other = setupBot(emu);
    for (const path of [`/bots/${bot.platformId}/check`, '/bots/check', '/bots/check?userId=']) {
      const res = await v0(emu, bot.projectToken, path);
      expect(res.status, path).toBe(400);
      expect(res.body.error).toContain('userId');
    }
    const forbidden = await v0(emu, bot.projectToken, `/bots/${other.platformId}/check?userId=${other.ownerPlatformId}`);
    expect(forbidden.status).toBe(403);
  });
});

describe('GET /users/:user_id (v0)', () => {
  it('answers the profile with exactly the contract fields, omitting unset optional ones', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const plain = emu.admin.createUser({ username: 'plain' });
    const res = await v0(emu, bot.projectToken, `/users/${plain.platform_id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: plain.platform_id,
      username: 'plain',
      discriminator: '0',
      defAvatar: '0',
      social: {},
      supporter: false,
      certifiedDev: false,
      mod: false,
      webMod: false,
      admin: false,
    });

    const full = emu.admin.createUser({ username: 'full', avatar: 'a_1234' });
    Object.assign(emu.context.state.users.get(full.id)!.profile, {
      discriminator: '1234',
      defAvatar: '3',
      bio: 'hello',
      banner: 'https://example.com/banner.png',
      color: 'not-a-color',
      social: { github: 'octocat', twitter: 'bird' },
      supporter: true,
      certifiedDev: true,
      mod: true,
      webMod: true,
      admin: true,
    });
    const detailed = await v0(emu, bot.projectToken, `/users/${full.platform_id}`);
    expect(detailed.body).toEqual({
      id: full.platform_id,
      username: 'full',
      discriminator: '1234',
      avatar: 'a_1234',
      defAvatar: '3',
      bio: 'hello',
      banner: 'https://example.com/banner.png',
      social: { github: 'octocat', twitter: 'bird' },
      color: 'not-a-color',
      supporter: true,
      certifiedDev: true,
      mod: true,
      webMod: true,
      admin: true,
    });
  });

  it('answers 404 {error} for an unknown ID (also a service user ID)', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    for (const id of ['123456789012345678', bot.ownerId]) {
      const res = await v0(emu, bot.projectToken, `/users/${id}`);
      expect(res.status).toBe(404);
      expect(typeof res.body.error).toBe('string');
    }
  });
});

describe('v0 rate limit', () => {
  it('answers the 61st bot request in a minute with 429, Retry-After and {"retry-after"}; /users is not limited', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const other = setupBot(emu);
    // Profile lookups do not count against the bot limit.
    for (let i = 0; i < 70; i += 1) {
      expect((await v0(emu, bot.projectToken, `/users/${bot.ownerPlatformId}`)).status).toBe(200);
    }
    const paths = [`/bots/${bot.platformId}/stats`, '/bots?limit=1', `/bots/check?userId=1`];
    for (let i = 0; i < 60; i += 1) {
      const res = await v0(emu, bot.projectToken, paths[i % paths.length]!);
      expect(res.status, `request ${i + 1}`).toBe(200);
    }
    const limited = await v0(emu, bot.projectToken, '/bots/stats', { server_count: 1 });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body).toEqual({ 'retry-after': retryAfter });
    expect(emu.admin.metrics(bot.projectId)).toHaveLength(0);

    // Per token: another bot is unaffected; profiles still answer.
    expect((await v0(emu, other.projectToken, `/bots/${other.platformId}/stats`)).status).toBe(200);
    expect((await v0(emu, bot.projectToken, `/users/${bot.ownerPlatformId}`)).status).toBe(200);

    emu.admin.advanceClock(60);
    expect((await v0(emu, bot.projectToken, `/bots/${bot.platformId}/stats`)).status).toBe(200);
  });
});
