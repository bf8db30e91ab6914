import { Registry } from 'prom-client';
import type { AgentEvents } from '../../../src/agent/events.js';
import { silentLogger } from '../../../src/log/agent-logger.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import type { Delay } from '../../../src/contract/timer-delay.js';
import { createVotePipeline, type VotePipelineOptions } from '../../../src/votes/pipeline.js';
import type { HookCallContext, Vote, VoteHook, VoteLedger } from '../../../src/votes/types.js';
import { T0 } from './votes-fixtures.js';

/** Lets setImmediate callbacks and the promise chains after them run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A clock and a {@link Delay} that only move when the test says so. */
export function manualTime(start = T0) {
  let time = start;
  let timers: { at: number; seq: number; callback: () => void }[] = [];
  let seq = 0;
  const delays: number[] = [];
  const schedule: Delay = (callback, delayMs) => {
    delays.push(delayMs);
    const timer = { at: time + Math.max(0, delayMs), seq: seq++, callback };
    timers.push(timer);
    return () => {
      timers = timers.filter((other) => other !== timer);
    };
  };
  return {
    now: () => time,
    schedule,
    /** Every delay ever scheduled, in order. */
    delays,
    pending: () => timers.length,
    /** Moves the clock by `ms`, firing the timers due on the way (each followed by a settle). */
    async advance(ms: number): Promise<void> {
      const target = time + ms;
      for (;;) {
        const due = timers.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
        if (due === undefined) break;
        timers = timers.filter((timer) => timer !== due);
        time = due.at;
        due.callback();
        await settle();
      }
      time = target;
      await settle();
    },
  };
}

/** One recorded hook call. */
export interface HookCall {
  key: string;
  attempt: number;
  idempotencyKey: string;
  signal: AbortSignal;
}

/** A hook that records its calls and does what `behaviour` says (default: succeed at once). */
export function fakeHook(name: string, retries = 0, behaviour?: (vote: Vote, context: HookCallContext, call: number) => Promise<void> | void) {
  const calls: HookCall[] = [];
  let running = 0;
  let peak = 0;
  const hook: VoteHook & { calls: HookCall[]; peak(): number } = {
    name,
    retries,
    calls,
    peak: () => peak,
    async run(vote, context) {
      calls.push({ key: vote.key, attempt: context.attempt, idempotencyKey: context.idempotencyKey, signal: context.signal });
      running += 1;
      peak = Math.max(peak, running);
      try {
        await behaviour?.(vote, context, calls.length);
      } finally {
        running -= 1;
      }
    },
  };
  return hook;
}

/** Resolves when `signal` aborts, rejecting with its reason: a hook that runs until stopped. */
export const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/** A pipeline on `ledger` with a manual clock, real metrics and recorded events. */
export function harness(ledger: VoteLedger, hooks: VoteHook[], extra: Partial<VotePipelineOptions> = {}) {
  const time = manualTime();
  const metrics = createAgentMetrics(new Registry());
  const events: { name: keyof AgentEvents; args: unknown[] }[] = [];
  const pipeline = createVotePipeline({
    ledger,
    hooks,
    logger: silentLogger,
    metrics,
    now: time.now,
    schedule: time.schedule,
    random: () => 0.5,
    emit: (name, ...args) => events.push({ name, args }),
    ...extra,
  });
  return { pipeline, time, metrics, events };
}
