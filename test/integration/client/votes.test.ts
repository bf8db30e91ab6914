import { describe, expect, it } from 'vitest';
import { BadRequestError, CredentialError, ForbiddenError, UnauthorizedError } from '../../../src/api/errors.js';
import type { VotesPage } from '../../../src/api/schemas/votes.js';
import { ValidationError } from '../../../src/errors.js';
import { collect, setupClientTest, v1Requests } from '../../helpers/client.js';
import { setupBot } from '../../helpers/emulator.js';

const setup = setupClientTest;



const HOUR = 3600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

describe('votes.pages and votes.iterate', () => {
  it('iterates 250 votes in order over 100/100/50 pages and yields the final empty page with its cursor', async () => {
    const { clock, emu, fx, client } = await setup();
    const voters = Array.from({ length: 7 }, (_, i) => emu.admin.createUser({ username: `v${i}` }));
    const cast: string[] = [];
    for (let i = 0; i < 250; i += 1) {
      const user = voters[i % voters.length]!;
      const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: user.id, created_at: iso(clock.now() - 10 * HOUR + i * 1000) });
      cast.push(`${vote.user_id}@${vote.created_at}`);
    }
    const api = client({ projectToken: fx.projectToken }).votes;
    const votes = await collect(api.iterate({ startDate: new Date(clock.now() - DAY) }));
    expect(votes.map((v) => `${v.user_id}@${v.created_at}`)).toEqual(cast);
    expect(votes[0]).toEqual({
      user_id: voters[0]!.id,
      platform_id: voters[0]!.platform_id,
      weight: 1,
      created_at: iso(clock.now() - 10 * HOUR),
      expires_at: iso(clock.now() - 10 * HOUR + 12 * HOUR),
    });

    const pages: VotesPage[] = await collect(api.pages({ startDate: iso(clock.now() - DAY) }));
    expect(pages.map((p) => p.data.length)).toEqual([100, 100, 50, 0]);
    const queries = v1Requests(emu).slice(4).map((r) => r.query);
    expect(queries[0]).toBe(`?startDate=${encodeURIComponent(iso(clock.now() - DAY))}`);
    expect(queries.slice(1).every((q) => q.startsWith('?cursor='))).toBe(true);

    // The empty page's cursor resumes where the listing stopped: only the new vote comes.
    clock.advance(60_000);
    const late = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[2]!.id });
    const resumed = await collect(api.iterate({ cursor: pages.at(-1)!.cursor, startDate: 'ignored when a cursor is given' }));
    expect(resumed.map((v) => v.created_at)).toEqual([late.created_at]);
  });

  it('works with OAuth (explicit and default ID) and an application token', async () => {
    const { clock, emu, fx, client } = await setup();
    const voter = emu.admin.createUser({ username: 'voter' });
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id, created_at: iso(clock.now() - HOUR) });
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    const from = { startDate: new Date(clock.now() - DAY) };
    const lists = [
      await collect(client({ accessToken: fx.accessToken }).votes.iterate(from, fx.projectId)),
      await collect(client({ accessToken: fx.accessToken, projectId: fx.projectId }).votes.iterate(from)),
      await collect(client({ applicationToken: application_token }).votes.iterate(from, fx.projectId)),
    ];
    for (const votes of lists) expect(votes.map((v) => v.user_id)).toEqual([voter.id]);
    expect(new Set(v1Requests(emu).map((r) => `${r.path} ${r.credential}`))).toEqual(
      new Set([`/api/v1/projects/${fx.projectId}/votes oauth`, `/api/v1/projects/${fx.projectId}/votes application`]),
    );
  });

  it('refuses locally, without a request: neither cursor nor startDate, a startDate over a year old, an unreadable date', async () => {
    const { clock, emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).votes;
    for (const from of [{}, { startDate: new Date(clock.now() - 366 * DAY) }, { startDate: 'last week' }]) {
      const error = await collect(api.pages(from)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).subject).toBe('request');
    }
    await expect(collect(api.iterate({ startDate: new Date(clock.now() - 366 * DAY) }))).rejects.toThrow(/one year/);
    await expect(collect(api.iterate({ startDate: new Date(clock.now() - DAY) }, fx.projectId))).rejects.toBeInstanceOf(CredentialError);
    expect(v1Requests(emu)).toEqual([]);
    // Just inside the year is sent.
    await expect(collect(api.iterate({ startDate: new Date(clock.now() - 364 * DAY) }))).resolves.toEqual([]);
  });

  it('raises 400 BadRequestError for a cursor the service did not issue, 403 without project.votes.read, 401 when revoked', async () => {
    const { clock, emu, fx, client } = await setup(['project.information.read']);
    await expect(collect(client({ projectToken: fx.projectToken }).votes.pages({ cursor: 'bm90LWEtY3Vyc29y' })))
      .rejects.toSatisfy((e) => e instanceof BadRequestError && e.status === 400);
    const api = client({ accessToken: fx.accessToken }).votes;
    await expect(collect(api.pages({ startDate: new Date(clock.now() - DAY) }, fx.projectId)))
      .rejects.toSatisfy((e) => e instanceof ForbiddenError && e.status === 403);
    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    await expect(collect(api.pages({ startDate: new Date(clock.now() - DAY) }, fx.projectId)))
      .rejects.toSatisfy((e) => e instanceof UnauthorizedError && e.status === 401);
  });
});

describe('votes.status', () => {
  it('answers the active vote by service ID (no source in the query) and by platform ID (source=discord)', async () => {
    const { clock, emu, fx, client } = await setup();
    const voter = emu.admin.createUser({ username: 'voter' });
    const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id, created_at: iso(clock.now() - HOUR) });
    const expected = { created_at: vote.created_at, expires_at: vote.expires_at, weight: 1 };
    const api = client({ projectToken: fx.projectToken }).votes;
    expect(await api.status(voter.id)).toEqual(expected);
    expect(await api.status(voter.id, { source: 'topgg' })).toEqual(expected);
    expect(await api.status(voter.platform_id, { source: 'discord' })).toEqual(expected);
    expect(v1Requests(emu).map((r) => [r.path, r.query])).toEqual([
      [`/api/v1/projects/@me/votes/${voter.id}`, ''],
      [`/api/v1/projects/@me/votes/${voter.id}`, ''],
      [`/api/v1/projects/@me/votes/${voter.platform_id}`, '?source=discord'],
    ]);
  });

  it('answers null on 404: never voted, unknown user, expired vote', async () => {
    const { clock, emu, fx, client } = await setup();
    const voter = emu.admin.createUser({ username: 'voter' });
    const api = client({ accessToken: fx.accessToken, projectId: fx.projectId }).votes;
    expect(await api.status(voter.id)).toBeNull();
    expect(await api.status('12345678901234567890', { source: 'discord' })).toBeNull();
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    expect(await api.status(voter.id)).not.toBeNull();
    clock.advance(12 * HOUR);
    expect(await api.status(voter.id)).toBeNull();
    // Documented: the contract gives a project not granted the same 404, so it reads as null too.
    expect(await api.status(voter.id, {}, setupBot(emu).projectId)).toBeNull();
    expect(v1Requests(emu).map((r) => r.status)).toEqual([404, 404, 200, 404, 404]);
  });

  it('works with an application token and OAuth with an explicit ID; raises 403 without the scope, 401 when revoked', async () => {
    const { emu, fx, client } = await setup(['project.information.read']);
    const full = setupBot(emu);
    const voter = emu.admin.createUser({ username: 'voter' });
    emu.admin.castVote({ project_id: full.projectId, user_id: voter.id });
    const { application_token } = emu.admin.rotateApplicationToken(full.clientId);
    expect(await client({ applicationToken: application_token }).votes.status(voter.id, {}, full.projectId)).toMatchObject({ weight: 1 });
    expect(await client({ accessToken: full.accessToken }).votes.status(voter.id, {}, full.projectId)).toMatchObject({ weight: 1 });

    const api = client({ accessToken: fx.accessToken }).votes;
    await expect(api.status(voter.id, {}, fx.projectId)).rejects.toSatisfy((e) => e instanceof ForbiddenError && e.status === 403);
    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    await expect(api.status(voter.id, {}, fx.projectId)).rejects.toSatisfy((e) => e instanceof UnauthorizedError && e.status === 401);
  });

  it('refuses locally an empty user ID, an unknown source and a project token with an explicit ID', async () => {
    const { emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).votes;
    await expect(api.status('')).rejects.toBeInstanceOf(ValidationError);
    await expect(api.status('1', { source: 'roblox' as never })).rejects.toThrow(/source/);
    await expect(api.status('1', {}, fx.projectId)).rejects.toBeInstanceOf(CredentialError);
    expect(v1Requests(emu)).toEqual([]);
  });
});
