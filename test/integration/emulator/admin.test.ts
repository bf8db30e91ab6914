import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

describe('admin API: faults', () => {
  it('fails the next matching requests with the injected status and Retry-After, then recovers', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const fault = await emu.adminCall('/faults', { json: { method: 'get', path: '/api/v1/projects/@me', status: 429, retry_after: 7, count: 2 } });
    expect(fault.status).toBe(201);
    for (let i = 0; i < 2; i += 1) {
      const res = await emu.v1('/projects/@me', { bearer: fx.projectToken });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('7');
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    // A POST to the same path does not match a GET fault, and the fault is used up anyway now.
    const after = await emu.v1('/projects/@me', { bearer: fx.projectToken });
    expect(after.status).not.toBe(429);
    expect(emu.admin.faults()).toEqual([]);
  });

  it('matches path prefixes ending in * and only the given method', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    emu.admin.injectFault({ method: 'POST', path: '/api/bots/*', status: 502 });
    const get = await emu.v0(`/bots/${fx.platformId}/stats`, { authorization: fx.projectToken });
    expect(get.status).not.toBe(502);
    const post = await emu.v0('/bots/stats', { authorization: fx.projectToken, json: { server_count: 5 } });
    expect(post.status).toBe(502);
    expect(Object.keys(post.body)).toEqual(['error']);
  });

  it('resets the socket for a reset fault', async () => {
    const emu = await startTestEmulator();
    emu.admin.injectFault({ path: '/api/v1/projects/@me', reset: true });
    await expect(fetch(`${emu.urls.v1}/projects/@me`)).rejects.toThrow();
    const next = await emu.v1('/projects/@me');
    expect(next.status).toBe(401);
  });

  it('delays a request and then answers it normally when only delay_ms is given', async () => {
    const emu = await startTestEmulator();
    emu.admin.injectFault({ path: '/api/v1/projects/@me', delay_ms: 150 });
    const started = performance.now();
    const res = await emu.v1('/projects/@me');
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(res.status).toBe(401);
  });

  it('refuses a fault without status, delay or reset', async () => {
    const emu = await startTestEmulator();
    const res = await emu.adminCall('/faults', { json: { path: '/api/v1/x' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('status');
  });
});

describe('admin API: applications', () => {
  it('takes 1 to 10 redirect URIs, absolute https or http on loopback, without fragments', async () => {
    const emu = await startTestEmulator();
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/cb/${i}`);
    expect((await emu.adminCall('/applications', { json: { redirect_uris: uris(10) } })).status).toBe(201);
    const eleven = await emu.adminCall('/applications', { json: { redirect_uris: uris(11) } });
    expect(eleven.status).toBe(400);
    expect(eleven.body.error).toContain('redirect_uris');
    expect((await emu.adminCall('/applications', { json: { redirect_uris: [] } })).status).toBe(400);
    expect((await emu.adminCall('/applications', { json: { redirect_uris: ['http://127.0.0.1:9/cb'] } })).status).toBe(201);
    for (const bad of ['http://example.com/cb', 'https://example.com/cb#frag', '/relative']) {
      const res = await emu.adminCall('/applications', { json: { redirect_uris: [bad] } });
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toContain('redirect_uris.0');
    }
  });
});

describe('admin API: clock, reset, request log', () => {
  it('advances the emulator clock without sleeping', async () => {
    const emu = await startTestEmulator({ now: () => Date.parse('2026-01-01T00:00:00Z') });
    const before = await emu.adminCall('/clock');
    expect(before.body.now).toBe('2026-01-01T00:00:00.000Z');
    const moved = await emu.adminCall('/clock', { json: { advance_seconds: 3600 } });
    expect(moved.body.now).toBe('2026-01-01T01:00:00.000Z');
    const bad = await emu.adminCall('/clock', { json: { advance_seconds: -5 } });
    expect(bad.status).toBe(400);
  });

  it('resets to a seed with stable IDs, and seeded project tokens work', async () => {
    const emu = await startTestEmulator();
    setupBot(emu);
    const seed = {
      users: [{ id: '1000000000000000001', username: 'seeded', platform_id: '200000000000000001' }],
      projects: [{ id: '1000000000000000010', platform: 'discord', type: 'bot', platform_id: '300000000000000001', name: 'Seeded Bot', owner_user_id: '1000000000000000001' }],
      votes: [{ project_id: '1000000000000000010', user_id: '1000000000000000001' }],
    };
    const res = await emu.adminCall('/reset', { json: seed });
    expect(res.status).toBe(204);
    expect(emu.context.state.users.size).toBe(1);
    expect(emu.context.state.projects.size).toBe(1);
    expect(emu.context.state.votes).toHaveLength(1);
    const token = emu.context.state.projectTokens.get('1000000000000000010')!;
    const detail = await emu.v1('/projects/@me', { bearer: token });
    expect(detail.status).toBe(200);
    expect(detail.body.name).toBe('Seeded Bot');
    const broken = await emu.adminCall('/reset', { json: { projects: [{ platform: 'discord' }] } });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toContain('projects.0.type');
  });

  it('logs service requests with status and credential kind, not admin requests', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    await emu.v1('/projects/@me', { bearer: fx.projectToken });
    await emu.v1(`/projects/${fx.projectId}`, { bearer: fx.accessToken });
    await emu.adminCall('/clock');
    const log = await emu.adminCall('/requests');
    expect(log.body.map((r: { path: string; status: number; credential: string }) => [r.path, r.status, r.credential])).toEqual([
      ['/api/v1/projects/@me', 200, 'project'],
      [`/api/v1/projects/${fx.projectId}`, 200, 'oauth'],
    ]);
    await emu.adminCall('/requests', { method: 'DELETE' });
    expect((await emu.adminCall('/requests')).body).toEqual([]);
  });
});
