import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NetworkError, TimeoutError } from '../../../src/api/errors.js';
import { createTransport, type Transport, type TransportClock, type TransportRequest } from '../../../src/api/transport.js';
import { discordGet } from '../../../src/discord/rest.js';
import { pushShardCounts, PushRejectedError } from '../../../src/stats/sources/push-client.js';
import { createHttpHook, VoteHookError } from '../../../src/votes/hooks/index.js';
import { createFakeClock } from '../../helpers/client.js';
import { freePort } from '../../helpers/ports.js';
import { rejection } from '../../helpers/rejection.js';
import { sampleVote } from '../../helpers/votes.js';

/**
 * The HTTP guarantees of the package on one undici major (issue 25: a bot's discord.js 14 brings
 * undici 6, and npm keeps that copy for us): the transport's timeouts, keep-alive, retries and
 * aborts, and the other undici users (http vote hooks, the push client, Discord REST), on real
 * sockets on 127.0.0.1 (MockAgent of undici 6 does not abort a delayed reply). Run by
 * undici-6.test.ts and undici-7.test.ts, each of which mocks `undici` as that copy and counts the
 * calls that went through it, so a test that passed on the other copy would fail here.
 */

/** What the mock of `undici` gives the suite: the copy's version and how many requests it sent. */
export interface UndiciUnderTest {
  version: string;
  requests: () => number;
  /** An Agent of the other major, as a bot may pass its own dispatcher. */
  otherAgent: () => Dispatcher;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const vote = sampleVote({ road: 'webhook', voteId: 'v_1' });

export function undiciGuarantees(major: 6 | 7, undici: UndiciUnderTest): void {
  let server: Server;
  let base: string;
  let handler: Handler = (_req, res) => res.end();
  const sockets: Socket[] = [];
  /** Requests the server saw, and whether each ended with its socket closed before an answer. */
  let seen: Array<{ url: string; method: string; closedEarly: boolean }> = [];
  const transports: Transport[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(fn, ms);
    timers.add(timer);
  };

  // A server per test, on a new port: the global dispatcher (hooks, push, Discord REST) keeps idle
  // connections, and one to the last test's server must not be reused by the next test.
  beforeEach(async () => {
    server = createServer((req, res) => {
      const entry = { url: req.url ?? '', method: req.method ?? '', closedEarly: false };
      seen.push(entry);
      res.on('close', () => (entry.closedEarly = !res.writableFinished));
      handler(req, res);
    });
    server.on('connection', (socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    await Promise.all(transports.splice(0).map((transport) => transport.close()));
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
    sockets.splice(0);
    seen = [];
  });
  afterAll(() => {
    // Every test sent through the copy under test, not through another one.
    expect(undici.requests()).toBeGreaterThan(0);
  });

  const transport = (options: Parameters<typeof createTransport>[0] = {}) => {
    const made = createTransport({ clock: createFakeClock(), random: () => 0.5, ...options });
    transports.push(made);
    return made;
  };
  const get = (path: string, extra: Partial<TransportRequest> = {}): TransportRequest => ({ family: 'v1', method: 'GET', url: base + path, idempotent: true, secrets: [], ...extra });
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  describe(`the transport on undici ${major}`, () => {
    it(`sends through undici ${major} (the copy the mock gives)`, async () => {
      expect(undici.version.split('.')[0]).toBe(String(major));
      handler = (_req, res) => json(res, 200, { ok: true });
      const before = undici.requests();
      expect((await transport().send(get('/ok'))).body).toEqual({ ok: true });
      expect(undici.requests()).toBe(before + 1);
    });

    it('keeps the connection alive between calls, and close() ends it and refuses later calls', async () => {
      handler = (_req, res) => json(res, 200, { ok: true });
      const made = transport();
      for (let i = 0; i < 4; i += 1) expect((await made.send(get(`/ok/${i}`))).status).toBe(200);
      // Four calls, one after the other, on at most two connections (the pool may open a second).
      expect(sockets.length).toBeGreaterThan(0);
      expect(sockets.length).toBeLessThanOrEqual(2);
      expect(sockets.every((socket) => !socket.destroyed)).toBe(true);
      const closed = Promise.all(sockets.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()))));
      await made.close();
      await closed;
      const error = await rejection(made.send(get('/ok')));
      expect(error).toBeInstanceOf(NetworkError);
      expect((error as NetworkError).attempts).toBe(1);
      expect((error as NetworkError).message).toContain('was closed');
    });

    it('times out an answer later than timeoutMs, retries the GET once, and gives a TimeoutError', async () => {
      handler = (_req, res) => later(1_000, () => json(res, 200, {}));
      const clock = createFakeClock();
      const started = Date.now();
      const error = await rejection(transport({ clock, timeoutMs: 100, retry: { maxAttempts: 2 } }).send(get('/slow')));
      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as TimeoutError).attempts).toBe(2);
      // Our own timer: undici's own (coarse) timeouts alone would take about 2 s for the two.
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(clock.sleeps).toEqual([250]);
      expect(seen.map((s) => s.url)).toEqual(['/slow', '/slow']);
    });

    it('times out a body that stops half-way', async () => {
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).write('{"partial":');
        later(1_000, () => res.end('true}'));
      };
      const started = Date.now();
      const error = await rejection(transport({ timeoutMs: 100, retry: { maxAttempts: 1 } }).send(get('/half')));
      expect(error).toBeInstanceOf(TimeoutError);
      // Our own timer, not undici's coarse one (it may fire a second late).
      expect(Date.now() - started).toBeLessThan(900);
    });

    it('retries a 503 and a connection reset on a GET, not a reset on a POST that is not idempotent', async () => {
      let calls = 0;
      handler = (req, res) => {
        calls += 1;
        if (req.url === '/flaky' && calls === 1) json(res, 503, {});
        else if (calls === 2 || req.method === 'POST') req.socket.destroy();
        else json(res, 200, { calls });
      };
      const clock = createFakeClock();
      expect((await transport({ clock }).send(get('/flaky'))).body).toEqual({ calls: 3 });
      expect(clock.sleeps).toEqual([250, 500]);
      const post = get('/create', { method: 'POST', json: { a: 1 }, idempotent: false });
      const error = await rejection(transport({ clock }).send(post));
      expect(error).toBeInstanceOf(NetworkError);
      expect((error as NetworkError).attempts).toBe(1);
    });

    it('retries a refused connection even on a POST (it was never sent)', async () => {
      const port = await freePort();
      const clock = createFakeClock();
      const error = await rejection(transport({ clock, retry: { maxAttempts: 3 } }).send(get('/x', { url: `http://127.0.0.1:${port}/x`, method: 'POST', idempotent: false })));
      expect(error).toBeInstanceOf(NetworkError);
      expect((error as NetworkError).attempts).toBe(3);
      expect(clock.sleeps).toHaveLength(2);
    });

    it('aborts a call in flight with the signal\'s reason at once, and the server sees the request go', async () => {
      handler = (_req, res) => later(5_000, () => json(res, 200, {}));
      const controller = new AbortController();
      const reason = new Error('the bot is stopping');
      later(50, () => controller.abort(reason));
      const started = Date.now();
      expect(await rejection(transport().send(get('/slow', { signal: controller.signal })))).toBe(reason);
      expect(Date.now() - started).toBeLessThan(2_000);
      await expect.poll(() => seen[0]?.closedEarly).toBe(true);
    });

    it('aborts during a retry wait with the reason, without another attempt', async () => {
      handler = (_req, res) => json(res, 503, {});
      const controller = new AbortController();
      const reason = new Error('stop');
      const stuck: TransportClock = { now: () => 0, sleep: () => new Promise<void>(() => {}) };
      const made = transport({ clock: stuck, onRetry: () => later(5, () => controller.abort(reason)) });
      expect(await rejection(made.send(get('/busy', { signal: controller.signal })))).toBe(reason);
      expect(seen).toHaveLength(1);
    });

    it(`sends through a dispatcher of the other major (undici ${major === 6 ? 7 : 6}) that a bot passes in`, async () => {
      handler = (req, res) => (req.url === '/slow' ? later(1_000, () => json(res, 200, {})) : json(res, 200, { other: true }));
      const agent = undici.otherAgent();
      try {
        const made = transport({ dispatcher: agent, retry: { maxAttempts: 1 } });
        // The default timeout for the first call: that copy's first request compiles its HTTP parser.
        expect((await made.send(get('/ok'))).body).toEqual({ other: true });
        expect(await rejection(made.send(get('/slow', { timeoutMs: 100 })))).toBeInstanceOf(TimeoutError);
      } finally {
        await agent.close();
      }
    });
  });

  describe(`http vote hooks, the push client and Discord REST on undici ${major}`, () => {
    const context = (signal = new AbortController().signal) => ({ idempotencyKey: vote.key, attempt: 1, signal });

    it('a hook: a 2xx body is drained, a late answer is a timeout, an abort is an abort, a 500 shows its excerpt', async () => {
      handler = (req, res) => {
        if (req.url === '/ok') res.writeHead(200).end('x'.repeat(64 * 1024));
        else if (req.url === '/slow') later(1_000, () => res.end());
        else res.writeHead(500).end('the bot broke');
      };
      const hook = (path: string, timeoutMs = 5_000) => createHttpHook({ name: 'h', url: base + path, timeoutMs });
      await hook('/ok').run(vote, context());
      expect((await rejection(hook('/slow', 150).run(vote, context()))) as VoteHookError).toMatchObject({ reason: 'timeout' });
      const controller = new AbortController();
      later(30, () => controller.abort());
      const aborted = (await rejection(createHttpHook({ name: 'h', url: `${base}/slow`, timeoutMs: 5_000 }).run(vote, context(controller.signal)))) as VoteHookError;
      expect(aborted).toBeInstanceOf(VoteHookError);
      expect(aborted.reason).toBe('aborted');
      const failed = (await rejection(hook('/fail').run(vote, context()))) as VoteHookError;
      expect(failed.message).toContain('answered 500 Internal Server Error: the bot broke');
    });

    it('the push client: a 401 is a PushRejectedError with the agent\'s word, an abort rejects with its reason', async () => {
      handler = (req, res) => (req.url === '/slow' ? later(1_000, () => res.end()) : json(res, 401, { error: 'wrong key' }));
      const reports = { shard_id: 0, shard_count: 1, server_count: 5 };
      const rejected = await rejection(pushShardCounts({ url: `${base}/stats`, key: 'k'.repeat(32), reports }));
      expect(rejected).toBeInstanceOf(PushRejectedError);
      expect((rejected as PushRejectedError).message).toContain('wrong key');
      const controller = new AbortController();
      const reason = new Error('bye');
      later(30, () => controller.abort(reason));
      expect(await rejection(pushShardCounts({ url: `${base}/slow`, key: 'k'.repeat(32), reports, signal: controller.signal }))).toBe(reason);
    });

    it('Discord REST: an answer, a timeout, a body too large to be Discord\'s', async () => {
      handler = (req, res) => {
        if (req.url === '/slow') later(1_000, () => res.end());
        else if (req.url === '/huge') res.writeHead(200).end('x'.repeat(2 * 1024 * 1024));
        else json(res, 200, { id: '1' });
      };
      const options = { headers: {}, timeoutMs: 5_000, route: 'GET /x', timeoutText: '5 s' };
      expect(await discordGet(`${base}/ok`, options)).toMatchObject({ ok: true, status: 200, body: { id: '1' } });
      const late = { ...options, timeoutMs: 150, timeoutText: '150 ms' };
      expect(await discordGet(`${base}/slow`, late)).toEqual({ ok: false, reason: 'Discord did not answer GET /x within 150 ms' });
      expect(await discordGet(`${base}/huge`, options)).toMatchObject({ ok: true, status: 200, body: undefined });
    });
  });
}
