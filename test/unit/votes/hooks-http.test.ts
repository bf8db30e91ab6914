import { afterEach, describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { computeSignature } from '../../../src/contract/signature.js';
import { createHttpHook, voteHookBody, type HttpHookOptions } from '../../../src/votes/hooks/index.js';
import { hookContext, hookFailure, sampleVote } from '../../helpers/votes.js';

const ORIGIN = 'http://bot.test:8080';
const SECRET = 'whs_unit_secret_value';
const AUTH = 'Bearer auth-token-value';

const vote = sampleVote({ road: 'webhook', voteId: 'v_1' });
const context = (attempt = 1) => hookContext(vote, attempt);

const agents: MockAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

interface Seen {
  headers: Record<string, string>;
  body: string;
}

function setup(reply: { status: number; body?: string; headers?: Record<string, string> }, options: Partial<HttpHookOptions> = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  const seen: Seen[] = [];
  agent
    .get(ORIGIN)
    .intercept({ path: '/votes', method: 'POST' })
    .reply((request) => {
      seen.push({ headers: request.headers as Record<string, string>, body: String(request.body) });
      return { statusCode: reply.status, data: reply.body ?? '', responseOptions: { headers: reply.headers ?? {} } };
    })
    .persist();
  const hook = createHttpHook({ name: 'http-1', url: `${ORIGIN}/votes`, timeoutMs: 1000, dispatcher: agent, now: () => 1_735_732_812_345, ...options });
  return { hook, seen };
}

describe('createHttpHook', () => {
  it('POSTs the body with the idempotency, attempt and signature headers', async () => {
    const { hook, seen } = setup({ status: 204 }, { secret: SECRET, authorization: AUTH });
    await hook.run(vote, context(3));
    const [request] = seen;
    expect(request!.body).toBe(JSON.stringify(voteHookBody(vote)));
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      'idempotency-key': vote.key,
      'x-listing-agent-attempt': '3',
      authorization: AUTH,
      'x-topgg-signature': `t=1735732812,v1=${computeSignature(SECRET, 1_735_732_812, request!.body)}`,
    });
    expect(request!.headers['x-topgg-trace']).toBeUndefined();
    expect(request!.headers['user-agent']).toMatch(/^listing-agent\//);
  });

  it('sends neither signature nor authorization when they are not set', async () => {
    const { hook, seen } = setup({ status: 200 });
    await hook.run(vote, context());
    expect(seen[0]!.headers['x-topgg-signature']).toBeUndefined();
    expect(seen[0]!.headers.authorization).toBeUndefined();
    expect(hook).toMatchObject({ name: 'http-1', retries: 5 });
  });

  it('fails on a non-2xx with the status and a short excerpt, secrets removed even when echoed', async () => {
    const page = `<html>\n  <body>you sent ${AUTH} and ${SECRET}</body>\n</html>` + ' pad'.repeat(500);
    const { hook } = setup({ status: 401, body: page }, { secret: SECRET, authorization: AUTH });
    const error = await hookFailure(hook.run(vote, context()));
    expect(error.reason).toBe('status');
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/^hook "http-1": POST http:\/\/bot\.test:8080\/votes answered 401 Unauthorized: <html> <body>you sent \[redacted\] and \[redacted\]<\/body>/);
    expect(error.message.length).toBeLessThan(400);
    expect(error.message).not.toContain('auth-token-value');
    expect(error.message).not.toContain(SECRET);
  });

  it('keeps every form of its credentials and of the given secrets out, and never shows a piece of one at the cut', async () => {
    const basic = `Basic ${Buffer.from('bot:hunter2222').toString('base64')}`;
    const echoed = `${'x'.repeat(123)} auth-token-value ${'y'.repeat(100)}`;
    const { hook } = setup({ status: 500, body: `hunter2222 ${basic.slice(6)} bot:hunter2222 config-secret-1234 ${echoed}` }, { authorization: basic, secrets: ['config-secret-1234', 'auth-token-value'] });
    const error = await hookFailure(hook.run(vote, context()));
    expect(error.message).toContain('answered 500 Internal Server Error: [redacted] [redacted] [redacted] [redacted] xxx');
    // The cut at 200 characters falls after the scrub: no start of the echoed token survives.
    expect(error.message).not.toMatch(/hunter|auth-t|config-secret/);
    expect(error.message).toContain('[redacted] yyy');
  });

  it('does not follow a redirect, and says so', async () => {
    const { hook } = setup({ status: 302, headers: { location: '/elsewhere' } });
    const error = await hookFailure(hook.run(vote, context()));
    expect(error.message).toContain('answered 302 Found (redirects are not followed: configure the final URL)');
  });

  it('keeps secrets in the URL out of messages', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    agents.push(agent);
    agent.get(ORIGIN).intercept({ path: '/votes?token=abcdef', method: 'POST' }).reply(500, '');
    const hook = createHttpHook({ name: 'h', url: `${ORIGIN}/votes?token=abcdef`, dispatcher: agent });
    const error = await hookFailure(hook.run(vote, context()));
    expect(error.message).toBe('hook "h": POST http://bot.test:8080/votes?token=redacted answered 500 Internal Server Error');
  });

  it('does not send when the call is already aborted', async () => {
    const { hook, seen } = setup({ status: 200 });
    const error = await hookFailure(hook.run(vote, { ...context(), signal: AbortSignal.abort() }));
    expect(error.reason).toBe('aborted');
    expect(seen).toEqual([]);
  });
});
