import { describe, expect, expectTypeOf, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import type { AgentEvents } from '../../../src/agent/events.js';
import type { Capability } from '../../../src/runtime/capability.js';
import { ConfigError } from '../../../src/config/errors.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

describe('agent events are typed', () => {
  it('names each event with its argument tuple', () => {
    expectTypeOf<AgentEvents['ready']>().toEqualTypeOf<[info: { projectId: string; projectName: string }]>();
    expectTypeOf<AgentEvents['error']>().toEqualTypeOf<[error: Error]>();
    // A listener with the wrong arguments does not compile.
    const check = (agent: ListingAgent) => {
      agent.on('ready', (info) => expectTypeOf(info.projectName).toBeString());
      // @ts-expect-error: 'ready' hands one object, not a number
      agent.on('ready', (n: number) => n);
    };
    expect(typeof check).toBe('function');
  });
});

async function agentFor(options: { token?: string; capabilities?: Capability[] } = {}) {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const store = createMemoryStore();
  const agent = createListingAgent({
    config: { service: { token: options.token ?? fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false } },
    store,
    reconnectDelaysMs: [10],
    transport: { retry: { maxAttempts: 1 } },
    ...(options.capabilities ? { capabilities: options.capabilities } : {}),
  });
  return { emu, fx, store, agent };
}

describe('createListingAgent', () => {
  it('refuses an invalid config at once, naming every problem', () => {
    expect(() => createListingAgent({ config: { service: { token: 'x' }, log: { level: 'loud' } } as never })).toThrow(ConfigError);
    try {
      createListingAgent({ config: { service: { token: 'x' }, log: { level: 'loud' } } as never });
    } catch (error) {
      const paths = (error as ConfigError).problems.map((problem) => problem.path);
      expect(paths).toEqual(expect.arrayContaining(['service.token', 'log.level']));
    }
  });

  it('starts, reaches the service, runs capabilities in order, and stops them in reverse with a deadline', async () => {
    const calls: string[] = [];
    const capability = (name: string): Capability => ({
      name,
      async start(context) {
        calls.push(`start ${name}`);
        context.readiness.set(name, true, 'running');
      },
      async stop(deadline) {
        calls.push(`stop ${name} ${deadline > Date.now() ? 'before deadline' : 'late'}`);
      },
    });
    const { agent, store } = await agentFor({ capabilities: [capability('a'), capability('b')] });
    const ready = new Promise((resolve) => agent.once('ready', resolve));
    await agent.start();
    expect(await ready).toMatchObject({ projectName: 'Test Bot' });
    expect(agent.phase).toBe('running');
    expect(agent.readiness.snapshot().ready).toBe(true);
    const stopped = new Promise((resolve) => agent.once('stopped', () => resolve(true)));
    await agent.stop();
    await agent.stop(); // idempotent
    expect(await stopped).toBe(true);
    expect(calls).toEqual(['start a', 'start b', 'stop b before deadline', 'stop a before deadline']);
    expect(store.snapshot()['agent:lastRun']).toMatchObject({ startedAt: expect.any(String), stoppedAt: expect.any(String) });
    await expect(agent.start()).rejects.toThrow('already');
  });

  it('keeps running when the service is unreachable, says why, and recovers when it comes back', async () => {
    const { agent, emu } = await agentFor();
    emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 503, count: 3 });
    const errors: Error[] = [];
    agent.on('error', (error) => errors.push(error));
    await agent.start();
    expect(agent.phase).toBe('connecting');
    const service = agent.readiness.snapshot().components.service!;
    expect(service.ready).toBe(false);
    expect(service.detail).toContain('503');
    await new Promise((resolve) => agent.once('ready', resolve));
    expect(agent.phase).toBe('running');
    expect(errors.length).toBeGreaterThanOrEqual(1);
    await agent.stop();
  });

  it('never throws from an error event without a listener', async () => {
    const { agent, emu } = await agentFor();
    emu.admin.deleteProject([...emu.context.state.projects.keys()][0]!);
    await agent.start();
    expect(agent.readiness.snapshot().components.service!.detail).toContain('404');
    await agent.stop();
    expect(agent.phase).toBe('stopped');
  });

  it('is disposable with await using', async () => {
    const { agent } = await agentFor();
    {
      await using disposable = agent;
      await disposable.start();
    }
    expect(agent.phase).toBe('stopped');
  });
});
