import type { CapabilityContext } from '../runtime/capability.js';
import type { VoteLedgerSizes } from '../runtime/metrics.js';
import type { Readiness } from '../runtime/readiness.js';
import type { WriteHealth, WriteHealthState } from '../store/write-health.js';
import type { VoteLedger, VotesEvents } from './types.js';

/**
 * The `votes` readiness component over the ledger's write health: while the ledger's directory
 * cannot be written, `votes` is not ready with the reason, whatever the poller or the pipeline
 * said last; once it can, their last word is back.
 */

/** The `votes` component's detail while the ledger cannot write (pure). */
export function unwritableVotesDetail(state: WriteHealthState): string {
  return (
    `cannot record new votes: ${state.reason ?? 'the state directory cannot be written'}; they are refused ` +
    '(webhook deliveries answered 503, the cursor waits) until a write succeeds there again, tried every few seconds; ' +
    'votes already recorded are still rewarded'
  );
}

/** A readiness for the votes capability's writers, with the ledger's write health on top. */
export interface VotesReadiness extends Pick<Readiness, 'set'> {
  /** Follows `health` (none: the ledger writes no directory); returns the removal. */
  watch(health: WriteHealth | undefined): () => void;
}

/** Creates it over `target`, for `component`. */
export function createVotesReadiness(target: Pick<Readiness, 'set'>, component: string): VotesReadiness {
  let last: { ready: boolean; detail: string } | undefined;
  let health: WriteHealth | undefined;
  function apply(): boolean {
    const state = health?.state();
    if (state !== undefined && !state.writable) return target.set(component, false, unwritableVotesDetail(state));
    return last === undefined ? false : target.set(component, last.ready, last.detail);
  }
  return {
    set(name, ready, detail) {
      if (name !== component) return target.set(name, ready, detail);
      last = { ready, detail };
      return apply();
    },
    watch(watched) {
      health = watched;
      const unlisten = watched?.onChange(() => apply());
      apply();
      return () => {
        unlisten?.();
        if (health === watched) health = undefined;
      };
    },
  };
}

/** Follows the ledger's write health: the `votes` readiness, the metric, and the log lines when the store does not share it. */
export function watchLedger(readiness: VotesReadiness, context: CapabilityContext<VotesEvents>, ledger: VoteLedger): () => void {
  const health = ledger.writeHealth;
  const unready = readiness.watch(health);
  if (health === undefined) return unready;
  const unwatch = context.metrics.watchStateWrites(health);
  // A health of its own (no file store on its directory): nobody else says when it changes.
  const unlisten =
    health === context.store.writeHealth
      ? () => undefined
      : health.onChange((state) => {
          if (state.writable) context.logger.info({ directory: health.directory }, 'votes: the state directory takes writes again');
          else {
            const why = `votes: cannot write the state directory: ${state.reason ?? 'cannot write'}`;
            const fields = { directory: health.directory, problem: state.problem };
            context.logger.error(fields, `${why}; new votes are refused until a write succeeds there again`);
          }
        });
  return () => {
    unready();
    unwatch();
    unlisten();
  };
}

/** The ledger's sizes for `/metrics`; a ledger of the bot's own that throws must not break the scrape. */
export function ledgerSizes(ledger: VoteLedger | undefined): VoteLedgerSizes | undefined {
  try {
    return ledger?.stats();
  } catch {
    return undefined;
  }
}
