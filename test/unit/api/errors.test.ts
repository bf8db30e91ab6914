import { describe, expect, it } from 'vitest';
import {
  ApiError,
  BadRequestError,
  ConflictError,
  createApiError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
  UnexpectedStatusError,
  UnprocessableEntityError,
  type ApiErrorInit,
} from '../../../src/api/errors.js';
import { ListingAgentError } from '../../../src/errors.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJpZCI6IjEyMyJ9.c2lnbmF0dXJl';
const base: ApiErrorInit = { status: 0, method: 'GET', url: 'https://top.gg/api/v1/projects/@me', family: 'v1', attempts: 1 };

describe('createApiError', () => {
  const table = [
    [400, BadRequestError, 'api_bad_request'],
    [401, UnauthorizedError, 'api_unauthorized'],
    [403, ForbiddenError, 'api_forbidden'],
    [404, NotFoundError, 'api_not_found'],
    [409, ConflictError, 'api_conflict'],
    [422, UnprocessableEntityError, 'api_unprocessable'],
    [429, RateLimitError, 'api_rate_limited'],
    [500, ServerError, 'api_server'],
    [502, ServerError, 'api_server'],
    [503, ServerError, 'api_server'],
    [504, ServerError, 'api_server'],
    [418, UnexpectedStatusError, 'api_unexpected_status'],
    [302, UnexpectedStatusError, 'api_unexpected_status'],
  ] as const;

  it.each(table)('maps %i to its class and code', (status, Class, code) => {
    const error = createApiError({ ...base, status });
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(ListingAgentError);
    expect(error.code).toBe(code);
    expect(error.name).toBe(Class.name);
    expect(error.status).toBe(status);
    expect(error.method).toBe('GET');
    expect(error.url).toBe(base.url);
    expect(error.message).toContain(`GET ${base.url} failed with ${status}`);
  });

  it('carries the problem+json and shows its detail before the hint', () => {
    const problem = { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'invalid token' };
    const error = createApiError({ ...base, status: 401, problem });
    expect(error.problem).toEqual(problem);
    expect(error.message).toBe(
      `GET ${base.url} failed with 401: invalid token. v1 needs \`Authorization: Bearer <token>\`; an expired access token needs a refresh, a revoked one a new authorization.`,
    );
  });

  it('teaches the fix per family', () => {
    expect(createApiError({ ...base, status: 401, family: 'v0', error: 'Unauthorized' }).message).toMatch(/raw project token in `Authorization`, without `Bearer `/);
    expect(createApiError({ ...base, status: 401, family: 'oauth', error: 'invalid_client' }).message).toMatch(/client ID or client secret/);
    expect(createApiError({ ...base, status: 400, family: 'oauth', error: 'invalid_grant' }).message).toMatch(/start the authorization again/);
    expect(createApiError({ ...base, status: 403 }).message).toMatch(/a project token works only on `@me` paths/);
    expect(createApiError({ ...base, status: 400 }).message).toMatch(/used on `@me` paths/);
  });

  it('carries v0 {error} and OAuth {error, error_description}', () => {
    const v0 = createApiError({ ...base, family: 'v0', status: 404, error: 'Not found' });
    expect(v0.error).toBe('Not found');
    expect(v0.problem).toBeUndefined();
    expect(v0.message).toContain('failed with 404: Not found.');
    const oauth = createApiError({ ...base, family: 'oauth', status: 400, error: 'invalid_grant', errorDescription: 'the code was used' });
    expect(oauth.error).toBe('invalid_grant');
    expect(oauth.errorDescription).toBe('the code was used');
    expect(oauth.message).toContain(': the code was used.');
  });

  it('falls back from an empty problem detail to the other fields', () => {
    const error = createApiError({ ...base, status: 409, problem: { type: 'about:blank', title: 'Conflict', status: 409, detail: '' }, error: 'x-limit' });
    expect(error.message).toContain('failed with 409: x-limit.');
  });

  it('counts attempts in the message', () => {
    const error = createApiError({ ...base, status: 503, attempts: 4 });
    expect(error.attempts).toBe(4);
    expect(error.message).toContain('failed with 503 after 4 attempts');
  });

  it('gives a RateLimitError the wait', () => {
    const error = createApiError({ ...base, status: 429, retryAfterMs: 3_600_000 }) as RateLimitError;
    expect(error.retryAfterMs).toBe(3_600_000);
    expect(error.message).toContain('Wait 3600 s before trying again.');
    expect((createApiError({ ...base, status: 429 }) as RateLimitError).retryAfterMs).toBeUndefined();
  });

  it('never shows a secret, even when the caller passes one in', () => {
    const error = createApiError({
      ...base,
      status: 401,
      url: `https://top.gg/api/bots/${TOKEN}/stats?token=${TOKEN}&code=abcd`,
      problem: { type: 'about:blank', title: `bad ${TOKEN}`, status: 401, detail: `token ${TOKEN} is invalid` },
      error: `e ${TOKEN}`,
      errorDescription: `d ${TOKEN}`,
      secrets: [TOKEN],
    });
    for (const shown of [error.message, error.url, error.problem?.detail, error.problem?.title, error.error, error.errorDescription, String(error.stack)]) {
      expect(shown).not.toContain(TOKEN);
    }
    expect(error.message).toContain('token [redacted] is invalid');
    expect(error.url).not.toContain('abcd');
    expect(error.message).toMatch(/v1 needs `Authorization: Bearer <token>`/);
  });
});

describe('NetworkError and TimeoutError', () => {
  it('say what happened, carry the cause and stay in the family', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const network = new NetworkError('POST', 'https://top.gg/api/v1/x', 2, cause);
    expect(network).toBeInstanceOf(ListingAgentError);
    expect(network.code).toBe('network');
    expect(network.cause).toBe(cause);
    expect(network.attempts).toBe(2);
    expect(network.message).toBe('POST https://top.gg/api/v1/x got no answer after 2 attempts (ECONNREFUSED). Check the base URL and the network.');
    const timeout = new TimeoutError('GET', 'https://top.gg/api/v1/x', 50, 1, cause);
    expect(timeout.code).toBe('timeout');
    expect(timeout.timeoutMs).toBe(50);
    expect(timeout.cause).toBe(cause);
    expect(timeout.message).toBe('GET https://top.gg/api/v1/x got no answer within 50 ms. Raise timeoutMs or check the service.');
  });

  it('keep secrets out of the URL and the reason', () => {
    const url = `https://top.gg/api/bots/${TOKEN}?token=${TOKEN}`;
    const network = new NetworkError('GET', url, 1, new Error(`socket closed while sending ${TOKEN}`), [TOKEN]);
    expect(network.message).not.toContain(TOKEN);
    expect(network.url).not.toContain(TOKEN);
    expect(network.message).toContain('socket closed while sending [redacted]');
    const timeout = new TimeoutError('GET', url, 50, 1, undefined, [TOKEN]);
    expect(timeout.message).not.toContain(TOKEN);
    expect(timeout.url).not.toContain(TOKEN);
  });
});
