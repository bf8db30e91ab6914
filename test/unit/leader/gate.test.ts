import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Capability, CapabilityContext } from '../../../src/runtime/capability.js';
import { silentLogger } from '../../../src/log/agent-logger.js';
import { createReadiness } from '../../../src/runtime/readiness.js';
import { whileLeading } from '../../../src/leader/gate.js';
import type { Leadership, LeadershipEvents } from '../../../src/runtime/leadership.js';

/** A leadership the test moves by hand. */
function fakeLeadership(): Leadership & { lead(leaderId?: string): void; standBy(leaderId?: string): void } {
  let leading = false;
  let leader: string | undefined;
  const emitter = new EventEmitter<LeadershipEvents>();
  return Object.defineProperties(emitter, {
    agentId: { value: 'me' },
    isLeader: { get: () => leading },
    fencingToken: { get: () => (leading ? 1 : undefined) },
    leaderId: { get: () => leader },
    lead: {
      value: () => {
        leading = true;
        leader = 'me';
        emitter.emit('leader', 'me');
        emitter.emit('change', true);
      },
    },
    standBy: {
      value: (leaderId?: string) => {
        const was = leading;
        leading = false;
        leader = leaderId;
        emitter.emit('leader', leaderId);
        if (was) emitter.emit('change', false);
      },
    },
  }) as never;
}

function context(): CapabilityContext {
  return {
    config: {} as never,
    client: {} as never,
    store: {} as never,
    logger: silentLogger,
    metrics: {} as never,
    readiness: createReadiness(() => 0),
    now: () => Date.now(),
    reportError: () => undefined,
    emit: () => undefined,
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('whileLeading', () => {
  it('stands by (ready) while another leads, starts on the lease, stops when it is lost, in order', async () => {
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const inner: Capability = {
      name: 'stats',
      async start(ctx) {
        calls.push('start');
        // A slow start: a lease lost meanwhile waits for it, then undoes it.
        await new Promise<void>((resolve) => (release = resolve));
        ctx.readiness.set('stats', true, 'posting');
      },
      async stop() {
        calls.push('stop');
      },
    };
    const leadership = fakeLeadership();
    const ctx = context();
    const gate = whileLeading(inner, leadership);
    leadership.standBy('other');
    await gate.start(ctx);
    expect(ctx.readiness.snapshot().components.stats).toMatchObject({ ready: true, detail: 'standing by (leader: other)' });
    expect(calls).toEqual([]);

    leadership.lead();
    await tick();
    leadership.standBy('third');
    await tick();
    expect(calls).toEqual(['start']);
    release();
    await tick();
    await tick();
    expect(calls).toEqual(['start', 'stop']);
    expect(gate.active).toBe(false);
    expect(ctx.readiness.snapshot().components.stats).toMatchObject({ ready: true, detail: 'standing by (leader: third)' });

    leadership.lead();
    await tick();
    release();
    await tick();
    expect(gate.active).toBe(true);
    expect(ctx.readiness.snapshot().components.stats).toMatchObject({ ready: true, detail: 'posting' });

    await gate.stop(Date.now() + 1_000);
    expect(calls).toEqual(['start', 'stop', 'start', 'stop']);
    // Stopped for good: leadership changes do nothing now.
    leadership.standBy('x');
    leadership.lead();
    await tick();
    expect(calls).toHaveLength(4);
  });

  it('drops what the inner capability writes to its component once stopped, and retries a failed start', async () => {
    let late: CapabilityContext | undefined;
    let failures = 1;
    const inner: Capability = {
      name: 'commands',
      async start(ctx) {
        late = ctx;
        if (failures-- > 0) throw new Error('service down');
        ctx.readiness.set('commands', true, 'synced');
      },
      async stop() {},
    };
    const leadership = fakeLeadership();
    const ctx = context();
    const errors: unknown[] = [];
    ctx.reportError = (error) => errors.push(error);
    const gate = whileLeading(inner, leadership, { retryStartMs: 20 });
    leadership.lead();
    await gate.start(ctx);
    expect(ctx.readiness.snapshot().components.commands).toMatchObject({ ready: false, detail: 'could not start as the leader: service down' });
    expect(errors).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(gate.active).toBe(true);
    expect(ctx.readiness.snapshot().components.commands).toMatchObject({ ready: true, detail: 'synced' });

    leadership.standBy('other');
    await tick();
    late!.readiness.set('commands', false, 'a late failure');
    expect(ctx.readiness.snapshot().components.commands).toMatchObject({ ready: true, detail: 'standing by (leader: other)' });
    await gate.stop(Date.now() + 1_000);
  });
});
