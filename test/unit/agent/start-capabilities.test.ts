import { describe, expect, it } from 'vitest';
import type { Capability, CapabilityContext } from '../../../src/runtime/capability.js';
import { silentLogger } from '../../../src/log/agent-logger.js';
import { startInOrder, type StartHooks } from '../../../src/agent/start-capabilities.js';

function capability(name: string, log: string[], fails = () => false): Capability {
  return {
    name,
    async start(context) {
      log.push(`start ${name}`);
      context.logger.info('hello');
      if (fails()) throw new Error(`${name} port taken`);
    },
    async stop() {
      log.push(`stop ${name}`);
    },
  };
}

function harness() {
  const log: string[] = [];
  const started: string[] = [];
  const marks: string[] = [];
  const hooks: StartHooks = {
    mark: (name, ready, detail) => marks.push(`${name} ${ready} ${detail}`),
    forget: (name) => marks.push(`forget ${name}`),
    onStarted: (c) => started.push(c.name),
    onUndone: (c) => started.splice(started.indexOf(c.name), 1),
    reportError: (error) => log.push(`error ${(error as Error).message}`),
    now: () => 1_000,
  };
  const bindings: unknown[] = [];
  const logger = { ...silentLogger, child: (b: Record<string, unknown>) => (bindings.push(b), silentLogger) };
  const context = { logger } as unknown as CapabilityContext;
  return { log, started, marks, hooks, bindings, context };
}

describe('startInOrder', () => {
  it('starts each in order with a logger bound to its name, and reports each as started', async () => {
    const h = harness();
    await startInOrder([capability('stats', h.log), capability('votes', h.log)], h.context, h.hooks);
    expect(h.log).toEqual(['start stats', 'start votes']);
    expect(h.started).toEqual(['stats', 'votes']);
    expect(h.bindings).toEqual([{ capability: 'stats' }, { capability: 'votes' }]);
    expect(h.marks).toEqual(['stats false starting', 'votes false starting']);
  });

  it('on a failure stops the failed one and those started before it, in reverse, then rethrows', async () => {
    const h = harness();
    let failing = true;
    const all = [capability('stats', h.log), capability('commands', h.log), capability('webhooks', h.log, () => failing), capability('votes', h.log)];
    await expect(startInOrder(all, h.context, h.hooks)).rejects.toThrow('webhooks port taken');
    expect(h.log).toEqual(['start stats', 'start commands', 'start webhooks', 'stop webhooks', 'stop commands', 'stop stats']);
    expect(h.started).toEqual([]);
    expect(h.marks).toContain('webhooks false could not start: webhooks port taken');
    expect(h.marks).toEqual(expect.arrayContaining(['forget commands', 'forget stats']));
    expect(h.marks).not.toContain('forget webhooks');

    // The retry starts each exactly once.
    failing = false;
    h.log.length = 0;
    await startInOrder(all, h.context, h.hooks);
    expect(h.log).toEqual(['start stats', 'start commands', 'start webhooks', 'start votes']);
    expect(h.started).toEqual(['stats', 'commands', 'webhooks', 'votes']);
  });

  it('a stop that fails during the undo is reported, and the rest are still stopped', async () => {
    const h = harness();
    const broken: Capability = { ...capability('stats', h.log), stop: async () => Promise.reject(new Error('stats would not stop')) };
    await expect(startInOrder([broken, capability('votes', h.log, () => true)], h.context, h.hooks)).rejects.toThrow('votes port taken');
    expect(h.log).toEqual(['start stats', 'start votes', 'stop votes', 'error stats would not stop']);
    expect(h.started).toEqual([]);
  });
});
