import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NetworkError, RateLimitError, TimeoutError, UnauthorizedError } from '../../../src/api/errors.js';
import { createTransport, DEFAULT_USER_AGENT, type Transport, type TransportOptions, type TransportRequest } from '../../../src/api/transport.js';
import { issueProjectToken } from '../../../src/contract/project-token.js';
import { createFakeClock } from '../../helpers/client.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { rejection } from '../../helpers/rejection.js';

const transports: Transport[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((transport) => transport.close()));
});

/** The transport as the client builds it (its own keep-alive Agent), on a fake clock, jitter fixed at 0.5. */
function setup(options: TransportOptions = {}) {
  const clock = createFakeClock();
  const transport = createTransport({ clock, random: () => 0.5, ...options });
  transports.push(transport);
  return { clock, transport };
}

async function start(): Promise<{ emu: TestEmulator; fx: BotFixture }> {
  const emu = await startTestEmulator();
  return { emu, fx: setupBot(emu) };
}

const getMe = (emu: TestEmulator, fx: BotFixture, extra: Partial<TransportRequest> = {}): TransportRequest => ({
  family: 'v1',
  method: 'GET',
  url: `${emu.urls.v1}/projects/@me`,
  headers: { authorization: `Bearer ${fx.projectToken}` },
  idempotent: true,
  secrets: [fx.projectToken],
  ...extra,
});

const announce = (emu: TestEmulator, fx: BotFixture): TransportRequest =>
  getMe(emu, fx, {
    method: 'POST',
    url: `${emu.urls.v1}/projects/@me/announcements`,
    json: { title: 'Release', content: 'A new version is out.' },
    idempotent: false,
  });

/** The service requests the emulator logged for `path`. */
const logged = (emu: TestEmulator, path: string) => emu.admin.requests().filter((entry) => entry.path === path);

describe('transport against the emulator', () => {
  it('waits out a 429 Retry-After and succeeds', async () => {
    const { emu, fx } = await start();
    emu.admin.injectFault({ method: 'GET', path: '/api/v1/projects/@me', status: 429, retry_after: 2 });
    const { clock, transport } = setup();
    const res = await transport.send(getMe(emu, fx));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: fx.projectId, name: 'Test Bot' });
    expect(logged(emu, '/api/v1/projects/@me').map((entry) => [entry.status, entry.fault])).toEqual([[429, true], [200, false]]);
    expect(clock.sleeps).toEqual([2000]);
  });

  it('fails fast with a RateLimitError when the Retry-After is over the ceiling', async () => {
    const { emu, fx } = await start();
    emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 429, retry_after: 3600 });
    const { clock, transport } = setup();
    const error = await rejection(transport.send(getMe(emu, fx)));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect(logged(emu, '/api/v1/projects/@me')).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('retries two 502s and succeeds on the third request', async () => {
    const { emu, fx } = await start();
    emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 502, count: 2 });
    const { clock, transport } = setup();
    expect((await transport.send(getMe(emu, fx))).status).toBe(200);
    expect(logged(emu, '/api/v1/projects/@me').map((entry) => entry.status)).toEqual([502, 502, 200]);
    expect(clock.sleeps).toEqual([250, 500]);
  });

  it('retries a socket reset mid-request on an idempotent GET', async () => {
    const { emu, fx } = await start();
    emu.admin.injectFault({ path: '/api/v1/projects/@me', reset: true });
    const { clock, transport } = setup();
    expect((await transport.send(getMe(emu, fx))).status).toBe(200);
    expect(logged(emu, '/api/v1/projects/@me').map((entry) => entry.fault)).toEqual([true, false]);
    expect(clock.sleeps).toEqual([250]);
  });

  it('does not retry a socket reset on a POST that is not idempotent', async () => {
    const { emu, fx } = await start();
    emu.admin.injectFault({ method: 'POST', path: '/api/v1/projects/@me/announcements', reset: true });
    const { clock, transport } = setup();
    const error = await rejection(transport.send(announce(emu, fx)));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).attempts).toBe(1);
    expect(logged(emu, '/api/v1/projects/@me/announcements')).toHaveLength(1);
    expect(emu.admin.announcements(fx.projectId)).toEqual([]);
    expect(clock.sleeps).toEqual([]);
  });

  it('gives a TimeoutError when the service is slower than timeoutMs', async () => {
    const { emu, fx } = await start();
    emu.admin.injectFault({ path: '/api/v1/projects/@me', delay_ms: 300, count: 2 });
    // Two attempts only, to keep the real waiting short; the GET is retried once after its timeout.
    const { clock, transport } = setup({ timeoutMs: 100, retry: { maxAttempts: 2 } });
    const error = await rejection(transport.send(getMe(emu, fx)));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).attempts).toBe(2);
    expect((error as TimeoutError).timeoutMs).toBe(100);
    expect(clock.sleeps).toEqual([250]);
  });

  it('keeps the token out of a 401\'s error', async () => {
    const { emu, fx } = await start();
    const foreign = issueProjectToken('not-the-service-key', fx.platformId, 1);
    const { transport } = setup();
    const request = getMe(emu, fx, { headers: { authorization: `Bearer ${foreign}` }, secrets: [foreign] });
    const error = await rejection(transport.send(request));
    expect(error).toBeInstanceOf(UnauthorizedError);
    const unauthorized = error as UnauthorizedError;
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.problem).toMatchObject({ status: 401, title: 'Unauthorized' });
    for (const shown of [unauthorized.message, unauthorized.url, JSON.stringify(unauthorized.problem), String(unauthorized.stack)]) {
      expect(shown).not.toContain(foreign);
    }
    // v0 takes the raw token; a wrong one is a 401 with v0's own hint.
    const v0 = (await rejection(
      transport.send({ ...request, family: 'v0', url: `${emu.urls.v0}/bots/${fx.platformId}/stats`, headers: { authorization: foreign } }),
    )) as UnauthorizedError;
    expect(v0).toBeInstanceOf(UnauthorizedError);
    expect(v0.message).not.toContain(foreign);
    expect(v0.message).toContain('without `Bearer `');
  });
});

describe('the default keep-alive Agent', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('is closed by close(): its idle sockets end and later calls fail at once', async () => {
    const sockets: Socket[] = [];
    let userAgent: string | undefined;
    server = createServer((req, res) => {
      userAgent = req.headers['user-agent'];
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    server.on('connection', (socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping`;
    const clock = createFakeClock();
    const transport = createTransport({ clock, random: () => 0.5 });
    const request: TransportRequest = { family: 'v1', method: 'GET', url, idempotent: true, secrets: [] };

    expect((await transport.send(request)).body).toEqual({ ok: true });
    expect((await transport.send(request)).body).toEqual({ ok: true });
    expect(userAgent).toBe(DEFAULT_USER_AGENT);
    // Keep-alive: the sockets stay open after the answers (the pool may have opened one or two).
    expect(sockets.length).toBeGreaterThan(0);
    expect(sockets.every((socket) => !socket.destroyed)).toBe(true);

    const closed = Promise.all(sockets.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()))));
    await transport.close();
    await closed;
    expect(sockets.every((socket) => socket.destroyed)).toBe(true);

    const error = await rejection(transport.send(request));
    expect(error).toBeInstanceOf(NetworkError);
    // Not retried: a closed Agent does not come back.
    expect((error as NetworkError).attempts).toBe(1);
    expect((error as NetworkError).message).toContain('was closed');
    expect(clock.sleeps).toEqual([]);
    // A second close() is harmless.
    await transport.close();
  });

  it('leaves a dispatcher it was given open', async () => {
    const { Agent } = await import('undici');
    const agent = new Agent();
    const transport = createTransport({ dispatcher: agent });
    await transport.close();
    expect(agent.closed).toBe(false);
    await agent.close();
  });
});
