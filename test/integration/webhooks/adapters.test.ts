import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expressWebhookHandler, fastifyWebhookHandler, nodeWebhookHandler, type WebhookHandlerOptions, type WebhookProblem } from '../../../src/webhooks/adapters.js';
import type { WebhookEvent } from '../../../src/webhooks/events.js';
import { signDelivery } from '../../../src/webhooks/verify.js';

const SECRET = 'whs_adapter_test_secret';
const PROJECT = { id: '1400000000000000001', type: 'bot', platform: 'discord', platform_id: '1400000000000000002' };
const USER = { id: '1400000000000000003', platform_id: '1400000000000000004', name: 'voter', avatar_url: null };
const VOTE = {
  type: 'vote.create',
  data: { id: '1400000000000000009', weight: 1, created_at: new Date().toISOString(), expires_at: new Date(Date.now() + 43_200_000).toISOString(), project: PROJECT, user: USER },
};

/** POSTs `body`, signed with `secret` (now) unless `signature` overrides the header. */
async function post(url: string, body: string, options: { secret?: string; signature?: string; contentType?: string } = {}) {
  const signed = signDelivery({ secret: options.secret ?? SECRET, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000), traceId: 'trace-7' });
  if (options.signature !== undefined) signed['x-topgg-signature'] = options.signature;
  const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': options.contentType ?? 'application/json', ...signed } });
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') };
}

/** What the handlers saw, reset per test. */
let events: Array<{ event: WebhookEvent; traceId: string | undefined }>;
let problems: WebhookProblem[];
let failNext: boolean;

function handlerOptions(): WebhookHandlerOptions {
  return {
    secrets: () => [SECRET],
    onEvent: async (event, context) => {
      if (failNext) throw new Error('database down');
      events.push({ event, traceId: context.traceId });
      if (event.type === 'integration.create') return { webhook_url: 'https://bot.example/hook', routes: ['vote.create'] };
      return undefined;
    },
    onError: (problem) => problems.push(problem),
  };
}

beforeEach(() => {
  events = [];
  problems = [];
  failNext = false;
});

/** The checks both adapters must pass, against `url()` (a route with a raw-body parser). */
function commonCases(url: () => string) {
  it('accepts a signed delivery: 204, onEvent awaited with the event and trace ID', async () => {
    const answer = await post(url(), JSON.stringify(VOTE));
    expect(answer).toMatchObject({ status: 204, text: '' });
    expect(events).toEqual([{ event: VOTE, traceId: 'trace-7' }]);
  });

  it("answers 200 with onEvent's value as JSON (integration.create)", async () => {
    const body = JSON.stringify({ type: 'integration.create', data: { connection_id: 'c1', webhook_secret: 'whs_new', project: PROJECT, user: USER } });
    const answer = await post(url(), body);
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/application\/json/);
    expect(JSON.parse(answer.text)).toEqual({ webhook_url: 'https://bot.example/hook', routes: ['vote.create'] });
  });

  it('answers 401 to a bad or missing signature, with no details, and calls no hook', async () => {
    expect(await post(url(), JSON.stringify(VOTE), { secret: 'whs_wrong' })).toMatchObject({ status: 401, text: '' });
    expect(await post(url(), JSON.stringify(VOTE), { signature: 't=1,v1=abc' })).toMatchObject({ status: 401, text: '' });
    expect(await post(url(), JSON.stringify(VOTE), { signature: '' })).toMatchObject({ status: 401, text: '' });
    expect(events).toEqual([]);
    expect(problems.map((p) => p.kind === 'rejected' && p.reason)).toEqual(['bad_signature', 'malformed_signature', 'malformed_signature']);
  });

  it('answers 400 to a validly signed body that is not an event', async () => {
    expect(await post(url(), '{"type":"vote.create",')).toMatchObject({ status: 400, text: '' });
    expect(await post(url(), '{"type":"something.new","data":{}}')).toMatchObject({ status: 400, text: '' });
    expect(events).toEqual([]);
  });

  it('answers 500 when onEvent throws, without leaking its message', async () => {
    failNext = true;
    const answer = await post(url(), JSON.stringify(VOTE));
    expect(answer).toMatchObject({ status: 500, text: '' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ kind: 'handler_failed' });
  });
}

async function listenExpress(app: express.Express): Promise<{ base: string; close: () => Promise<void> }> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('expressWebhookHandler on a real Express server', () => {
  let server: { base: string; close: () => Promise<void> };
  beforeEach(async () => {
    const app = express();
    app.post('/raw', express.raw({ type: 'application/json' }), expressWebhookHandler(handlerOptions()));
    app.post('/stream', expressWebhookHandler({ ...handlerOptions(), maxBodyBytes: 1024 }));
    app.post('/parsed', express.json(), expressWebhookHandler(handlerOptions()));
    server = await listenExpress(app);
  });
  afterEach(() => server.close());

  describe('behind express.raw', () => commonCases(() => `${server.base}/raw`));
  describe('reading the stream itself', () => commonCases(() => `${server.base}/stream`));

  it('reads the stream whatever the content type, and answers 413 above maxBodyBytes', async () => {
    expect((await post(`${server.base}/stream`, JSON.stringify(VOTE), { contentType: 'text/plain' })).status).toBe(204);
    expect((await post(`${server.base}/stream`, 'x'.repeat(2048))).status).toBe(413);
    expect(problems).toContainEqual({ kind: 'rejected', reason: 'too_large', status: 413 });
  });

  it('answers 500 behind express.json(), and onError says how to mount it', async () => {
    expect((await post(`${server.base}/parsed`, JSON.stringify(VOTE))).status).toBe(500);
    expect(events).toEqual([]);
    expect(problems[0]).toMatchObject({ kind: 'misconfigured', message: expect.stringContaining('express.raw') });
  });
});

describe('fastifyWebhookHandler on a real Fastify server', () => {
  let app: FastifyInstance;
  let base: string;
  beforeEach(async () => {
    app = Fastify();
    // The documented setup: a scope whose JSON parser keeps the exact bytes.
    await app.register(async (scope) => {
      scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
      scope.post('/raw', fastifyWebhookHandler(handlerOptions()));
    });
    app.post('/parsed', fastifyWebhookHandler(handlerOptions()));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterEach(() => app.close());

  commonCases(() => `${base}/raw`);

  it('answers 500 when Fastify parsed the JSON itself, and onError says how to set it up', async () => {
    expect((await post(`${base}/parsed`, JSON.stringify(VOTE))).status).toBe(500);
    expect(events).toEqual([]);
    expect(problems[0]).toMatchObject({ kind: 'misconfigured', message: expect.stringContaining('parseAs') });
  });
});

describe('nodeWebhookHandler on a plain node:http server', () => {
  let server: Server;
  let base: string;
  beforeEach(async () => {
    server = createServer(nodeWebhookHandler({ ...handlerOptions(), maxBodyBytes: 1024 }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  commonCases(() => `${base}/hook`);

  it('answers 413 above maxBodyBytes', async () => {
    expect((await post(`${base}/hook`, 'x'.repeat(2048))).status).toBe(413);
    expect(events).toEqual([]);
  });
});
