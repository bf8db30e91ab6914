import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/** What the fake Discord REST API answers; tests change it between calls. */
export interface FakeDiscordRestState {
  /** `id` of `GET /applications/@me`. */
  applicationId: string;
  /** `approximate_guild_count` of `GET /applications/@me`. */
  approximateGuildCount: number;
  /** `shards` of `GET /gateway/bot`. */
  recommendedShards: number;
  /** `url` of `GET /gateway/bot` (the fake gateway's `ws://` URL, when there is one). */
  gatewayUrl: string;
  /** The bot token the API accepts (`Authorization: Bot <token>`). */
  token: string;
  /** Requests left in the current rate-limit bucket; at 0 the API answers 429. Default 50. */
  remaining: number;
  /** Seconds until the bucket resets (`X-RateLimit-Reset-After`, and `Retry-After` on a 429). Default 1. */
  resetAfterSeconds: number;
}

/** A request the fake REST API received. */
export interface FakeRestRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  status: number;
  /** The request's body, as text ('' when it had none). */
  body: string;
}

/** A fake of the two Discord REST endpoints the agent reads, with Discord's rate-limit headers. */
export interface FakeDiscordRest {
  /** Base URL, like `https://discord.com/api` (no version: clients add `/v10`). */
  url: string;
  state: FakeDiscordRestState;
  requests: FakeRestRequest[];
  /** Extra routes (the gateway fake adds none; tests may add `/users/@me` and friends). */
  route(method: string, path: string, answer: (req: IncomingMessage) => { status: number; body: unknown }): void;
  close(): Promise<void>;
}

const open: FakeDiscordRest[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

/**
 * Starts a fake Discord REST API on 127.0.0.1:0 serving `GET /api/v10/applications/@me` and
 * `GET /api/v10/gateway/bot` (any API version), with `X-RateLimit-*` headers and 429s when the
 * bucket is empty. Unknown routes answer Discord's 404 shape.
 */
export async function startFakeDiscordRest(initial: Partial<FakeDiscordRestState> = {}): Promise<FakeDiscordRest> {
  const state: FakeDiscordRestState = {
    applicationId: '300000000000000001',
    approximateGuildCount: 0,
    recommendedShards: 1,
    gatewayUrl: 'ws://127.0.0.1:1',
    token: 'fake-bot-token',
    remaining: 50,
    resetAfterSeconds: 1,
    ...initial,
  };
  const requests: FakeRestRequest[] = [];
  const extra = new Map<string, (req: IncomingMessage) => { status: number; body: unknown }>();

  const answer = (req: IncomingMessage, res: ServerResponse, path: string, received: string) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, status, body: received });
      // 204 has no body, and so no content type (discord.js would try to read JSON from nothing).
      if (status === 204) res.writeHead(status, headers).end();
      else res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    // An interaction's callback is authorised by the interaction's token in its path, not the bot's.
    const unauthenticated = path.startsWith('/interactions/');
    if (!unauthenticated && req.headers.authorization !== `Bot ${state.token}`) return send(401, { message: '401: Unauthorized', code: 0 });
    const limits = {
      'x-ratelimit-limit': '50',
      'x-ratelimit-bucket': 'fake-bucket',
      'x-ratelimit-reset-after': String(state.resetAfterSeconds),
      'x-ratelimit-reset': String(Date.now() / 1000 + state.resetAfterSeconds),
    };
    if (state.remaining <= 0) {
      return send(429, { message: 'You are being rate limited.', retry_after: state.resetAfterSeconds, global: false }, {
        ...limits,
        'x-ratelimit-remaining': '0',
        'retry-after': String(Math.ceil(state.resetAfterSeconds)),
        'x-ratelimit-scope': 'user',
      });
    }
    state.remaining -= 1;
    const withLimits = { ...limits, 'x-ratelimit-remaining': String(state.remaining) };
    const custom = extra.get(`${req.method} ${path}`);
    if (custom) {
      const { status, body } = custom(req);
      return send(status, body, withLimits);
    }
    if (req.method === 'GET' && path === '/applications/@me') {
      return send(200, { id: state.applicationId, name: 'Fake Bot', approximate_guild_count: state.approximateGuildCount, bot_public: true }, withLimits);
    }
    if (req.method === 'GET' && path === '/gateway/bot') {
      return send(200, {
        url: state.gatewayUrl,
        shards: state.recommendedShards,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 16 },
      }, withLimits);
    }
    return send(404, { message: '404: Not Found', code: 0 });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      // Accept /api/v10/..., /api/v9/... and /api/... alike.
      const path = url.pathname.replace(/^\/api(\/v\d+)?/, '');
      answer(req, res, path, Buffer.concat(chunks).toString('utf8'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeDiscordRest = {
    url: `http://127.0.0.1:${port}/api`,
    state,
    requests,
    route: (method, path, handler) => void extra.set(`${method} ${path}`, handler),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  open.push(fake);
  return fake;
}
