import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { AgentEvents } from '../../../src/agent/events.js';
import { createInProcessHook, type VoteListener } from '../../../src/votes/hooks/index.js';
import { hookContext, hookFailure, sampleVote } from '../../helpers/votes.js';

const vote = sampleVote();

const context = (signal?: AbortSignal) => hookContext(vote, 1, signal);

describe('createInProcessHook', () => {
  it('is named vote-event with 5 retries by default', () => {
    const hook = createInProcessHook({ listeners: () => [] });
    expect(hook.name).toBe('vote-event');
    expect(hook.retries).toBe(5);
    expect(createInProcessHook({ name: 'x', listeners: () => [], retries: 0 }).retries).toBe(0);
  });

  it('fails with no listener, so that the vote stays pending and is retried (not counted as rewarded)', async () => {
    const error = await hookFailure(createInProcessHook({ listeners: () => [] }).run(vote, context()));
    expect(error.reason).toBe('no_listener');
    expect(error.message).toBe('hook "vote-event": no vote listener is attached: attach one with agent.on(\'vote\', ...); the vote stays pending and is retried');
    const reminder = await hookFailure(createInProcessHook({ name: 'reminder-event', event: 'reminder', listeners: () => [] }).run(vote, context()));
    expect(reminder.message).toContain("no reminder listener is attached: attach one with agent.on('reminder', ...)");
  });

  it('calls every listener with the vote and waits for all of them', async () => {
    const seen: string[] = [];
    const slow: VoteListener = async (v) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      seen.push(`slow ${v.key}`);
    };
    const quick: VoteListener = (v) => void seen.push(`quick ${v.key}`);
    await createInProcessHook({ listeners: () => [slow, quick] }).run(vote, context());
    expect(seen.sort()).toEqual(['quick 42:1735732800000', 'slow 42:1735732800000']);
  });

  it('fails when a listener throws, after the others ran, naming it', async () => {
    const ran: string[] = [];
    function reward(): never {
      throw new Error('database is down');
    }
    const other: VoteListener = async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      ran.push('other');
    };
    const error = await hookFailure(createInProcessHook({ listeners: () => [other, reward] }).run(vote, context()));
    expect(ran).toEqual(['other']);
    expect(error.code).toBe('vote_hook_failed');
    expect(error.reason).toBe('listener');
    expect(error.hook).toBe('vote-event');
    expect(error.message).toBe('hook "vote-event": vote listener #2 of 2 (reward): database is down');
    expect((error.cause as Error).message).toBe('database is down');
  });

  it('fails when listeners reject, listing each', async () => {
    const error = await hookFailure(
      createInProcessHook({
        listeners: () => [async () => Promise.reject(new Error('one')), async () => undefined, async () => Promise.reject(new Error('three'))],
      }).run(vote, context()),
    );
    expect(error.message).toContain('2 vote listeners failed: #1 of 3: one; #3 of 3: three');
    expect(error.cause).toBeInstanceOf(AggregateError);
  });

  it('reads the listeners at each call', async () => {
    const listeners: VoteListener[] = [];
    const hook = createInProcessHook({ listeners: () => listeners });
    await expect(hook.run(vote, context())).rejects.toThrow('no vote listener is attached');
    listeners.push(() => {
      throw new Error('late');
    });
    await expect(hook.run(vote, context())).rejects.toThrow('late');
  });

  it("works with the agent's typed emitter; rawListeners calls a once listener once", async () => {
    const agent = new EventEmitter<AgentEvents>();
    let onceCalls = 0;
    let onCalls = 0;
    agent.once('vote', () => void onceCalls++);
    agent.on('vote', async (v) => {
      expect(v.key).toBe(vote.key);
      onCalls++;
    });
    const hook = createInProcessHook({ listeners: () => agent.rawListeners('vote') });
    await hook.run(vote, context());
    await hook.run(vote, context());
    expect({ onceCalls, onCalls }).toEqual({ onceCalls: 1, onCalls: 2 });
    // listeners() fits the type as well.
    createInProcessHook({ listeners: () => agent.listeners('vote') });
  });

  it('stops waiting when the call is aborted, and when its own timeout passes', async () => {
    const never: VoteListener = () => new Promise(() => undefined);
    const controller = new AbortController();
    const pending = hookFailure(createInProcessHook({ listeners: () => [never] }).run(vote, context(controller.signal)));
    controller.abort();
    expect((await pending).reason).toBe('aborted');

    const timedOut = await hookFailure(createInProcessHook({ listeners: () => [never], timeoutMs: 20 }).run(vote, context()));
    expect(timedOut.reason).toBe('timeout');
    expect(timedOut.message).toContain('did not finish within 20 ms');

    let called = false;
    const aborted = AbortSignal.abort();
    const before = await hookFailure(createInProcessHook({ listeners: () => [() => void (called = true)] }).run(vote, context(aborted)));
    expect(before.reason).toBe('aborted');
    expect(called).toBe(false);
  });
});
