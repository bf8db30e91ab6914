import type { AgentLogger } from '../log/agent-logger.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { Readiness } from '../runtime/readiness.js';
import type { StateStore } from '../store/types.js';
import type { WriteHealthState } from '../store/write-health.js';
import { errorMessage } from '../errors.js';

/** What {@link watchStateWrites} needs of the agent. */
interface StateWritesWiring {
  store: StateStore;
  readiness: Readiness;
  metrics: AgentMetrics;
  logger: AgentLogger;
}

/** The `store` component's detail while its directory cannot be written (pure). */
function unwritableStoreDetail(store: string, state: WriteHealthState): string {
  return `${store}: ${state.reason ?? 'cannot write'}; new votes are refused (webhook deliveries answered 503) until a write there ` +
    `succeeds again`;
}

/**
 * Follows the store's write health (a file store): the `store` readiness component says whether
 * its directory takes writes, with the reason, one line is logged at each change (`error` when
 * writes stop, `info` when they work again), and `/metrics` gets `listing_agent_state_writable`.
 * Returns the removal. Does nothing for a store without a directory.
 */
export function watchStateWrites({ store, readiness, metrics, logger }: StateWritesWiring): () => void {
  const health = store.writeHealth;
  if (health === undefined) return () => undefined;
  const unwatch = metrics.watchStateWrites(health);
  const unlisten = health.onChange((state) => {
    if (state.writable) {
      readiness.set('store', true, store.describe());
      logger.info({ directory: health.directory }, 'the state directory takes writes again: new votes are recorded again');
      return;
    }
    readiness.set('store', false, unwritableStoreDetail(store.describe(), state));
    logger.error(
      { directory: health.directory, problem: state.problem },
      `cannot write the state ` +
        `directory: ${state.reason ?? 'cannot write'}; new votes are refused (webhook deliveries answered 503, the service re-sends ` +
        `them) and votes already acknowledged keep being rewarded; the agent tries again by itself every few seconds: free space, or ` +
        `make the directory writable`,
    );
  });
  return () => {
    unlisten();
    unwatch();
  };
}

/** What {@link closeState} needs of the agent. */
interface StateClosing {
  store: StateStore;
  /** The key of this agent's run record. */
  key: string;
  now: () => number;
  logger: AgentLogger;
  reportError: (error: unknown) => void;
}

/**
 * The state store's part of a stop: the run record gets its `stoppedAt`, and the store is closed
 * (always: closing is what releases the state directory's lock). A failure is reported, never thrown.
 */
export async function closeState({ store, key, now, logger, reportError }: StateClosing): Promise<void> {
  try {
    const last = (await store.get<Record<string, unknown>>(key)) ?? {};
    await store.set(key, { ...last, stoppedAt: new Date(now()).toISOString() });
  } catch (error) {
    reportError(error);
  }
  await store.close().catch((error: unknown) => {
    // What stays in memory is lost now: said where a person reads it, with the cause.
    logger.warn(
      { store: store.describe(), err: errorMessage(error) },
      'could not write the state at stop',
    );
    reportError(error);
  });
}

/**
 * Records the start of this agent's run under `key` (`agent:lastRun`, or one key per agent when
 * several share the state). `shared` (Redis): a record and no more, so Redis being down is logged
 * and the start goes on; else a failed write fails the start.
 */
export async function recordStart(
  store: StateStore,
  key: string,
  record: { version: string; startedAt: string },
  shared: boolean,
  logger: AgentLogger,
): Promise<void> {
  if (!shared) return store.set(key, record, { durable: true });
  await store.set(key, record, { durable: true }).catch((error: unknown) => {
    logger.warn({ err: errorMessage(error) }, 'could not record the start in Redis');
  });
}
