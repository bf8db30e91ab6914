import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { StatusDocument } from '../../../src/status/document.js';
import { escapeHtml } from '../../../src/status/html.js';
import { CONTENT_SECURITY_POLICY } from '../../../src/status/pages.js';
import { call, type TestResponse } from '../../helpers/http.js';
import { sendOnFreshConnection } from '../../helpers/sockets.js';
import { eventually, HOOK, HOOK_ERROR_BODY, PLANTED, startStatusAgent, type StatusAgent } from './fixture.js';

const XSS_NAME = '<img src=x onerror=alert(1)>';

/** Fails the test when any secret shows in `response` (its body or headers), raw, JSON-escaped or HTML-escaped. */
function expectNoSecret(where: string, response: TestResponse, secrets: readonly string[]): void {
  const everything = `${response.text}\n${[...response.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}`;
  for (const secret of secrets) {
    for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1), escapeHtml(secret)])) {
      if (everything.includes(form)) throw new Error(`${where} carries a secret (${secret.slice(0, 8)}...)`);
    }
  }
}

const json = async (t: StatusAgent) => (await call<StatusDocument>(`${t.url}/status.json`)).body;

/** A vote by `name` delivered by webhook while the hook fails: a dead letter with the hook's HTML error. */
async function deadLetterFrom(t: StatusAgent, name: string): Promise<string> {
  t.hook.failing = true;
  const { userId } = t.vote(name);
  const doc = await eventually('the dead letter', async () => {
    const d = await json(t);
    return d.votes.deadLetters.some((l) => l.userId === userId) ? d : undefined;
  });
  return doc.votes.deadLetters.find((l) => l.userId === userId)!.key;
}

const action = (t: StatusAgent, name: string, options: { token?: string; headers?: Record<string, string>; json?: unknown; body?: string } = {}) =>
  call(`${t.url}/status/actions/${name}`, {
    method: 'POST',
    ...(options.token === undefined ? {} : { bearer: options.token }),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.body === undefined ? { json: options.json ?? {} } : { body: options.body }),
  });

describe('status page: security', () => {
  it('never shows a secret of the config: every page, asset, JSON, refusal and log line is free of them', async () => {
    let logs = '';
    const logger = pino({ level: 'debug' }, new Writable({ write: (chunk, _e, done) => ((logs += chunk.toString()), done()) }));
    const t = await startStatusAgent({ logger });
    await deadLetterFrom(t, 'alice');
    t.hook.failing = false;
    const gets = ['/', '/status', '/status.json', '/status/assets/status-page.js', '/status/assets/status-page.css', '/status/assets/uPlot.iife.min.js', '/status/assets/uPlot.min.css', '/healthz', '/readyz', '/metrics', '/nope', '/status/', '/status/assets/..%2f..%2fpackage.json', '/favicon.ico'];
    for (const path of gets) expectNoSecret(`GET ${path}`, await call(`${t.url}${path}`), t.secrets);
    const refusals = [
      await action(t, 'retry'),
      await action(t, 'retry', { token: 'wrong-token-0123456789' }),
      await action(t, 'retry', { token: PLANTED.adminToken, headers: { origin: 'http://evil.example' } }),
      await action(t, 'nope', { token: PLANTED.adminToken }),
      await call(`${t.url}/status/actions/retry`),
    ];
    for (const r of refusals) expectNoSecret(`refusal ${r.status}`, r, t.secrets);
    expect(refusals.map((r) => r.status)).toEqual([401, 401, 403, 404, 405]);
    const done = [await action(t, 'retry', { token: PLANTED.adminToken }), await action(t, 'post-stats', { token: PLANTED.adminToken })];
    for (const r of done) expectNoSecret(`action ${r.status}`, r, t.secrets);
    expect(done.map((r) => r.status)).toEqual([200, 200]);
    // The log: every action, refused or done, and still no secret (this logger scrubs nothing). A
    // refusal has a line of its own once per reason in 10 s (the second wrong token is counted).
    expect(logs.match(/status page action refused/g)).toHaveLength(3);
    expect(logs).toContain('status page action: dead letters retried');
    expect(logs).toContain('status page action: stats posted now');
    await t.agent.stop();
    const summary = 'status page actions refused in the last 10 s: 2 wrong_token, 1 cross_origin, 1 unknown_action';
    expect(logs).toContain(`${summary} (the first of each reason was logged)`);
    for (const secret of t.secrets) expect(logs.includes(secret), `a log line carries ${secret.slice(0, 8)}...`).toBe(false);
  });

  it('escapes what comes from outside: a username and a hook error stay text', async () => {
    const t = await startStatusAgent();
    await deadLetterFrom(t, XSS_NAME);
    const page = await call(`${t.url}/`);
    expect(page.text).toContain(escapeHtml(XSS_NAME));
    expect(page.text).toContain(escapeHtml(HOOK_ERROR_BODY));
    expect(page.text).not.toContain('<img');
    expect(page.text).not.toContain('<script>alert');
    // The JSON is data: the name as given, served as JSON that no browser sniffs into HTML.
    const data = await call(`${t.url}/status.json`);
    expect(data.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(data.headers.get('x-content-type-options')).toBe('nosniff');
    expect((data.body as StatusDocument).votes.recent.map((v) => v.name)).toContain(XSS_NAME);
  });

  it('sends a strict Content-Security-Policy, and the page has no inline script, style or handler', async () => {
    const t = await startStatusAgent();
    for (const path of ['/', '/status', '/status.json', '/status/assets/status-page.js']) {
      const res = await call(`${t.url}${path}`);
      expect(res.headers.get('content-security-policy'), path).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
    }
    const directives = new Map(CONTENT_SECURITY_POLICY.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    for (const name of ['script-src', 'style-src', 'connect-src', 'img-src']) expect(directives.get(name), name).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe|https?:|\*|data:/);
    const page = (await call(`${t.url}/`)).text;
    expect(page.match(/<script\b[^>]*>/g)).toEqual(['<script src="status/assets/uPlot.iife.min.js" defer>', '<script src="status/assets/status-page.js" defer>']);
    expect(page).not.toMatch(/\sstyle=|<style|\son[a-z]+=|javascript:|https?:\/\/(?!127\.0\.0\.1)/i);
  });

  it('refuses actions without the token, with a wrong one, and from another origin; with it, retries and posts', async () => {
    const t = await startStatusAgent();
    const key = await deadLetterFrom(t, 'bob');
    t.hook.failing = false;
    const body = { keys: [key], hook: HOOK };
    expect((await action(t, 'retry', { json: body })).status).toBe(401);
    const wrong = await action(t, 'retry', { json: body, token: `${PLANTED.adminToken}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer');
    expect(wrong.body.error).toContain('Authorization: Bearer');
    const foreignHeaders: Record<string, string>[] = [{ origin: 'http://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }];
    for (const headers of foreignHeaders) {
      const foreign = await action(t, 'retry', { json: body, token: PLANTED.adminToken, headers });
      expect(foreign.status, JSON.stringify(headers)).toBe(403);
      expect(foreign.body.error).toContain('cross-origin');
    }
    // A form post (what a page elsewhere could send without a preflight) is not JSON: refused too.
    expect((await action(t, 'retry', { token: PLANTED.adminToken, body: 'keys=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415);
    expect((await json(t)).votes.deadLetterCount).toBe(1);
    expect(t.hook.rewarded).not.toContain(key);

    const host = new URL(t.url).host;
    const retried = await action(t, 'retry', { json: body, token: PLANTED.adminToken, headers: { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' } });
    expect(retried.body).toEqual({ ok: true, retried: 1 });
    await eventually('the reward', () => (t.hook.rewarded.includes(key) ? true : undefined));
    expect((await json(t)).votes.deadLetterCount).toBe(0);

    t.setServers(2_024);
    const posted = await action(t, 'post-stats', { token: PLANTED.adminToken });
    expect(posted.status).toBe(200);
    expect(posted.body.posted).toEqual([{ target: 'v1_batch', servers: 2_024, shards: 2 }]);
    expect(t.emu.admin.metrics(t.fx.projectId).at(-1)?.metrics.server_count).toBe(2_024);
    expect((await action(t, 'retry', { json: { hook: 'no-such-hook' }, token: PLANTED.adminToken })).status).toBe(400);
  });

  it('answers only its own names: a rebound page gets 421; by localhost or a listed name every file the page links loads', async () => {
    const health = { listen: '127.0.0.1:0', adminToken: PLANTED.adminToken, allowedHosts: ['status.example'] };
    const t = await startStatusAgent({ config: { health } });
    const port = new URL(t.url).port;
    const as = (host: string, path: string, options: { method?: string; headers?: Record<string, string> } = {}) =>
      sendOnFreshConnection(`${t.url}${path}`, { ...options, headers: { host, ...options.headers } });
    for (const path of ['/', '/status.json', '/status/assets/status-page.js', '/healthz']) {
      const refused = await as(`rebind.attacker.example:${port}`, path);
      expect(refused.status, path).toBe(421);
      // An embedded agent reads no variable: the answer names the option alone.
      expect(refused.text).toContain('add the name to health.allowedHosts\n');
    }
    const headers = { authorization: `Bearer ${PLANTED.adminToken}`, 'content-type': 'application/json' };
    expect((await as('rebind.attacker.example', '/status/actions/post-stats', { method: 'POST', headers })).status).toBe(421);

    for (const host of [`localhost:${port}`, 'status.example', `127.0.0.1:${port}`]) {
      const page = await as(host, '/');
      expect(page.status).toBe(200);
      const links = [...page.text.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => m[1]!).filter((link) => !/^[a-z]+:/.test(link));
      expect(links.length).toBeGreaterThan(3);
      for (const link of [...links, 'status.json']) {
        const path = new URL(link, `${t.url}/`).pathname;
        expect({ host, path, status: (await as(host, path)).status }).toEqual({ host, path, status: 200 });
      }
    }
  });

  it('takes the admin token from the Authorization header only, and acts on no request a page can send without a preflight', async () => {
    const t = await startStatusAgent();
    const posts = () => t.emu.admin.metrics(t.fx.projectId).length;
    await eventually('the first post', async () => (posts() > 0 ? true : undefined));
    const before = posts();
    const token = PLANTED.adminToken;
    const url = `${t.url}/status/actions/post-stats`;
    const basic = Buffer.from(`admin:${token}`).toString('base64');
    const typed = (type: string) => call(url, { method: 'POST', bearer: token, body: '{}', headers: { 'content-type': type } });
    const tries: Array<[string, Promise<TestResponse>, number]> = [
      ['the token in the query', call(`${url}?token=${token}&access_token=${token}`, { method: 'POST', json: {} }), 401],
      ['the token in a cookie', call(url, { method: 'POST', json: {}, headers: { cookie: `token=${token}; adminToken=${token}` } }), 401],
      ['the token as Basic', call(url, { method: 'POST', json: {}, authorization: `Basic ${basic}` }), 401],
      ['the token as a form field', call(url, { method: 'POST', form: { token, adminToken: token } }), 401],
      ['a GET with the token', call(url, { bearer: token }), 405],
      ['a form post with the token', call(url, { method: 'POST', bearer: token, form: { go: '1' } }), 415],
      ['a text/plain post', typed('text/plain'), 415],
      ['a multipart post', typed('multipart/form-data; boundary=x'), 415],
    ];
    for (const [what, answer, status] of tries) expect({ what, status: (await answer).status }).toEqual({ what, status });
    expect(posts()).toBe(before);
    expect((await call(url, { method: 'POST', bearer: token, json: {} })).status).toBe(200);
    expect(posts()).toBe(before + 1);
  });

  it('without health.adminToken the page is read-only, says how to turn actions on, and every action is refused', async () => {
    const t = await startStatusAgent({ adminToken: null });
    const page = (await call(`${t.url}/`)).text;
    expect(page).toContain('Read-only');
    // An embedded agent reads no variable: the page names the option alone.
    expect(page).toContain('set health.adminToken to a long random string');
    expect(page).not.toContain('LISTING_AGENT_');
    expect(page).not.toContain('data-action');
    for (const name of ['retry', 'post-stats']) {
      const res = await action(t, name, { token: PLANTED.adminToken });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('actions are off: set health.adminToken and restart the agent');
    }
    expect((await json(t)).actions).toEqual({ enabled: false });
  });
});
