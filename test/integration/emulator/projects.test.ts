import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import type { TestResponse } from '../../helpers/http.js';

/** A frozen base clock: only `advanceClock` moves emulator time, so Retry-After values are exact. */
const FROZEN = Date.parse('2026-03-02T12:00:10Z');
const frozen = { now: () => FROZEN };

const text = (n: number) => 'x'.repeat(n);
/** `n` valid bot batch entries without timestamps, server_count 0..n-1. */
const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ metrics: { server_count: i } }));

function send(emu: TestEmulator, method: string, path: string, bearer: string, json?: unknown): Promise<TestResponse> {
  return emu.v1(path, json === undefined ? { method, bearer } : { method, bearer, json });
}

function expectProblem(res: TestResponse, status: number, detail?: string | RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(res.body.status).toBe(status);
  if (typeof detail === 'string') expect(res.body.detail).toContain(detail);
  else if (detail) expect(res.body.detail).toMatch(detail);
}

/** Another project of `platform`/`type`, owned by the bot's owner; returns its ID and project token. */
function otherProject(emu: TestEmulator, fx: BotFixture, platform: 'discord' | 'roblox' | 'minecraft', type: 'server' | 'game' | 'game_server') {
  const { project, project_token } = emu.admin.createProject({ platform, type, owner_user_id: fx.ownerId });
  return { id: project.id, token: project_token };
}

describe('GET /projects/:project_id', () => {
  it('answers the detail via @me with the project token and via the ID with an access token', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const viaMe = await emu.v1('/projects/@me', { bearer: fx.projectToken });
    expect(viaMe.status).toBe(200);
    expect(viaMe.body).toMatchObject({ id: fx.projectId, name: 'Test Bot', platform: 'discord', type: 'bot', tags: [], votes: 0, votes_total: 0 });
    expect(typeof viaMe.body.headline).toBe('string');
    const viaId = await emu.v1(`/projects/${fx.projectId}`, { bearer: fx.accessToken });
    expect(viaId.status).toBe(200);
    expect(viaId.body).toEqual(viaMe.body);
  });

  it('refuses a missing scope with 403 on every route', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu, { scopes: ['project.votes.read'] });
    const id = fx.projectId;
    expectProblem(await send(emu, 'GET', `/projects/${id}`, fx.accessToken), 403, 'project.information.read');
    expectProblem(await send(emu, 'PATCH', `/projects/${id}`, fx.accessToken, { headline: { en: 'Hello' } }), 403, 'project.information.write');
    expectProblem(await send(emu, 'PUT', `/projects/${id}/commands`, fx.accessToken, []), 403, 'project.information.write');
    expectProblem(await send(emu, 'POST', `/projects/${id}/announcements`, fx.accessToken, { title: 'Hey', content: text(10) }), 403, 'project.announcements.write');
    expectProblem(await send(emu, 'PATCH', `/projects/${id}/metrics`, fx.accessToken, { server_count: 1 }), 403, 'project.metrics.write');
    expectProblem(await send(emu, 'POST', `/projects/${id}/metrics/batch`, fx.accessToken, { data: [{ metrics: { server_count: 1 } }] }), 403, 'project.metrics.write');
    expect(emu.admin.metrics(id)).toEqual([]);
  });
});

describe('PATCH /projects/:project_id', () => {
  it('enforces headline lengths 3..140 and merges locales', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const patch = (body: unknown) => send(emu, 'PATCH', '/projects/@me', fx.projectToken, body);
    const original = emu.admin.getProject(fx.projectId).headline.en;
    expectProblem(await patch({ headline: { de: text(2) } }), 422, 'headline.de: must be a string of 3 to 140 characters (got 2)');
    expect((await patch({ headline: { de: text(3) } })).status).toBe(204);
    expect((await patch({ headline: { fr: text(140) } })).status).toBe(204);
    expectProblem(await patch({ headline: { fr: text(141) } }), 422, 'headline.fr');
    expect(emu.admin.getProject(fx.projectId).headline).toEqual({ en: original, de: text(3), fr: text(140) });
    const viaToken = await send(emu, 'PATCH', `/projects/${fx.projectId}`, fx.accessToken, { headline: { en: 'A new headline' } });
    expect(viaToken.status).toBe(204);
    expect((await emu.v1('/projects/@me', { bearer: fx.projectToken })).body.headline).toBe('A new headline');
  });

  it('enforces page_content lengths 300..50,000', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const patch = (body: unknown) => send(emu, 'PATCH', '/projects/@me', fx.projectToken, body);
    expectProblem(await patch({ page_content: { en: text(299) } }), 422, 'page_content.en');
    expect((await patch({ page_content: { en: text(300) } })).status).toBe(204);
    expect((await patch({ page_content: { ja: text(50_000) } })).status).toBe(204);
    expectProblem(await patch({ page_content: { ja: text(50_001) } }), 422, 'got 50001');
    const stored = emu.admin.getProject(fx.projectId).page_content;
    expect(stored.en).toBe(text(300));
    expect(stored.ja).toBe(text(50_000));
  });

  it('refuses unsupported locales, a body with neither field, and changes nothing then', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const patch = (body: unknown) => send(emu, 'PATCH', '/projects/@me', fx.projectToken, body);
    const before = emu.admin.getProject(fx.projectId);
    expectProblem(await patch({ headline: { xx: 'Valid length' } }), 422, 'headline.xx: is not a supported locale');
    expectProblem(await patch({ headline: { en: 'Valid length' }, page_content: { 'pt-BR': text(300) } }), 422, 'page_content.pt-BR');
    expectProblem(await patch({}), 422, 'at least one of headline and page_content');
    expectProblem(await patch({ tags: ['x'] }), 422, 'tags');
    const after = emu.admin.getProject(fx.projectId);
    expect(after.headline).toEqual(before.headline);
    expect(after.page_content).toEqual(before.page_content);
    const form = await emu.v1('/projects/@me', { method: 'PATCH', bearer: fx.projectToken, form: { headline: 'x' } });
    expectProblem(form, 415);
  });
});

describe('PUT /projects/:project_id/commands', () => {
  const ping = { name: 'ping', description: 'Replies with pong' };

  it('stores a valid set as sent and clears with an empty array', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const commands = [
      { ...ping, name_localizations: { de: 'pingen' }, options: [{ type: 3, name: 'target', description: 'who', required: false }] },
      { type: 2, name: 'Show Profile' },
      { type: 3, name: 'Report Message', description: '' },
    ];
    expect((await send(emu, 'PUT', '/projects/@me/commands', fx.projectToken, commands)).status).toBe(204);
    expect(emu.admin.commands(fx.projectId)).toEqual(commands);
    expect((await send(emu, 'PUT', `/projects/${fx.projectId}/commands`, fx.accessToken, [])).status).toBe(204);
    expect(emu.admin.commands(fx.projectId)).toEqual([]);
  });

  it('refuses invalid commands with the index, name and field in the detail, storing nothing', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const put = (body: unknown) => send(emu, 'PUT', '/projects/@me/commands', fx.projectToken, body);
    expect((await put([ping])).status).toBe(204);
    const many = Array.from({ length: 101 }, (_, i) => ({ name: `c${i}`, description: 'd' }));
    expectProblem(await put(many), 422, 'at most 100 commands (got 101)');
    expectProblem(await put([ping, { name: 'Ping', description: 'd' }]), 422, '[1].name: must be lowercase (command "Ping")');
    expectProblem(await put([{ name: 'a'.repeat(33), description: 'd' }]), 422, '[0].name: must be a string of 1 to 32 characters (got 33)');
    expectProblem(await put([{ name: 'two words', description: 'd' }]), 422, /\[0\]\.name: .*\(command "two words"\)/);
    expectProblem(await put([ping, { name: 'empty', description: '' }]), 422, '[1].description');
    expectProblem(await put([{ name: 'long', description: text(101) }]), 422, '[0].description: must be a string of 1 to 100 characters (got 101) (command "long")');
    const options = Array.from({ length: 26 }, (_, i) => ({ type: 3, name: `o${i}`, description: 'd' }));
    expectProblem(await put([{ ...ping, options }]), 422, '[0].options: must hold at most 25 options (got 26)');
    const nested = [{ ...ping, options: [{ type: 1, name: 'sub', description: 'd', options }] }];
    expectProblem(await put(nested), 422, '[0].options[0].options');
    expectProblem(await put([{ name_localizations: { fr: 'bonjour' }, description: 'd' }]), 422, /\[0\]\.name: .*English/);
    expectProblem(await put({ commands: [] }), 422, 'JSON array');
    expect(emu.admin.commands(fx.projectId)).toEqual([ping]);
    // 32 characters and an English localization instead of a base name are fine.
    expect((await put([{ name: 'a'.repeat(32), description: text(100) }, { name_localizations: { 'en-US': 'hi' }, description: 'd' }])).status).toBe(204);
  });

  it('accepts commands only for chat-platform bots', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const server = otherProject(emu, fx, 'discord', 'server');
    expectProblem(await send(emu, 'PUT', '/projects/@me/commands', server.token, [ping]), 422, 'bots');
    expectProblem(await send(emu, 'PUT', '/projects/@me/commands', server.token, []), 422, 'bots');
    expect(emu.admin.commands(server.id)).toEqual([]);
  });
});

describe('POST /projects/:project_id/announcements', () => {
  it('enforces title 3..100, content 10..2,000 and the category list', async () => {
    const emu = await startTestEmulator({ settings: { announcementCooldownSeconds: 0 } });
    const fx = setupBot(emu);
    const post = (body: unknown) => send(emu, 'POST', '/projects/@me/announcements', fx.projectToken, body);
    expectProblem(await post({ title: text(2), content: text(10) }), 422, 'title: must be a string of 3 to 100 characters (got 2)');
    expect((await post({ title: text(3), content: text(10) })).status).toBe(201);
    expect((await post({ title: text(100), content: text(2000), category: 'event' })).status).toBe(201);
    expectProblem(await post({ title: text(101), content: text(10) }), 422, 'title');
    expectProblem(await post({ title: text(3), content: text(9) }), 422, 'content');
    expectProblem(await post({ title: text(3), content: text(2001) }), 422, 'content: must be a string of 10 to 2000 characters (got 2001)');
    expectProblem(await post({ title: text(3), content: text(10), category: 'news' }), 422, 'category: must be one of announcement, event, new_feature');
    const stored = emu.admin.announcements(fx.projectId);
    expect(stored.map((a) => [a.title.length, a.content.length, a.category])).toEqual([[3, 10, 'announcement'], [100, 2000, 'event']]);
    expect(stored[0]!.author_user_id).toBeNull();
  });

  it('answers 201 with {title, content, created_at} and keeps a 4-hour cooldown on the emulator clock', async () => {
    const emu = await startTestEmulator(frozen);
    const fx = setupBot(emu);
    const post = (title: string) =>
      send(emu, 'POST', `/projects/${fx.projectId}/announcements`, fx.accessToken, { title, content: 'Something happened.', category: 'new_feature' });
    const first = await post('First news');
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ title: 'First news', content: 'Something happened.', created_at: new Date(FROZEN).toISOString() });
    const second = await post('Too soon');
    expectProblem(second, 429);
    expect(second.headers.get('retry-after')).toBe('14400');
    emu.admin.advanceClock(3600);
    const third = await post('Still too soon');
    expect(third.headers.get('retry-after')).toBe('10800');
    emu.admin.advanceClock(10_799.5);
    expect((await post('Half a second early')).headers.get('retry-after')).toBe('1');
    emu.admin.advanceClock(0.5);
    expect((await post('Now')).status).toBe(201);
    const stored = emu.admin.announcements(fx.projectId);
    expect(stored.map((a) => a.title)).toEqual(['First news', 'Now']);
    expect(stored[0]).toMatchObject({ category: 'new_feature', author_user_id: fx.ownerId });
  });
});

describe('PATCH /projects/:project_id/metrics', () => {
  it('applies a bot payload to stats and records it', async () => {
    const emu = await startTestEmulator(frozen);
    const fx = setupBot(emu);
    const patch = (body: unknown) => send(emu, 'PATCH', `/projects/${fx.projectId}/metrics`, fx.accessToken, body);
    expect((await patch({ server_count: 1200, shard_count: 2 })).status).toBe(204);
    expect((await send(emu, 'PATCH', '/projects/@me/metrics', fx.projectToken, { server_count: 1300 })).status).toBe(204);
    expect(emu.admin.getProject(fx.projectId).stats).toEqual({ server_count: 1300, shard_count: 2, shards: [] });
    expect(emu.admin.metrics(fx.projectId)).toEqual([
      { source: 'v1', applied_at: new Date(FROZEN).toISOString(), timestamp: null, metrics: { server_count: 1200, shard_count: 2 } },
      { source: 'v1', applied_at: new Date(FROZEN).toISOString(), timestamp: null, metrics: { server_count: 1300 } },
    ]);
  });

  it('refuses malformed bot payloads, naming the field', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const patch = (body: unknown) => send(emu, 'PATCH', '/projects/@me/metrics', fx.projectToken, body);
    expectProblem(await patch({}), 422, 'empty');
    expectProblem(await patch({ server_count: 5, guild_count: 5 }), 422, 'guild_count: is not a metrics field');
    expectProblem(await patch({ server_count: -1 }), 422, 'server_count: must be an integer 0 or more');
    expectProblem(await patch({ server_count: 2.5 }), 422, 'server_count');
    expectProblem(await patch({ shard_count: '2' }), 422, 'shard_count');
    expectProblem(await patch({ server_count: 2 ** 31 }), 422, 'int32');
    expectProblem(await patch({ server_count: null, shard_count: null }), 422, 'at least one of server_count, shard_count');
    expectProblem(await patch({ server_count: 5, member_count: 10 }), 422, 'member_count: is not a field of discord/bot metrics');
    expectProblem(await patch([{ server_count: 5 }]), 422, 'JSON object');
    expect(emu.admin.metrics(fx.projectId)).toEqual([]);
  });

  it('applies the chat-platform server rules', async () => {
    const emu = await startTestEmulator();
    const server = otherProject(emu, setupBot(emu), 'discord', 'server');
    const patch = (body: unknown) => send(emu, 'PATCH', '/projects/@me/metrics', server.token, body);
    expectProblem(await patch({ member_count: 10, online_count: 11 }), 422, 'online_count: must not exceed member_count');
    expectProblem(await patch({ server_count: 10 }), 422, 'server_count');
    expectProblem(await patch({ member_count: null }), 422, 'at least one of member_count, online_count');
    expect((await patch({ member_count: 10, online_count: 10 })).status).toBe(204);
    expect((await patch({ online_count: 4 })).status).toBe(204);
    expect(emu.admin.getProject(server.id).current_metrics).toEqual({ member_count: 10, online_count: 4 });
  });

  it('applies the roblox game rules', async () => {
    const emu = await startTestEmulator();
    const game = otherProject(emu, setupBot(emu), 'roblox', 'game');
    const patch = (body: unknown) => send(emu, 'PATCH', '/projects/@me/metrics', game.token, body);
    expectProblem(await patch({ player_count: null }), 422, 'player_count: is required');
    expectProblem(await patch({ players_online: 3 }), 422, 'players_online');
    expect((await patch({ player_count: 42 })).status).toBe(204);
    expect(emu.admin.getProject(game.id).current_metrics).toEqual({ player_count: 42 });
  });

  it('applies the minecraft server rules', async () => {
    const emu = await startTestEmulator();
    const mc = otherProject(emu, setupBot(emu), 'minecraft', 'game_server');
    const patch = (body: unknown) => send(emu, 'PATCH', '/projects/@me/metrics', mc.token, body);
    expectProblem(await patch({ player_count: 3 }), 422, 'player_count');
    expectProblem(await patch({ players_online: 21, players_max: 20 }), 422, 'players_online: must not exceed players_max');
    expectProblem(await patch({ uptime_seconds: -1 }), 422, 'uptime_seconds');
    expectProblem(await patch({ tick_rate: null }), 422, 'at least one of players_online');
    const full = { players_online: 20, players_max: 20, uptime_seconds: 5_000_000_000, tick_rate: 19.8, tick_duration_avg: 12.5, world_size_x: 3000, world_size_y: 256 };
    expect((await patch(full)).status).toBe(204);
    expect((await patch({ tick_rate: 20 })).status).toBe(204);
    expect(emu.admin.getProject(mc.id).current_metrics).toEqual({ ...full, tick_rate: 20 });
  });

  it('answers an injected 502 (upstream unavailable) without applying, then recovers', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const path = `/projects/${fx.projectId}/metrics`;
    expect((await emu.adminCall('/faults', { json: { path: `/api/v1${path}`, status: 502 } })).status).toBe(201);
    expectProblem(await send(emu, 'PATCH', path, fx.accessToken, { server_count: 7 }), 502);
    expect(emu.admin.metrics(fx.projectId)).toEqual([]);
    expect((await send(emu, 'PATCH', path, fx.accessToken, { server_count: 7 })).status).toBe(204);
    expect(emu.admin.getProject(fx.projectId).stats.server_count).toBe(7);
  });
});

describe('POST /projects/:project_id/metrics/batch', () => {
  it('takes 1 to 100 entries', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const batch = (data: unknown) => send(emu, 'POST', '/projects/@me/metrics/batch', fx.projectToken, { data });
    expectProblem(await batch([]), 422, 'data: must hold 1 to 100 entries (got 0)');
    expectProblem(await batch(entries(101)), 422, 'got 101');
    expectProblem(await send(emu, 'POST', '/projects/@me/metrics/batch', fx.projectToken, {}), 422, 'data');
    expect(emu.admin.metrics(fx.projectId)).toEqual([]);
    expect((await batch(entries(1))).status).toBe(204);
    expect((await batch(entries(100))).status).toBe(204);
    const applied = emu.admin.metrics(fx.projectId);
    expect(applied).toHaveLength(101);
    expect(applied.every((m) => m.source === 'v1-batch' && m.timestamp === null)).toBe(true);
    expect(emu.admin.getProject(fx.projectId).stats.server_count).toBe(99);
  });

  it('applies untimestamped entries first in request order, then timestamps ascending', async () => {
    const emu = await startTestEmulator(frozen);
    const fx = setupBot(emu);
    const ago = (s: number) => new Date(FROZEN - s * 1000).toISOString();
    const data = [
      { metrics: { server_count: 0 }, timestamp: ago(60) },
      { metrics: { server_count: 1 } },
      { metrics: { server_count: 2 }, timestamp: ago(600) },
      { metrics: { server_count: 3 } },
      { metrics: { server_count: 4 }, timestamp: ago(60) },
      // The same instant as entry 2 in another offset: the tie keeps request order.
      { metrics: { server_count: 5 }, timestamp: '2026-03-02T13:50:10+02:00' },
    ];
    expect((await send(emu, 'POST', `/projects/${fx.projectId}/metrics/batch`, fx.accessToken, { data })).status).toBe(204);
    const applied = emu.admin.metrics(fx.projectId);
    expect(applied.map((m) => m.metrics.server_count)).toEqual([1, 3, 2, 5, 0, 4]);
    expect(applied.map((m) => m.timestamp)).toEqual([null, null, ago(600), '2026-03-02T13:50:10+02:00', ago(60), ago(60)]);
    expect(emu.admin.getProject(fx.projectId).stats.server_count).toBe(4);
  });

  it('allows timestamps up to 5 minutes ahead of the emulator clock', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    // Ahead of the real clock by an hour: a route reading Date.now() would refuse both.
    emu.admin.advanceClock(3600);
    const now = Date.parse(emu.admin.now().now);
    const ahead = (s: number) => new Date(now + s * 1000).toISOString();
    const batch = (timestamp: string) =>
      send(emu, 'POST', '/projects/@me/metrics/batch', fx.projectToken, { data: [{ metrics: { server_count: 1 }, timestamp }] });
    expect((await batch(ahead(299))).status).toBe(204);
    expectProblem(await batch(ahead(301)), 422, 'data[0].timestamp: must not be more than 300 seconds in the future');
    expectProblem(await batch('last tuesday'), 422, 'data[0].timestamp: must be an ISO 8601 date-time');
    expect(emu.admin.metrics(fx.projectId).map((m) => m.timestamp)).toEqual([ahead(299)]);
  });

  it('stops at the first invalid entry in application order and keeps the earlier ones', async () => {
    const emu = await startTestEmulator(frozen);
    const fx = setupBot(emu);
    const batch = (data: unknown[]) => send(emu, 'POST', '/projects/@me/metrics/batch', fx.projectToken, { data });
    const bad = [entries(1)[0], { metrics: { server_count: 1 } }, { metrics: { server_count: -3 } }, { metrics: { server_count: 3 } }];
    expectProblem(await batch(bad), 422, 'data[2].metrics.server_count: must be an integer 0 or more');
    expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count)).toEqual([0, 1]);
    // The timestamped entry comes first in the request but would apply last: it is never reached.
    const past = new Date(FROZEN - 1000).toISOString();
    const reordered = [{ metrics: { server_count: 10 }, timestamp: past }, { metrics: { server_count: 11 } }, { metrics: { member_count: 12 } }];
    expectProblem(await batch(reordered), 422, 'data[2].metrics.member_count');
    expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count)).toEqual([0, 1, 11]);
    expect(emu.admin.getProject(fx.projectId).stats.server_count).toBe(11);
  });
});

describe('per-project write limit (metrics and commands)', () => {
  it('allows 60 writes per minute by default, then 429 with Retry-After until the window passes', async () => {
    const emu = await startTestEmulator(frozen);
    const fx = setupBot(emu);
    const patch = () => send(emu, 'PATCH', '/projects/@me/metrics', fx.projectToken, { server_count: 1 });
    for (let i = 0; i < 60; i += 1) expect((await patch()).status).toBe(204);
    const limited = await patch();
    expectProblem(limited, 429);
    // The frozen clock stands 10 s into its minute.
    expect(limited.headers.get('retry-after')).toBe('50');
    expect(emu.admin.metrics(fx.projectId)).toHaveLength(60);
    emu.admin.advanceClock(60);
    expect((await patch()).status).toBe(204);
  });

  it('counts commands, metrics and a whole batch once each, per project, and not listing edits', async () => {
    const emu = await startTestEmulator({ ...frozen, settings: { v1ProjectWritesPerMinute: 3 } });
    const fx = setupBot(emu);
    expect((await send(emu, 'PUT', '/projects/@me/commands', fx.projectToken, [])).status).toBe(204);
    expect((await send(emu, 'PATCH', '/projects/@me/metrics', fx.projectToken, { server_count: 1 })).status).toBe(204);
    const data = entries(100);
    expect((await send(emu, 'POST', '/projects/@me/metrics/batch', fx.projectToken, { data })).status).toBe(204);
    const limited = await send(emu, 'PUT', `/projects/${fx.projectId}/commands`, fx.accessToken, []);
    expectProblem(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expectProblem(await send(emu, 'POST', '/projects/@me/metrics/batch', fx.projectToken, { data }), 429);
    expect((await send(emu, 'PATCH', '/projects/@me', fx.projectToken, { headline: { en: 'Still editable' } })).status).toBe(204);
    const game = otherProject(emu, fx, 'roblox', 'game');
    expect((await send(emu, 'PATCH', '/projects/@me/metrics', game.token, { player_count: 1 })).status).toBe(204);
    emu.admin.advanceClock(60);
    expect((await send(emu, 'PATCH', '/projects/@me/metrics', fx.projectToken, { server_count: 2 })).status).toBe(204);
  });
});
