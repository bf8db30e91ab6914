import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../../src/contract/limits.js';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';

/** A Wednesday; the emulator clock stands still here unless a test advances it. */
const BASE = Date.parse('2025-01-08T10:00:00.000Z');
const DAY = 24 * 3600 * 1000;
const iso = (ms: number) => new Date(ms).toISOString();

async function start(settings: Parameters<typeof startTestEmulator>[0] = {}): Promise<TestEmulator> {
  return startTestEmulator({ now: () => BASE, ...settings });
}

function voter(emu: TestEmulator, name = 'voter') {
  return emu.admin.createUser({ username: name });
}

describe('GET /projects/:project_id/votes', () => {
  it('pages 250 votes as 100/100/50/0 in (created_at, seq) order, then shows a new vote from the same cursor', async () => {
    // Default settings on purpose: paging must not trip the 100/s per-credential limit.
    const emu = await start();
    const bot = setupBot(emu);
    const users = Array.from({ length: 10 }, (_, i) => voter(emu, `v${i}`));
    const cast: string[] = [];
    // Groups of 30 votes share a created_at, so page boundaries (100, 200) fall inside a tie.
    for (let i = 0; i < 250; i += 1) {
      const user = users[i % users.length]!;
      const createdAt = iso(BASE - 5 * 3600_000 + Math.floor(i / 30) * 60_000);
      emu.admin.castVote({ project_id: bot.projectId, user_id: user.id, created_at: createdAt });
      cast.push(`${user.id}@${createdAt}`);
    }
    const sizes: number[] = [];
    const seen: string[] = [];
    let res = await emu.v1(`/projects/${bot.projectId}/votes?startDate=${iso(BASE - DAY)}`, { bearer: bot.accessToken });
    for (;;) {
      expect(res.status).toBe(200);
      expect(typeof res.body.cursor).toBe('string');
      expect(res.body.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      sizes.push(res.body.data.length);
      for (const vote of res.body.data) seen.push(`${vote.user_id}@${vote.created_at}`);
      if (res.body.data.length === 0) break;
      res = await emu.v1(`/projects/${bot.projectId}/votes?cursor=${res.body.cursor}`, { bearer: bot.accessToken });
    }
    expect(sizes).toEqual([100, 100, 50, 0]);
    expect(seen).toEqual(cast);
    const first = (await emu.v1(`/projects/${bot.projectId}/votes?startDate=${iso(BASE - DAY)}`, { bearer: bot.accessToken }))
      .body.data[0];
    expect(Object.keys(first).sort()).toEqual(['created_at', 'expires_at', 'platform_id', 'user_id', 'weight']);
    expect(first).toMatchObject({ user_id: users[0]!.id, platform_id: users[0]!.platform_id, weight: 1 });
    expect(Date.parse(first.expires_at) - Date.parse(first.created_at)).toBe(12 * 3600_000);

    // The empty page's cursor keeps its place: a poller sees the next vote and nothing twice.
    const emptyCursor = res.body.cursor as string;
    emu.admin.advanceClock(30);
    const late = emu.admin.castVote({ project_id: bot.projectId, user_id: users[3]!.id });
    const next = await emu.v1(`/projects/${bot.projectId}/votes?cursor=${emptyCursor}`, { bearer: bot.accessToken });
    expect(next.status).toBe(200);
    expect(next.body.data).toEqual([expect.objectContaining({ user_id: users[3]!.id, created_at: late.created_at })]);
    const after = await emu.v1(`/projects/${bot.projectId}/votes?cursor=${next.body.cursor}`, { bearer: bot.accessToken });
    expect(after.body.data).toEqual([]);
  });

  it('returns votes created at or after startDate, and an empty page with a cursor for a future startDate', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const user = voter(emu);
    const times = [BASE - 3 * DAY, BASE - 2 * DAY, BASE - DAY];
    for (const t of times) emu.admin.castVote({ project_id: bot.projectId, user_id: user.id, created_at: iso(t) });
    const other = setupBot(emu);
    emu.admin.castVote({ project_id: other.projectId, user_id: user.id, created_at: iso(BASE - DAY) });

    const from = await emu.v1(`/projects/${bot.projectId}/votes?startDate=${iso(times[1]!)}`, { bearer: bot.accessToken });
    expect(from.status).toBe(200);
    expect(from.body.data.map((v: { created_at: string }) => v.created_at)).toEqual([iso(times[1]!), iso(times[2]!)]);

    // A date without a time, and an offset form of the same instant.
    const dateOnly = await emu.v1(`/projects/${bot.projectId}/votes?startDate=2025-01-06`, { bearer: bot.accessToken });
    expect(dateOnly.body.data).toHaveLength(2);
    const offset = encodeURIComponent('2025-01-06T12:00:00+02:00');
    const withOffset = await emu.v1(`/projects/${bot.projectId}/votes?startDate=${offset}`, { bearer: bot.accessToken });
    expect(withOffset.body.data.map((v: { created_at: string }) => v.created_at)).toEqual([iso(times[1]!), iso(times[2]!)]);

    const future = await emu.v1(`/projects/${bot.projectId}/votes?startDate=${iso(BASE + 60_000)}`, { bearer: bot.accessToken });
    expect(future.status).toBe(200);
    expect(future.body.data).toEqual([]);
    expect(typeof future.body.cursor).toBe('string');
    emu.admin.advanceClock(120);
    // The empty page's cursor stays at startDate: a vote before it stays out, one after it comes in.
    emu.admin.castVote({ project_id: bot.projectId, user_id: user.id, created_at: iso(BASE + 30_000) });
    emu.admin.castVote({ project_id: bot.projectId, user_id: user.id });
    const polled = await emu.v1(`/projects/${bot.projectId}/votes?cursor=${future.body.cursor}`, { bearer: bot.accessToken });
    expect(polled.body.data.map((v: { created_at: string }) => v.created_at)).toEqual([iso(BASE + 120_000)]);
  });

  it('lets the cursor take precedence over startDate', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const user = voter(emu);
    for (let i = 3; i >= 1; i -= 1) emu.admin.castVote({ project_id: bot.projectId, user_id: user.id, created_at: iso(BASE - i * DAY) });
    const page = await emu.v1(`/projects/${bot.projectId}/votes?startDate=${iso(BASE - 2 * DAY)}`, { bearer: bot.accessToken });
    expect(page.body.data).toHaveLength(2);
    const { cursor } = page.body;
    // An earlier startDate would return all three votes; the cursor wins.
    const both = await emu.v1(`/projects/${bot.projectId}/votes?cursor=${cursor}&startDate=${iso(BASE - 3 * DAY)}`, {
      bearer: bot.accessToken,
    });
    expect(both.status).toBe(200);
    expect(both.body.data).toEqual([]);
    // startDate is ignored entirely, even when it would be refused.
    const bad = await emu.v1(`/projects/${bot.projectId}/votes?startDate=garbage&cursor=${cursor}`, { bearer: bot.accessToken });
    expect(bad.status).toBe(200);
  });

  it('answers 400 for neither parameter, a forged or tampered cursor, a cursor of another project, and a bad startDate', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const other = setupBot(emu);
    const get = (query: string, token = bot.accessToken, project = bot.projectId) =>
      emu.v1(`/projects/${project}/votes${query}`, { bearer: token });

    const neither = await get('');
    expect(neither.status).toBe(400);
    expect(neither.headers.get('content-type')).toContain('application/problem+json');
    expect(neither.body).toMatchObject({ status: 400, title: 'Bad Request' });

    const good = (await get(`?startDate=${iso(BASE - DAY)}`)).body.cursor as string;
    const middle = Math.floor(good.length / 2);
    const tampered = `${good.slice(0, middle)}${good[middle] === 'A' ? 'B' : 'A'}${good.slice(middle + 1)}`;
    for (const cursor of ['abc', 'not-a-cursor', tampered, '']) {
      const res = await get(`?cursor=${cursor}`);
      expect(res.status, cursor).toBe(400);
      expect(res.body.detail).toContain('cursor');
    }
    // A cursor from another emulator (another signing key) was not issued by this one.
    const elsewhere = await start();
    const foreign = setupBot(elsewhere);
    const foreignCursor = (await elsewhere.v1(`/projects/${foreign.projectId}/votes?startDate=${iso(BASE - DAY)}`, {
      bearer: foreign.accessToken,
    })).body.cursor as string;
    expect((await get(`?cursor=${foreignCursor}`)).status).toBe(400);

    const otherProject = await get(`?cursor=${good}`, other.accessToken, other.projectId);
    expect(otherProject.status).toBe(400);
    expect(otherProject.body.detail).toContain('another project');

    expect((await get('?startDate=yesterday')).status).toBe(400);
    expect((await get('?startDate=2025-13-01')).status).toBe(400);
    const tooOld = await get(`?startDate=${iso(BASE - 366 * DAY)}`);
    expect(tooOld.status).toBe(400);
    expect(tooOld.body.detail).toContain('one year');
    expect((await get(`?startDate=${iso(BASE - 364 * DAY)}`)).status).toBe(200);
  });

  it('judges startDate age on the emulator clock', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const startDate = iso(BASE - 300 * DAY);
    // The project token: an OAuth access token would expire over these 66 days.
    expect((await emu.v1(`/projects/@me/votes?startDate=${startDate}`, { bearer: bot.projectToken })).status).toBe(200);
    emu.admin.advanceClock(66 * 24 * 3600);
    const res = await emu.v1(`/projects/@me/votes?startDate=${startDate}`, { bearer: bot.projectToken });
    expect(res.status).toBe(400);
  });

  it('expires cursors when a lifetime is configured', async () => {
    const emu = await start({ settings: { cursorTtlSeconds: 60 } });
    const bot = setupBot(emu);
    const { cursor } = (await emu.v1(`/projects/${bot.projectId}/votes?startDate=${iso(BASE - DAY)}`, { bearer: bot.accessToken })).body;
    expect((await emu.v1(`/projects/${bot.projectId}/votes?cursor=${cursor}`, { bearer: bot.accessToken })).status).toBe(200);
    emu.admin.advanceClock(61);
    const expired = await emu.v1(`/projects/${bot.projectId}/votes?cursor=${cursor}`, { bearer: bot.accessToken });
    expect(expired.status).toBe(400);
    expect(expired.body.detail).toContain('expired');
  });

  it('weighs bot votes 2 from Friday to Sunday and 1 otherwise; server votes always 1', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const user = voter(emu);
    const days = { tuesday: '2025-01-07T12:00:00.000Z', friday: '2025-01-03T00:00:00.000Z', saturday: '2025-01-04T12:00:00.000Z', sunday: '2025-01-05T23:59:00.000Z', thursday: '2025-01-02T23:59:59.000Z' };
    for (const at of Object.values(days)) emu.admin.castVote({ project_id: bot.projectId, user_id: user.id, created_at: at });
    const res = await emu.v1(`/projects/${bot.projectId}/votes?startDate=2025-01-01`, { bearer: bot.accessToken });
    const weightAt = (at: string) => res.body.data.find((v: { created_at: string }) => v.created_at === at)?.weight;
    expect(weightAt(days.saturday)).toBe(2);
    expect(weightAt(days.friday)).toBe(2);
    expect(weightAt(days.sunday)).toBe(2);
    expect(weightAt(days.tuesday)).toBe(1);
    expect(weightAt(days.thursday)).toBe(1);

    // A server through its project token and @me.
    const server = emu.admin.createProject({ platform: 'discord', type: 'server', owner_user_id: bot.ownerId });
    emu.admin.castVote({ project_id: server.project.id, user_id: user.id, created_at: days.saturday });
    const serverVotes = await emu.v1('/projects/@me/votes?startDate=2025-01-01', { bearer: server.project_token });
    expect(serverVotes.status).toBe(200);
    expect(serverVotes.body.data).toEqual([expect.objectContaining({ created_at: days.saturday, weight: 1 })]);
  });

  it('needs project.votes.read', async () => {
    const emu = await start();
    const bot = setupBot(emu, { scopes: SCOPES.filter((s) => s !== 'project.votes.read') });
    const user = voter(emu);
    expect((await emu.v1(`/projects/${bot.projectId}/votes?startDate=${iso(BASE - DAY)}`, { bearer: bot.accessToken })).status).toBe(403);
    expect((await emu.v1(`/projects/${bot.projectId}/votes/${user.id}`, { bearer: bot.accessToken })).status).toBe(403);
    expect((await emu.v1(`/projects/${bot.projectId}/votes?startDate=${iso(BASE - DAY)}`)).status).toBe(401);
  });
});

describe('GET /projects/:project_id/votes/:user_id', () => {
  it('answers the active vote by service ID and by Discord ID, then 404 once it expired', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const user = voter(emu);
    // An older, expired vote and one on another project must not be picked.
    emu.admin.castVote({ project_id: bot.projectId, user_id: user.id, created_at: iso(BASE - 2 * DAY) });
    const vote = emu.admin.castVote({ project_id: bot.projectId, user_id: user.id, created_at: iso(BASE - 3600_000) });
    const other = setupBot(emu);
    emu.admin.castVote({ project_id: other.projectId, user_id: user.id, created_at: iso(BASE - 60_000) });
    const expected = { created_at: vote.created_at, expires_at: vote.expires_at, weight: 1 };
    const status = (id: string, query = '') => emu.v1(`/projects/${bot.projectId}/votes/${id}${query}`, { bearer: bot.accessToken });

    const byDefault = await status(user.id);
    expect(byDefault.status).toBe(200);
    expect(byDefault.body).toEqual(expected);
    expect((await status(user.id, '?source=topgg')).body).toEqual(expected);
    expect((await status(user.platform_id, '?source=discord')).body).toEqual(expected);
    // Namespaces do not mix.
    expect((await status(user.platform_id)).status).toBe(404);
    expect((await status(user.id, '?source=discord')).status).toBe(404);

    emu.admin.advanceClock(10 * 3600);
    expect((await status(user.id)).status).toBe(200);
    // now reaches expires_at (created 1 h before BASE + 12 h).
    emu.admin.advanceClock(3600);
    const expired = await status(user.id);
    expect(expired.status).toBe(404);
    expect(expired.headers.get('content-type')).toContain('application/problem+json');
  });

  it('answers 404 when the vote expires exactly 12 hours after a vote cast now', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const user = voter(emu);
    emu.admin.castVote({ project_id: bot.projectId, user_id: user.id });
    expect((await emu.v1(`/projects/${bot.projectId}/votes/${user.id}`, { bearer: bot.accessToken })).status).toBe(200);
    emu.admin.advanceClock(12 * 3600);
    expect((await emu.v1(`/projects/${bot.projectId}/votes/${user.id}`, { bearer: bot.accessToken })).status).toBe(404);
  });

  it('answers 404 for an unknown user or one who never voted, and 400 for a bad source', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const user = voter(emu);
    const get = (path: string) => emu.v1(`/projects/${bot.projectId}/votes/${path}`, { bearer: bot.accessToken });
    expect((await get('1234567890123456789')).status).toBe(404);
    expect((await get(user.id)).status).toBe(404);
    const bad = await get(`${user.id}?source=service`);
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('topgg');
    expect((await get(`${user.id}?source=`)).status).toBe(400);
    expect((await get(`${user.id}?source=DISCORD`)).status).toBe(400);
  });

  it('works with a project token on @me', async () => {
    const emu = await start();
    const bot = setupBot(emu);
    const user = voter(emu);
    emu.admin.castVote({ project_id: bot.projectId, user_id: user.id, created_at: '2025-01-04T12:00:00Z' });
    const res = await emu.v1(`/projects/@me/votes/${user.platform_id}?source=discord`, { bearer: bot.projectToken });
    // That Saturday vote expired long ago.
    expect(res.status).toBe(404);
    emu.admin.castVote({ project_id: bot.projectId, user_id: user.id });
    // A vote dated in the future (admin API) is not cast yet, so it does not hide the active one.
    emu.admin.castVote({ project_id: bot.projectId, user_id: user.id, created_at: iso(BASE + 3600_000) });
    const active = await emu.v1(`/projects/@me/votes/${user.platform_id}?source=discord`, { bearer: bot.projectToken });
    expect(active.status).toBe(200);
    expect(active.body.created_at).toBe(iso(BASE));
  });
});
