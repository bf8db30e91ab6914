import type { Capability, CapabilityContext } from '../runtime/capability.js';
import type { Readiness } from '../runtime/readiness.js';
import { standingByDetail, type Leadership } from '../runtime/leadership.js';

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


/**
 * Runs `capability` only while `leadership` says this agent leads: started when it takes the
 * lease, stopped (within `stopDeadlineMs`) when it loses it, started again when it leads again.
 * Starts and stops are serialised, so a lease lost during a start waits for that start to finish
 * and is then undone. While standing by, the capability's readiness component reads
 * `standing by (leader: <id>)` and counts as ready: standing by is this agent's job then. What the
 * inner capability writes to its own component while it is not active (a late answer) is dropped.
 */
export function whileLeading<C extends Capability>(capability: C, leadership: Leadership, options: WhileLeadingOptions = {}): LeaderOnlyCapability<C> {
  const stopDeadlineMs = options.stopDeadlineMs ?? 5_000;
  const retryStartMs = options.retryStartMs ?? 5_000;
  const name = capability.name;
  let context: CapabilityContext | undefined;
  let active = false;
  /** Whether the inner capability may write its readiness (from the start of a start to the start of a stop). */
  let writable = false;
  let chain: Promise<void> = Promise.resolve();
  let retryTimer: NodeJS.Timeout | undefined;
  let stopped = true;

  /** The agent's readiness, except that the inner capability's own component is ours while it is not active. */
  function gatedReadiness(readiness: Readiness): Readiness {
    return {
      set: (component, ready, detail) => (component === name && !writable ? false : readiness.set(component, ready, detail)),
      remove: (component) => {
        if (component !== name || writable) readiness.remove(component);
      },
      snapshot: () => readiness.snapshot(),
    };
  }

  function markStandingBy(): void {
    context?.readiness.set(name, true, standingByDetail(leadership.leaderId));
  }

  /** Brings the inner capability to what leadership says now (one step at a time, in order). */
  function reconcile(): Promise<void> {
    chain = chain.then(async () => {
      const ctx = context;
      if (ctx === undefined) return;
      const want = !stopped && leadership.isLeader;
      if (want && !active) {
        writable = true;
        try {
          await capability.start({ ...ctx, readiness: gatedReadiness(ctx.readiness) });
          active = true;
          ctx.logger.info({}, `${name}: this agent leads, running`);
        } catch (error) {
          writable = false;
          // Whatever half-started is undone before the next try.
          await capability.stop(ctx.now() + stopDeadlineMs).catch(() => undefined);
          const detail = error instanceof Error ? error.message : String(error);
          ctx.readiness.set(name, false, `could not start as the leader: ${detail}`);
          ctx.logger.warn({ err: detail, retryInMs: retryStartMs }, `${name}: could not start as the leader; retrying`);
          ctx.reportError(error);
          clearTimeout(retryTimer);
          retryTimer = setTimeout(() => void reconcile(), retryStartMs);
          retryTimer.unref();
        }
      } else if (!want && active) {
        active = false;
        writable = false;
        ctx.logger.info({ leader: leadership.leaderId ?? null }, `${name}: no longer the leader, stopping`);
        await capability.stop(ctx.now() + stopDeadlineMs).catch((error: unknown) => ctx.reportError(error));
        if (!stopped) markStandingBy();
      } else if (!want && !stopped) {
        markStandingBy();
      }
    });
    return chain;
  }

  const onChange = () => void reconcile();
  const onLeader = () => {
    if (!active && !writable && !stopped) markStandingBy();
  };

  return {
    name,
    inner: capability,
    get active() {
      return active;
    },
    async start(ctx) {
      context = ctx;
      stopped = false;
      leadership.on('change', onChange);
      leadership.on('leader', onLeader);
      if (!leadership.isLeader) markStandingBy();
      // A failed first start is retried in the background, like a lease taken later: not an agent failure.
      await reconcile();
    },
    async stop(deadline) {
      stopped = true;
      clearTimeout(retryTimer);
      leadership.off('change', onChange);
      leadership.off('leader', onLeader);
      const ctx = context;
      const stopping = chain.then(async () => {
        if (!active) return;
        active = false;
        writable = false;
        await capability.stop(deadline);
      });
      chain = stopping.catch(() => undefined);
      try {
        await stopping;
      } finally {
        ctx?.readiness.remove(name);
      }
    },
  };
}
