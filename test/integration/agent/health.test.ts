import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { ListenError } from '../../../src/http/listen-error.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';

const agents: ListingAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop()));
});

/** An agent against the emulator with its health server on 127.0.0.1:0, stopped after the test. */
function agentFor(emu: TestEmulator, token: string): ListingAgent {
  const agent = createListingAgent({
    config: { service: { token, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { listen: '127.0.0.1:0' } },
    store: createMemoryStore(),
    // Retry far later than the test runs: the first try's outcome is what /readyz shows.
    reconnectDelaysMs: [60_000],
  });
  agents.push(agent);
  return agent;
}

describe('agent: health server', () => {
  it('serves /readyz 200 with the service ready once the project is reached, and closes the port on stop()', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const agent = agentFor(emu, fx.projectToken);
    await agent.start();
    const url = agent.healthServerUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const ready = await call(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body.ready).toBe(true);
    expect(ready.body.components.service).toMatchObject({ ready: true, detail: expect.stringContaining(fx.projectId) });
    expect(ready.body.components.store).toMatchObject({ ready: true });
    expect((await call(`${url}/healthz`)).body).toEqual({ status: 'ok' });
    const metrics = await call(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('listing_agent_posts_total');

    await agent.stop();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('serves /readyz 503 naming the service problem when the token is refused', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    emu.admin.deleteProject(fx.projectId);
    const agent = agentFor(emu, fx.projectToken);
    agent.on('error', () => undefined);
    await agent.start();
    const url = agent.healthServerUrl!;

    const res = await call(`${url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.body.ready).toBe(false);
    expect(res.body.components.store.ready).toBe(true);
    expect(res.body.components.service.ready).toBe(false);
    expect(res.body.components.service.detail).toContain('failed with 404: the project of this token no longer exists');
    // The token never shows, not even in the reason.
    expect(res.text).not.toContain(fx.projectToken);
    // Alive all the same: the orchestrator should wait, not restart it.
    expect((await call(`${url}/healthz`)).status).toBe(200);

    await agent.stop();
    await expect(fetch(`${url}/readyz`)).rejects.toThrow();
  });

  it('serves the status page (embedded mode) beside the health paths, unless health.statusPage is off', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const agent = agentFor(emu, fx.projectToken);
    await agent.start();
    const page = await call(`${agent.healthServerUrl!}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<h1>Test Bot <span class="quiet">· listing-agent status</span></h1>');
    const status = await call(`${agent.healthServerUrl!}/status.json`);
    expect(status.body).toMatchObject({ version: 1, agent: { mode: 'embedded', project: { id: fx.projectId, name: 'Test Bot' }, ready: true }, actions: { enabled: false } });
    const off = createListingAgent({
      config: { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { listen: '127.0.0.1:0', statusPage: false } },
      store: createMemoryStore(),
    });
    agents.push(off);
    await off.start();
    expect((await call(`${off.healthServerUrl!}/`)).status).toBe(404);
    expect((await call(`${off.healthServerUrl!}/status.json`)).status).toBe(404);
    expect((await call(`${off.healthServerUrl!}/readyz`)).status).toBe(200);
  });

  it('embedded, on a port another agent holds: posts its stats all the same, emits a ListenError naming health.listen, and a later start() listens once the port is free', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const first = agentFor(emu, fx.projectToken);
    await first.start();
    const port = new URL(first.healthServerUrl!).port;
    const second = createListingAgent({
      config: { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { listen: `127.0.0.1:${port}` }, stats: { enabled: true } },
      countSource: { description: 'the second bot', read: async () => ({ ready: true, serverCount: 42, shardCount: 1 }) },
      store: createMemoryStore(),
      logger: false,
    });
    agents.push(second);
    const errors: Error[] = [];
    second.on('error', (error) => errors.push(error));

    await second.start();
    // The option an embedded agent reads, and no variable: it reads none.
    const message = `health server: 127.0.0.1:${port} is in use: set health.listen to a free port or stop the other process`;
    expect(errors).toEqual([expect.objectContaining({ code: 'listen', message })]);
    expect(errors[0]).toBeInstanceOf(ListenError);
    expect(second.healthServerUrl).toBeUndefined();
    await vi.waitFor(() => expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count)).toEqual([42]), { timeout: 10_000, interval: 50 });
    expect(second.phase).toBe('running');
    expect((await call(`${first.healthServerUrl!}/readyz`)).status).toBe(200);

    // Still taken: a later start() tries again, says so again, and the agent runs on.
    await second.start();
    expect(errors.map((error) => error.message)).toEqual([message, message]);
    expect(second.phase).toBe('running');

    await first.stop();
    await second.start();
    expect(second.healthServerUrl).toBe(`http://127.0.0.1:${port}`);
    expect((await call(`${second.healthServerUrl!}/healthz`)).body).toEqual({ status: 'ok' });
    expect((await call(`${second.healthServerUrl!}/readyz`)).status).toBe(200);
    // Listening now: another start() changes nothing.
    await second.start();
    expect(errors).toHaveLength(2);
    await second.stop();
    await expect(second.start()).rejects.toThrow('already started and stopped');
  });
});
