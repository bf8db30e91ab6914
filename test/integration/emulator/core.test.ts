import { describe, expect, it } from 'vitest';
import { startTestEmulator, setupBot } from '../../helpers/emulator.js';

describe('emulator core', () => {
  it('serves an index of its URLs at /', async () => {
    const emu = await startTestEmulator();
    const res = await emu.root('/');
    expect(res.status).toBe(200);
    expect(res.body.v1).toBe(`${emu.urls.origin}/api/v1`);
    expect(res.body.v0).toBe(`${emu.urls.origin}/api`);
  });

  it('creates users and projects through the admin API', async () => {
    const emu = await startTestEmulator();
    const user = await emu.adminCall('/users', { json: { username: 'alice' } });
    expect(user.status).toBe(201);
    expect(user.body.username).toBe('alice');
    expect(user.body.platform_id).toMatch(/^\d{17,20}$/);
    const project = await emu.adminCall('/projects', { json: { platform: 'discord', type: 'bot', owner_user_id: user.body.id } });
    expect(project.status).toBe(201);
    expect(project.body.project_token.split('.')).toHaveLength(3);
    const bad = await emu.adminCall('/projects', { json: { platform: 'roblox', type: 'bot' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('type');
  });

  it('answers unknown v1 routes with problem+json 404 and wrong methods with 405', async () => {
    const emu = await startTestEmulator();
    setupBot(emu);
    const missing = await emu.v1('/nope');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    expect(missing.body).toMatchObject({ type: 'about:blank', title: 'Not Found', status: 404 });
  });

  it("sends its own clock's time as the Date header, so a client can see the service's clock", async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const before = Date.parse((await emu.v1('/projects/@me', { bearer: fx.projectToken })).headers.get('date')!);
    expect(Math.abs(before - Date.now())).toBeLessThan(2_000);
    emu.admin.advanceClock(600);
    const after = Date.parse((await emu.v1('/projects/@me', { bearer: 'not-a-token' })).headers.get('date')!);
    expect(after - Date.now()).toBeGreaterThan(598_000);
    expect(after - Date.now()).toBeLessThan(602_000);
  });
});
