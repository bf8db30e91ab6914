import type { Capability, CapabilityContext } from '../runtime/capability.js';
import type { Readiness } from '../runtime/readiness.js';
import { standingByDetail, type Leadership } from '../runtime/leadership.js';
import { errorMessage } from '../errors.js';

/** Options of {@link whileLeading}. */
export interface WhileLeadingOptions {
  /** How long the inner capability has to stop when leadership is lost. Default 5 000 ms. */
  stopDeadlineMs?: number;
  /** After a failed start while leading, the next try comes this much later. Default 5 000 ms. */
  retryStartMs?: number;
}

/** A capability that runs only while this agent leads (see {@link whileLeading}). */
export interface LeaderOnlyCapability<C extends Capability = Capability> extends Capability {
  /** The wrapped capability. */
  readonly inner: C;
  /** True while the inner capability is started (this agent leads). */
  readonly active: boolean;
}


/** What a leader-only wrapper holds: the capability, the leadership, and where the two stand. */
interface Gate<C extends Capability> {
  readonly capability: C;
  readonly leadership: Leadership;
  readonly name: string;
  readonly stopDeadlineMs: number;
  readonly retryStartMs: number;
  context: CapabilityContext | undefined;
  active: boolean;
  /** Whether the inner capability may write its readiness (from the start of a start to the start of a stop). */
  writable: boolean;
  /** Starts and stops, one after the other. */
  chain: Promise<void>;
  retryTimer: NodeJS.Timeout | undefined;
  stopped: boolean;
}

/** The agent's readiness, except that the inner capability's own component is ours while it is not active. */
function gatedReadiness(gate: Gate<Capability>, readiness: Readiness): Readiness {
  const { name } = gate;
  return {
    set: (component, ready, detail) => (component === name && !gate.writable ? false : readiness.set(component, ready, detail)),
    remove: (component) => {
      if (component !== name || gate.writable) readiness.remove(component);
    },
    snapshot: () => readiness.snapshot(),
  };
}

function markStandingBy(gate: Gate<Capability>): void {
  gate.context?.readiness.set(gate.name, true, standingByDetail(gate.leadership.leaderId));
}

/** Starts the inner capability as the leader; a failed start is undone and tried again later. */
async function startLeading(gate: Gate<Capability>, ctx: CapabilityContext): Promise<void> {
  const { capability, name } = gate;
  gate.writable = true;
  try {
    await capability.start({ ...ctx, readiness: gatedReadiness(gate, ctx.readiness) });
    gate.active = true;
    ctx.logger.info({}, `${name}: this agent leads, running`);
  } catch (error) {
    gate.writable = false;
    // Whatever half-started is undone before the next try.
    await capability.stop(ctx.now() + gate.stopDeadlineMs).catch(() => undefined);
    const detail = errorMessage(error);
    ctx.readiness.set(name, false, `could not start as the leader: ${detail}`);
    ctx.logger.warn({ err: detail, retryInMs: gate.retryStartMs }, `${name}: could not start as the leader; retrying`);
    ctx.reportError(error);
    clearTimeout(gate.retryTimer);
    gate.retryTimer = setTimeout(() => void reconcile(gate), gate.retryStartMs);
    gate.retryTimer.unref();
  }
}

/** Brings the inner capability to what leadership says now (one step at a time, in order). */
function reconcile(gate: Gate<Capability>): Promise<void> {
  gate.chain = gate.chain.then(async () => {
    const ctx = gate.context;
    if (ctx === undefined) return;
    const want = !gate.stopped && gate.leadership.isLeader;
    if (want && !gate.active) {
      await startLeading(gate, ctx);
    } else if (!want && gate.active) {
      gate.active = false;
      gate.writable = false;
      ctx.logger.info({ leader: gate.leadership.leaderId ?? null }, `${gate.name}: no longer the leader, stopping`);
      await gate.capability.stop(ctx.now() + gate.stopDeadlineMs).catch((error: unknown) => ctx.reportError(error));
      if (!gate.stopped) markStandingBy(gate);
    } else if (!want && !gate.stopped) {
      markStandingBy(gate);
    }
  });
  return gate.chain;
}

/** Stops for good: no more reconciling; the inner capability stops if it runs, and the component goes. */
async function stopGate(
  gate: Gate<Capability>,
  deadline: number,
  listeners: { onChange: () => void; onLeader: () => void },
): Promise<void> {
  gate.stopped = true;
  clearTimeout(gate.retryTimer);
  gate.leadership.off('change', listeners.onChange);
  gate.leadership.off('leader', listeners.onLeader);
  const ctx = gate.context;
  const stopping = gate.chain.then(async () => {
    if (!gate.active) return;
    gate.active = false;
    gate.writable = false;
    await gate.capability.stop(deadline);
  });
  gate.chain = stopping.catch(() => undefined);
  try {
    await stopping;
  } finally {
    ctx?.readiness.remove(gate.name);
  }
}

/**
 * Runs `capability` only while `leadership` says this agent leads: started when it takes the
 * lease, stopped (within `stopDeadlineMs`) when it loses it, started again when it leads again.
 * Starts and stops are serialised, so a lease lost during a start waits for that start to finish
 * and is then undone. While standing by, the capability's readiness component reads
 * `standing by (leader: <id>)` and counts as ready: standing by is this agent's job then. What the
 * inner capability writes to its own component while it is not active (a late answer) is dropped.
 */
export function whileLeading<C extends Capability>(
  capability: C,
  leadership: Leadership,
  options: WhileLeadingOptions = {},
): LeaderOnlyCapability<C> {
  const gate: Gate<C> = {
    capability,
    leadership,
    name: capability.name,
    stopDeadlineMs: options.stopDeadlineMs ?? 5_000,
    retryStartMs: options.retryStartMs ?? 5_000,
    context: undefined,
    active: false,
    writable: false,
    chain: Promise.resolve(),
    retryTimer: undefined,
    stopped: true,
  };
  const listeners = {
    onChange: () => void reconcile(gate),
    onLeader: () => {
      if (!gate.active && !gate.writable && !gate.stopped) markStandingBy(gate);
    },
  };

  return {
    name: gate.name,
    inner: capability,
    get active() {
      return gate.active;
    },
    async start(ctx) {
      gate.context = ctx;
      gate.stopped = false;
      // Once each, however many starts came without a stop.
      leadership.off('change', listeners.onChange);
      leadership.off('leader', listeners.onLeader);
      leadership.on('change', listeners.onChange);
      leadership.on('leader', listeners.onLeader);
      if (!leadership.isLeader) markStandingBy(gate);
      // A failed first start is retried in the background, like a lease taken later: not an agent failure.
      await reconcile(gate);
    },
    stop: (deadline) => stopGate(gate, deadline, listeners),
  };
}
