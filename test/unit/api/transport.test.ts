import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import {
  NetworkError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
  BadRequestError,
  NotFoundError,
} from '../../../src/api/errors.js';
import {
  createTransport,
  DEFAULT_USER_AGENT,
  type RetryEvent,
  type TransportClock,
  type TransportOptions,
  type TransportRequest,
} from '../../../src/api/transport.js';
import { createFakeClock } from '../../helpers/client.js';
import { rejection } from '../../helpers/rejection.js';

const ORIGIN = 'https://listing.test';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJpZCI6IjEyMyJ9.c2lnbmF0dXJl';
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const agents: MockAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

/** A transport over a MockAgent that refuses real connections, with a fake clock and `random: () => 0.5`. */
function setup(options: TransportOptions = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  const clock = createFakeClock();
  const events: RetryEvent[] = [];
  const transport = createTransport({ dispatcher: agent, clock, random: () => 0.5, onRetry: (event) => events.push(event), ...options });
  return { pool: agent.get(ORIGIN), clock, events, transport };
}

const get = (path: string, extra: Partial<TransportRequest> = {}): TransportRequest => ({
  family: 'v1',
  method: 'GET',
  url: ORIGIN + path,
  headers: { authorization: `Bearer ${TOKEN}` },
  idempotent: true,
  secrets: [TOKEN],
  ...extra,
});
const post = (path: string, extra: Partial<TransportRequest> = {}): TransportRequest =>
  get(path, { method: 'POST', json: { title: 'hi' }, idempotent: false, ...extra });

const JSON_HEADERS = { 'content-type': 'application/json' };
const PROBLEM_HEADERS = { 'content-type': 'application/problem+json' };
const problem = (status: number, detail: string) => ({ type: 'about:blank', title: 'Error', status, detail });

/** An error like the ones node:net gives for a refused connection. */
function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED', errno: -111, syscall: 'connect' });
}

describe('transport: 429', () => {
  it('waits Retry-After seconds, then succeeds', async () => {
    const { pool, clock, transport, events } = setup();
    pool.intercept({ path: '/projects/@me', method: 'GET' }).reply(429, problem(429, 'slow down'), { headers: { ...PROBLEM_HEADERS, 'retry-after': '3' } });
    pool.intercept({ path: '/projects/@me', method: 'GET' }).reply(200, { id: '1' }, { headers: JSON_HEADERS });
    const res = await transport.send(get('/projects/@me'));
    expect(res).toMatchObject({ status: 200, body: { id: '1' } });
    expect(clock.sleeps).toEqual([3000]);
    expect(events).toEqual([{ method: 'GET', url: `${ORIGIN}/projects/@me`, attempt: 1, delayMs: 3000, reason: '429' }]);
  });

  it('retries a 429 also for a call that is not idempotent (the service did not process it)', async () => {
    const { pool, clock, transport } = setup();
    pool.intercept({ path: '/announcements', method: 'POST' }).reply(429, '', { headers: { 'retry-after': '1' } });
    pool.intercept({ path: '/announcements', method: 'POST' }).reply(201, { title: 'hi' }, { headers: JSON_HEADERS });
    expect((await transport.send(post('/announcements'))).status).toBe(201);
    expect(clock.sleeps).toEqual([1000]);
  });

  it('reads v0\'s body {"retry-after": s} when there is no header', async () => {
    const { pool, clock, transport } = setup();
    pool.intercept({ path: '/bots/1/stats', method: 'GET' }).reply(429, { 'retry-after': 2 }, { headers: JSON_HEADERS });
    pool.intercept({ path: '/bots/1/stats', method: 'GET' }).reply(200, { server_count: 3 }, { headers: JSON_HEADERS });
    const res = await transport.send(get('/bots/1/stats', { family: 'v0', headers: { authorization: TOKEN } }));
    expect(res.body).toEqual({ server_count: 3 });
    expect(clock.sleeps).toEqual([2000]);
  });

  it('backs off with jitter when a 429 gives no wait', async () => {
    const { pool, clock, transport } = setup();
    pool.intercept({ path: '/x', method: 'GET' }).reply(429, '').times(2);
    pool.intercept({ path: '/x', method: 'GET' }).reply(204, '');
    expect((await transport.send(get('/x'))).status).toBe(204);
    expect(clock.sleeps).toEqual([250, 500]);
  });

  it('fails fast with a RateLimitError carrying the wait when it is over the ceiling', async () => {
    const { pool, clock, transport, events } = setup();
    pool.intercept({ path: '/announcements', method: 'POST' }).reply(429, problem(429, 'cooldown'), { headers: { ...PROBLEM_HEADERS, 'retry-after': '3600' } });
    const error = await rejection(transport.send(post('/announcements')));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect((error as RateLimitError).attempts).toBe(1);
    expect((error as RateLimitError).message).toContain('Wait 3600 s');
    expect(clock.sleeps).toEqual([]);
    expect(events).toEqual([]);
  });

  it('honours a lower ceiling from the options', async () => {
    const { pool, clock, transport } = setup({ retry: { maxRetryAfterMs: 1000 } });
    pool.intercept({ path: '/x', method: 'GET' }).reply(429, '', { headers: { 'retry-after': '2' } });
    const error = await rejection(transport.send(get('/x')));
    expect((error as RateLimitError).retryAfterMs).toBe(2000);
    expect(clock.sleeps).toEqual([]);
  });
});

describe('transport: 5xx', () => {
  it('retries 502 three times, then succeeds, on an idempotent call', async () => {
    const { pool, clock, transport, events } = setup();
    pool.intercept({ path: '/projects/@me/metrics', method: 'PATCH' }).reply(502, problem(502, 'upstream'), { headers: PROBLEM_HEADERS }).times(3);
    pool.intercept({ path: '/projects/@me/metrics', method: 'PATCH' }).reply(204, '');
    const res = await transport.send(get('/projects/@me/metrics', { method: 'PATCH', json: { server_count: 1 } }));
    expect(res.status).toBe(204);
    expect(clock.sleeps).toEqual([250, 500, 1000]);
    expect(events.map((event) => event.attempt)).toEqual([1, 2, 3]);
    expect(events.map((event) => event.reason)).toEqual(['502', '502', '502']);
  });

  it('does not retry a 502 on a POST that is not idempotent', async () => {
    const { pool, clock, transport } = setup();
    pool.intercept({ path: '/announcements', method: 'POST' }).reply(502, problem(502, 'upstream'), { headers: PROBLEM_HEADERS });
    const error = await rejection(transport.send(post('/announcements')));
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).attempts).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('gives up after 4 attempts of 503 with a ServerError', async () => {
    const { pool, clock, transport } = setup();
    pool.intercept({ path: '/x', method: 'GET' }).reply(503, problem(503, 'down'), { headers: PROBLEM_HEADERS }).times(4);
    const error = await rejection(transport.send(get('/x')));
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).attempts).toBe(4);
    expect((error as ServerError).status).toBe(503);
    expect((error as ServerError).message).toContain('failed with 503 after 4 attempts: down');
    expect(clock.sleeps).toEqual([250, 500, 1000]);
  });

  it('does not retry a 500', async () => {
    const { pool, clock, transport } = setup();
    pool.intercept({ path: '/x', method: 'GET' }).reply(500, problem(500, 'bug'), { headers: PROBLEM_HEADERS });
    expect(await rejection(transport.send(get('/x')))).toBeInstanceOf(ServerError);
    expect(clock.sleeps).toEqual([]);
  });
});

describe('transport: network errors', () => {
  it('retries a refused connection even for a call that is not idempotent', async () => {
    const { pool, clock, transport, events } = setup();
    pool.intercept({ path: '/announcements', method: 'POST' }).replyWithError(refused());
    pool.intercept({ path: '/announcements', method: 'POST' }).reply(201, { title: 'hi' }, { headers: JSON_HEADERS });
    expect((await transport.send(post('/announcements'))).status).toBe(201);
    expect(clock.sleeps).toEqual([250]);
    expect(events[0]?.reason).toBe('not sent');
  });

  it('gives a NetworkError after maxAttempts refused connections', async () => {
    const { pool, transport } = setup();
    pool.intercept({ path: '/x', method: 'GET' }).replyWithError(refused()).times(4);
    const error = await rejection(transport.send(get('/x')));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).attempts).toBe(4);
    expect((error as NetworkError).message).toContain('(ECONNREFUSED)');
  });

  it('retries a reset on an idempotent call', async () => {
    const { pool, clock, transport } = setup();
    pool.intercept({ path: '/x', method: 'GET' }).replyWithError(new Error('other side closed'));
    pool.intercept({ path: '/x', method: 'GET' }).reply(200, { ok: true }, { headers: JSON_HEADERS });
    expect((await transport.send(get('/x'))).body).toEqual({ ok: true });
    expect(clock.sleeps).toEqual([250]);
  });

  it('does not retry a reset on a call that is not idempotent: the service may have acted', async () => {
    const { pool, clock, transport } = setup();
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    pool.intercept({ path: '/announcements', method: 'POST' }).replyWithError(reset);
    const error = await rejection(transport.send(post('/announcements')));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).attempts).toBe(1);
    expect((error as NetworkError).cause).toBe(reset);
    expect(clock.sleeps).toEqual([]);
    pool.intercept({ path: '/announcements', method: 'POST' }).replyWithError(new Error('other side closed'));
    expect(await rejection(transport.send(post('/announcements')))).toBeInstanceOf(NetworkError);
  });
});

describe('transport: timeouts', () => {
  it('gives a TimeoutError when the answer is later than timeoutMs', async () => {
    const { pool, transport } = setup({ timeoutMs: 50 });
    pool.intercept({ path: '/announcements', method: 'POST' }).reply(201, {}).delay(500);
    const started = Date.now();
    const error = await rejection(transport.send(post('/announcements')));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(50);
    expect((error as TimeoutError).attempts).toBe(1);
    expect(Date.now() - started).toBeLessThan(400);
  });

  it('retries a timeout on an idempotent call, with the per-call timeoutMs', async () => {
    const { pool, clock, transport } = setup();
    pool.intercept({ path: '/x', method: 'GET' }).reply(200, {}).delay(500);
    pool.intercept({ path: '/x', method: 'GET' }).reply(200, { second: true }, { headers: JSON_HEADERS });
    const res = await transport.send(get('/x', { timeoutMs: 40 }));
    expect(res.body).toEqual({ second: true });
    expect(clock.sleeps).toEqual([250]);
  });
});

describe('transport: AbortSignal', () => {
  it('rejects with the reason at once when aborted during a retry wait, and makes no further attempt', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    // A clock whose sleep never ends and ignores the signal: the transport must not rely on it.
    const stuckClock: TransportClock = { now: () => 0, sleep: () => new Promise<void>(() => {}) };
    let attempts = 0;
    const { pool, transport } = setup({ clock: stuckClock, onRetry: () => setTimeout(() => controller.abort(reason), 1) });
    pool.intercept({ path: '/x', method: 'GET' }).reply(() => {
      attempts += 1;
      return { statusCode: 503, data: '' };
    }).persist();
    const error = await rejection(transport.send(get('/x', { signal: controller.signal })));
    expect(error).toBe(reason);
    expect(attempts).toBe(1);
  });

  it('stops a real (system clock) retry wait with the signal\'s reason, not a generic AbortError', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    let attempts = 0;
    // No clock option: the system clock; the first backoff is 5 s (base 10 s, random 0.5).
    const agent = new MockAgent();
    agent.disableNetConnect();
    agents.push(agent);
    const transport = createTransport({
      dispatcher: agent,
      random: () => 0.5,
      retry: { baseDelayMs: 10_000 },
      onRetry: () => setTimeout(() => controller.abort(reason), 5),
    });
    agent.get(ORIGIN).intercept({ path: '/x', method: 'GET' }).reply(() => {
      attempts += 1;
      return { statusCode: 502, data: '' };
    }).persist();
    const started = Date.now();
    const error = await rejection(transport.send(get('/x', { signal: controller.signal })));
    expect(error).toBe(reason);
    expect(attempts).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('rejects with the reason when aborted while the request is in flight', async () => {
    const controller = new AbortController();
    const reason = new Error('user cancelled');
    const { pool, clock, transport } = setup();
    pool.intercept({ path: '/x', method: 'GET' }).reply(200, {}).delay(500);
    setTimeout(() => controller.abort(reason), 10);
    expect(await rejection(transport.send(get('/x', { signal: controller.signal })))).toBe(reason);
    expect(clock.sleeps).toEqual([]);
  });

  it('sends nothing when the signal is already aborted', async () => {
    let attempts = 0;
    const { pool, transport } = setup();
    pool.intercept({ path: '/x', method: 'GET' }).reply(() => {
      attempts += 1;
      return { statusCode: 200, data: '' };
    });
    const reason = new Error('too late');
    expect(await rejection(transport.send(get('/x', { signal: AbortSignal.abort(reason) })))).toBe(reason);
    expect(attempts).toBe(0);
  });
});

describe('transport: what is sent', () => {
  it('sends a User-Agent naming the package and its version, and the JSON body', async () => {
    expect(DEFAULT_USER_AGENT).toMatch(new RegExp(`^listing-agent/${PACKAGE_VERSION.replaceAll('.', '\\.')} `));
    let seen: Record<string, string> = {};
    let body: unknown;
    const { pool, transport } = setup();
    pool.intercept({ path: '/x', method: 'POST' }).reply((opts) => {
      seen = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
      body = JSON.parse(String(opts.body));
      return { statusCode: 201, data: '' };
    });
    await transport.send(post('/x', { json: { a: 1 } }));
    expect(seen['user-agent']).toBe(DEFAULT_USER_AGENT);
    expect(seen['content-type']).toBe('application/json');
    expect(seen['authorization']).toBe(`Bearer ${TOKEN}`);
    expect(body).toEqual({ a: 1 });
  });

  it('lets a caller\'s User-Agent (any case) replace the default, and sends forms', async () => {
    let seen: Record<string, string> = {};
    const { pool, transport } = setup({ userAgent: 'my-bot/1.0' });
    pool.intercept({ path: '/token', method: 'POST' }).reply((opts) => {
      seen = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k, String(v)]));
      expect(String(opts.body)).toBe('grant_type=refresh_token&refresh_token=abc');
      return { statusCode: 200, data: '{}' };
    });
    await transport.send(post('/token', { family: 'oauth', json: undefined, form: { grant_type: 'refresh_token', refresh_token: 'abc' }, headers: { 'User-Agent': 'override/2' } }));
    expect(Object.keys(seen).filter((key) => key.toLowerCase() === 'user-agent')).toEqual(['user-agent']);
    expect(seen['user-agent']).toBe('override/2');
    expect(seen['content-type']).toBe('application/x-www-form-urlencoded');
  });
});

describe('transport: error bodies', () => {
  it('parses problem+json into error.problem, without secrets', async () => {
    const { pool, transport } = setup();
    pool.intercept({ path: '/projects/@me', method: 'GET' }).reply(401, { type: 'about:blank', title: 'Unauthorized', status: 401, detail: `token ${TOKEN} is invalid` }, { headers: PROBLEM_HEADERS });
    const error = (await rejection(transport.send(get('/projects/@me')))) as UnauthorizedError;
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error.problem).toEqual({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'token [redacted] is invalid' });
    expect(error.message).not.toContain(TOKEN);
    expect(error.message).toContain('v1 needs `Authorization: Bearer <token>`');
  });

  it('parses v0\'s {error} into error.error', async () => {
    const { pool, transport } = setup();
    pool.intercept({ path: '/users/1', method: 'GET' }).reply(404, { error: 'Not found' }, { headers: JSON_HEADERS });
    const error = (await rejection(transport.send(get('/users/1', { family: 'v0' })))) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.error).toBe('Not found');
    expect(error.problem).toBeUndefined();
    expect(error.family).toBe('v0');
  });

  it('parses OAuth {error, error_description}', async () => {
    const { pool, transport } = setup();
    pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(400, { error: 'invalid_grant', error_description: 'the code was used' }, { headers: JSON_HEADERS });
    const error = (await rejection(transport.send(post('/oauth/token', { family: 'oauth', json: undefined, form: { code: 'c0de' } })))) as BadRequestError;
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.error).toBe('invalid_grant');
    expect(error.errorDescription).toBe('the code was used');
    expect(error.message).toContain(': the code was used.');
  });

  it('keeps secrets out of the URL of errors and retry events', async () => {
    const { pool, transport, events } = setup();
    pool.intercept({ path: `/bots/check?token=${TOKEN}&userId=1`, method: 'GET' }).reply(503, '').times(4);
    const error = (await rejection(transport.send(get(`/bots/check?token=${TOKEN}&userId=1`, { family: 'v0' })))) as ServerError;
    expect(error.url).not.toContain(TOKEN);
    expect(error.message).not.toContain(TOKEN);
    expect(events).toHaveLength(3);
    for (const event of events) expect(event.url).not.toContain(TOKEN);
  });
});

describe('its own dispatcher, made at the first request (undici loaded on first use)', () => {
  it('closed before any request: close() resolves (twice), and a request after it is refused as undici refuses a closed Agent', async () => {
    const transport = createTransport({ clock: createFakeClock() });
    await transport.close();
    await transport.close();
    const error = await rejection(transport.send(get('/x', { url: 'http://127.0.0.1:9/x' })));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError & { cause?: { code?: string } }).cause?.code).toBe('UND_ERR_CLOSED');
  });

  it('closed while the first request loads undici: that request is refused, none is sent', async () => {
    const transport = createTransport({ clock: createFakeClock() });
    const sending = rejection(transport.send(get('/x', { url: 'http://127.0.0.1:9/x' })));
    const closing = transport.close();
    const error = await sending;
    await closing;
    expect((error as NetworkError & { cause?: { code?: string } }).cause?.code).toBe('UND_ERR_CLOSED');
  });
});
