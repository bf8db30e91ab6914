import { describe, expect, it } from 'vitest';
import {
  addJob,
  advanceLane,
  backlogDrained,
  completesVote,
  confirmIngested,
  createPipelineState,
  deadLetterOf,
  failureAction,
  holdsCaller,
  hookDone,
  onRoad,
  resumeOf,
  type PipelineState,
  type Task,
} from '../../../src/votes/pipeline-state.js';
import type { VoteHook } from '../../../src/votes/types.js';
import { makeVote, T0 } from './votes-fixtures.js';

/**
 * The pipeline's decisions without hooks, ledger or timers: lanes, slots, finished votes, what
 * follows a success or a failure, which votes of a batch are new, when the poller is held.
 */

const hook = (name: string, retries = 0): VoteHook => ({ name, retries, run: async () => undefined });

function running(hooks: VoteHook[], options: { maxBacklog?: number } = {}): PipelineState {
  const state = createPipelineState(hooks, options);
  state.phase = 'running';
  state.generation = 1;
  return state;
}

/** Takes every ready task, as the pump would with free slots. */
function takeReady(state: PipelineState): Task[] {
  const tasks: Task[] = [];
  for (let task = state.ready.shift(); task !== undefined; task = state.ready.shift()) tasks.push(task);
  return tasks;
}

const keysOf = (tasks: Task[]) => tasks.map((task) => `${task.hook.name}:${task.job.vote.userId}`);

describe('createPipelineState', () => {
  it('refuses two hooks of one name, and defaults concurrency 16 (at least 1) and maxBacklog 2000', () => {
    expect(() => createPipelineState([hook('a'), hook('a')])).toThrow(/two vote hooks are named "a"/);
    const state = createPipelineState([hook('a')]);
    expect([state.concurrency, state.maxBacklog, state.phase]).toEqual([16, 2_000, 'new']);
    expect(createPipelineState([hook('a')], { concurrency: 0 }).concurrency).toBe(1);
  });
});

describe('lanes: one user at a time per hook, in recorded order', () => {
  it('a user\'s later votes wait behind the earlier one; other users and other hooks do not', () => {
    const [a, b] = [hook('a'), hook('b')];
    const state = running([a, b]);
    const first = addJob(state, makeVote('u1', 0), ['a', 'b'], false);
    addJob(state, makeVote('u1', 1_000), ['a', 'b'], false);
    addJob(state, makeVote('u2', 0), ['a', 'b'], false);
    expect(first.outstanding).toBe(2);
    const ready = takeReady(state);
    expect(keysOf(ready)).toEqual(['a:u1', 'b:u1', 'a:u2', 'b:u2']);
    expect(ready.every((task) => task.job.vote.key !== makeVote('u1', 1_000).key)).toBe(true);

    // u1's first vote is done for hook a: its second vote for a becomes ready, not for b.
    expect(advanceLane(state, ready[0]!)).toBe(true);
    expect(keysOf(takeReady(state))).toEqual(['a:u1']);
    // u2 had nothing behind: its lane closes, and a new vote of u2 is ready at once.
    expect(advanceLane(state, ready[2]!)).toBe(false);
    addJob(state, makeVote('u2', 5_000), ['a'], false);
    expect(keysOf(takeReady(state))).toEqual(['a:u2']);
  });

  it('hooks not configured are left out; a job with none left is finished at once', () => {
    const state = running([hook('a')]);
    const job = addJob(state, makeVote('u1'), ['gone', 'also-gone'], true, true);
    expect(job.outstanding).toBe(0);
    expect(state.ready.length).toBe(0);
    expect(job).toMatchObject({ recordEachHook: true, gaveUp: true });
  });

  it('a task of an earlier run moves no lane and finishes nothing', () => {
    const state = running([hook('a')]);
    addJob(state, makeVote('u1'), ['a'], false);
    const [task] = takeReady(state);
    state.generation += 1;
    expect(advanceLane(state, task!)).toBe(false);
    expect(hookDone(state, task!)).toBe(false);
    expect(task!.job.outstanding).toBe(1);
  });
});

describe('finishing a vote', () => {
  it('the last hook done finishes the vote; the `complete` record says it unless each hook is recorded', () => {
    const state = running([hook('a'), hook('b')]);
    addJob(state, makeVote('u1'), ['a', 'b'], false);
    const [ta, tb] = takeReady(state);
    expect(completesVote(state, ta!)).toBe(false); // b is still outstanding
    expect(hookDone(state, ta!)).toBe(false);
    expect(completesVote(state, tb!)).toBe(true);
    expect(hookDone(state, tb!)).toBe(true);

    const lettered = running([hook('a')]);
    addJob(lettered, makeVote('u2'), ['a'], true);
    expect(completesVote(lettered, takeReady(lettered)[0]!)).toBe(false);
  });

  it('after the stop nothing finishes', () => {
    const state = running([hook('a')]);
    addJob(state, makeVote('u1'), ['a'], false);
    const [task] = takeReady(state);
    state.phase = 'stopped';
    expect(completesVote(state, task!)).toBe(false);
    expect(hookDone(state, task!)).toBe(false);
  });

  it('a pending entry resumes the hooks neither done nor dead-lettered', () => {
    const state = running([hook('a'), hook('b'), hook('c')]);
    expect(resumeOf(state, { vote: makeVote('u1'), done: ['a'], complete: false, deadLettered: ['c'] })).toEqual({ names: ['b'], gaveUp: true });
    expect(resumeOf(state, { vote: makeVote('u1'), done: [], complete: false })).toEqual({ names: ['a', 'b', 'c'], gaveUp: false });
  });
});

describe('after a failure', () => {
  it('retries while the hook has retries, then dead-letters; abandons once the run stopped', () => {
    const state = running([hook('a', 2)]);
    addJob(state, makeVote('u1'), ['a'], false);
    const [task] = takeReady(state);
    expect(failureAction(state, task!)).toBe('retry');
    task!.attempt = 2;
    expect(failureAction(state, task!)).toBe('retry');
    task!.attempt = 3;
    expect(failureAction(state, task!)).toBe('dead_letter');
    state.phase = 'stopping';
    expect(failureAction(state, task!)).toBe('abandon');
  });

  it('the dead letter names the vote, the hook, the attempts and the error in one short line', () => {
    const state = running([hook('a')]);
    addJob(state, makeVote('u1'), ['a'], false);
    const [task] = takeReady(state);
    const letter = deadLetterOf(task!, new Error(`refused\n${'x'.repeat(600)}`), T0);
    expect(letter).toMatchObject({ key: makeVote('u1').key, hook: 'a', attempts: 1, failedAt: new Date(T0).toISOString() });
    expect(letter.error.length).toBe(503);
  });
});

describe('ingesting a batch', () => {
  it('marks the road, and confirms votes of an earlier failed batch that the ledger holds after all', () => {
    const state = running([hook('a')]);
    const [v1, v2, v3] = [makeVote('u1'), makeVote('u2'), makeVote('u3')];
    const v2OnRoad = { ...v2, road: 'webhook' as const };
    const marked = onRoad([v1, v2OnRoad, v3], 'webhook');
    expect(marked.map((vote) => vote.road)).toEqual(['webhook', 'webhook', 'webhook']);
    expect(marked[1]).toBe(v2OnRoad); // a vote already on the road is not copied
    expect(marked[0]).not.toBe(v1);
    expect(v1.road).toBe('poll');
    state.unconfirmed.set(v2.key, v2);
    state.unconfirmed.set('other', makeVote('u9'));
    // v1 is new; v2 was written by the failed batch (not accepted again, but durable): both run.
    expect(confirmIngested(state, marked, [marked[0]!]).map((vote) => vote.key)).toEqual([v1.key, v2.key]);
    expect([...state.unconfirmed.keys()]).toEqual(['other']);
  });

  it('holds the poller above maxBacklog, never a webhook, and lets it go at half', () => {
    const state = running([hook('a')], { maxBacklog: 4 });
    for (let user = 0; user < 5; user++) addJob(state, makeVote(user), ['a'], false);
    expect(holdsCaller(state, 'poll')).toBe(true);
    expect(holdsCaller(state, 'webhook')).toBe(false);
    expect(backlogDrained(state)).toBe(false);
    for (const key of [...state.jobs.keys()].slice(0, 3)) state.jobs.delete(key);
    expect(backlogDrained(state)).toBe(true);
    state.jobs.set('x', state.jobs.values().next().value!);
    state.jobs.set('y', state.jobs.values().next().value!);
    state.jobs.set('z', state.jobs.values().next().value!);
    expect(backlogDrained(state)).toBe(false);
    state.phase = 'stopping';
    expect(backlogDrained(state)).toBe(true);
  });
});
