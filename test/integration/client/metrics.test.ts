import { describe, expect, it } from 'vitest';
import {
  CredentialError,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
  UnprocessableEntityError,
} from '../../../src/api/errors.js';
import { ValidationError } from '../../../src/errors.js';
import { setupClientTest, v1Requests } from '../../helpers/client.js';
import { setupBot } from '../../helpers/emulator.js';

const setup = setupClientTest;


async function requestError(promise: Promise<unknown>): Promise<ValidationError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).subject).toBe('request');
  return error as ValidationError;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('metrics.update', () => {
  it('posts the metrics with each credential', async () => {
    const { emu, fx, client } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    await client({ projectToken: fx.projectToken }).metrics.update({ server_count: 10, shard_count: 1 });
    await client({ accessToken: fx.accessToken }).metrics.update({ server_count: 11 }, fx.projectId);
    await client({ accessToken: fx.accessToken, projectId: fx.projectId }).metrics.update({ server_count: 12 });
    await client({ applicationToken: application_token }).metrics.update({ server_count: 13, shard_count: null }, fx.projectId);
    expect(emu.admin.metrics(fx.projectId).map((m) => [m.source, m.metrics])).toEqual([
      ['v1', { server_count: 10, shard_count: 1 }],
      ['v1', { server_count: 11 }],
      ['v1', { server_count: 12 }],
      ['v1', { server_count: 13, shard_count: null }],
    ]);
    expect(v1Requests(emu).map((r) => [r.method, r.status])).toEqual(Array(4).fill(['PATCH', 204]));
  });

  it('refuses locally what is wrong on every platform, and sends nothing', async () => {
    const { emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).metrics;
    expect((await requestError(api.update({ server_count: -1 }))).issues.map((i) => i.path)).toEqual(['server_count']);
    expect((await requestError(api.update({ server_count: 1.5 }))).issues.map((i) => i.path)).toEqual(['server_count']);
    expect((await requestError(api.update({ servers: 3 } as never))).issues.map((i) => i.path)).toContain('servers');
    expect((await requestError(api.update({}))).issues.map((i) => i.path)).toEqual(['']);
    expect((await requestError(api.update({ server_count: null }))).issues.map((i) => i.path)).toEqual(['']);
    expect((await requestError(api.update({ players_online: 30, players_max: 20 }))).issues.map((i) => i.path))
      .toEqual(['players_online']);
    expect(v1Requests(emu)).toEqual([]);
  });

  it('leaves the per-platform rule to the service (422) unless the kind is given', async () => {
    const { emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).metrics;
    const local = await requestError(api.update({ member_count: 5 }, undefined, { kind: 'discord/bot' }));
    expect(local.issues.map((i) => i.path)).toContain('member_count');
    expect(v1Requests(emu)).toEqual([]);
    const error = await api.update({ member_count: 5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).status).toBe(422);
    expect(v1Requests(emu).map((r) => r.status)).toEqual([422]);
    await api.update({ server_count: 5 }, undefined, { kind: 'discord/bot' });
  });

  it('retries a 502 (upstream metrics service unavailable): the call is idempotent', async () => {
    const { emu, fx, client } = await setup();
    emu.admin.injectFault({ path: '/api/v1/projects/@me/metrics', status: 502, count: 2 });
    await client({ projectToken: fx.projectToken }).metrics.update({ server_count: 7 });
    expect(v1Requests(emu).map((r) => r.status)).toEqual([502, 502, 204]);
    expect(emu.admin.metrics(fx.projectId)).toHaveLength(1);
  });

  it('raises 403 without project.metrics.write, 404 for another project, 401 when revoked; refuses @me misuse locally', async () => {
    const { emu, fx, client } = await setup(['project.votes.read']);
    const api = client({ accessToken: fx.accessToken }).metrics;
    await expect(api.update({ server_count: 1 }, fx.projectId)).rejects.toSatisfy((e) => e instanceof ForbiddenError && e.status === 403);
    const other = setupBot(emu);
    await expect(api.update({ server_count: 1 }, other.projectId)).rejects.toSatisfy((e) => e instanceof NotFoundError && e.status === 404);
    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    await expect(api.batch([{ metrics: { server_count: 1 } }], fx.projectId))
      .rejects.toSatisfy((e) => e instanceof UnauthorizedError && e.status === 401);
    await expect(client({ projectToken: fx.projectToken }).metrics.batch([{ metrics: { server_count: 1 } }], fx.projectId))
      .rejects.toBeInstanceOf(CredentialError);
    expect(v1Requests(emu)).toHaveLength(3);
  });
});

describe('metrics.batch', () => {
  it('sends Date timestamps as ISO strings; the service applies untimed entries first, then by timestamp', async () => {
    const { clock, emu, fx, client } = await setup();
    const now = clock.now();
    await client({ projectToken: fx.projectToken }).metrics.batch([
      { metrics: { server_count: 3 }, timestamp: new Date(now - 60_000) },
      { metrics: { server_count: 1 }, timestamp: iso(now - 3_600_000) },
      { metrics: { server_count: 9 } },
      // Four minutes ahead is within the five the contract allows.
      { metrics: { server_count: 4 }, timestamp: new Date(now + 4 * 60_000) },
    ]);
    expect(emu.admin.metrics(fx.projectId).map((m) => [m.source, m.timestamp, m.metrics.server_count])).toEqual([
      ['v1-batch', null, 9],
      ['v1-batch', iso(now - 3_600_000), 1],
      ['v1-batch', iso(now - 60_000), 3],
      ['v1-batch', iso(now + 4 * 60_000), 4],
    ]);
  });

  it('works with OAuth (explicit and default ID) and an application token', async () => {
    const { emu, fx, client } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    await client({ accessToken: fx.accessToken }).metrics.batch([{ metrics: { server_count: 1 } }], fx.projectId);
    await client({ accessToken: fx.accessToken, projectId: fx.projectId }).metrics.batch([{ metrics: { server_count: 2 } }]);
    await client({ applicationToken: application_token }).metrics.batch([{ metrics: { server_count: 3 } }], fx.projectId);
    expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count)).toEqual([1, 2, 3]);
    expect(v1Requests(emu).map((r) => [r.method, r.path, r.status])).toEqual(
      Array(3).fill(['POST', `/api/v1/projects/${fx.projectId}/metrics/batch`, 204]),
    );
  });

  it('refuses locally timestamps more than 5 minutes ahead of the client clock, bad sizes and bad entries', async () => {
    const { clock, emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).metrics;
    const ahead = await requestError(api.batch([
      { metrics: { server_count: 1 } },
      { metrics: { server_count: 2 }, timestamp: new Date(clock.now() + 6 * 60_000) },
    ]));
    expect(ahead.issues).toEqual([{ path: 'data[1].timestamp', message: expect.stringMatching(/5 minutes|300 seconds/) }]);
    expect((await requestError(api.batch([]))).issues.map((i) => i.path)).toEqual(['data']);
    const many = Array.from({ length: 101 }, () => ({ metrics: { server_count: 1 } }));
    expect((await requestError(api.batch(many))).issues.map((i) => i.path)).toEqual(['data']);
    expect((await requestError(api.batch([{ metrics: { server_count: -4 } }]))).issues.map((i) => i.path))
      .toEqual(['data[0].metrics.server_count']);
    expect((await requestError(api.batch([{ metrics: { server_count: 1 }, timestamp: 'yesterday' }]))).issues.map((i) => i.path))
      .toEqual(['data[0].timestamp']);
    expect((await requestError(api.batch([{ metrics: { server_count: 1 }, timestamp: new Date(Number.NaN) }]))).issues.map((i) => i.path))
      .toEqual(['data[0].timestamp']);
    expect(v1Requests(emu)).toEqual([]);
    // With the kind known, the per-platform rule is checked before sending too.
    const kind = await requestError(api.batch([{ metrics: { player_count: 4 } }], undefined, { kind: 'discord/bot' }));
    expect(kind.issues.map((i) => i.path)).toContain('data[0].metrics.player_count');
    expect(v1Requests(emu)).toEqual([]);
  });

  it('is idempotent: a 502 is retried', async () => {
    const { emu, fx, client } = await setup();
    emu.admin.injectFault({ path: '/api/v1/projects/@me/metrics/batch', status: 502 });
    await client({ projectToken: fx.projectToken }).metrics.batch([{ metrics: { server_count: 5 } }]);
    expect(v1Requests(emu).map((r) => r.status)).toEqual([502, 204]);
  });
});
