import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

function rawRequest(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => resolve(data));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
}

describe('bad input never crashes the emulator and gets the contract error shapes', () => {
  it('answers malformed JSON on v1 with a problem+json 400', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const res = await emu.v1('/projects/@me/metrics', {
      method: 'PATCH',
      bearer: fx.projectToken,
      body: '{"server_count": 12',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
    expect(res.body.detail).toContain('not valid JSON');
  });

  it('answers a non-JSON content type with 415 on v1', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const res = await emu.v1('/projects/@me/metrics', {
      method: 'PATCH',
      bearer: fx.projectToken,
      body: 'server_count=12',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body.detail).toContain('application/json');
  });

  it('answers malformed JSON on v0 with {error}', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const res = await emu.v0('/bots/stats', {
      method: 'POST',
      authorization: fx.projectToken,
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['error']);
  });

  it('caps bodies: 413 above maxBodyBytes, in each family shape', async () => {
    const emu = await startTestEmulator({ settings: { maxBodyBytes: 1024 } });
    const fx = setupBot(emu);
    const big = JSON.stringify({ server_count: 1, pad: 'x'.repeat(2048) });
    const v1 = await emu.v1('/projects/@me/metrics', { method: 'PATCH', bearer: fx.projectToken, body: big, headers: { 'content-type': 'application/json' } });
    expect(v1.status).toBe(413);
    expect(v1.headers.get('content-type')).toContain('application/problem+json');
    const v0 = await emu.v0('/bots/stats', { method: 'POST', authorization: fx.projectToken, body: big, headers: { 'content-type': 'application/json' } });
    expect(v0.status).toBe(413);
    expect(v0.body.error).toContain('1024');
    // Still serving afterwards.
    expect((await emu.root('/')).status).toBe(200);
  });

  it('answers unknown routes and methods per family', async () => {
    const emu = await startTestEmulator();
    const v1 = await emu.v1('/does-not-exist');
    expect(v1.status).toBe(404);
    expect(v1.headers.get('content-type')).toContain('application/problem+json');
    const method = await emu.v1('/projects/@me/votes', { method: 'DELETE' });
    expect(method.status).toBe(405);
    expect(method.headers.get('allow')).toContain('GET');
    const v0 = await emu.v0('/nothing/here');
    expect(v0.status).toBe(404);
    expect(Object.keys(v0.body)).toEqual(['error']);
    const outside = await emu.root('/favicon.ico');
    expect(outside.status).toBe(404);
    const admin = await emu.adminCall('/unknown', { method: 'POST', json: {} });
    expect(admin.status).toBe(404);
    expect(admin.body.error).toContain('no route');
  });

  it('answers malformed JSON and invalid fields on the admin API with a 400 naming the field', async () => {
    const emu = await startTestEmulator();
    const broken = await emu.adminCall('/users', { body: '{', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    const invalid = await emu.adminCall('/projects', { json: { platform: 'discord', type: 'bot', platform_id: 'abc' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toContain('platform_id');
    const unknownUser = await emu.adminCall('/votes', { json: { project_id: '1', user_id: '2' } });
    expect(unknownUser.status).toBe(404);
  });

  it('survives garbage bytes on the socket and keeps serving', async () => {
    const emu = await startTestEmulator();
    const port = Number(new URL(emu.urls.origin).port);
    const answer = await rawRequest(port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(answer).toContain('400');
    const ok = await emu.root('/');
    expect(ok.status).toBe(200);
  });
});
