import type { Capability, CapabilityContext } from '../runtime/capability.js';
import { errorMessage } from '../errors.js';

/** What {@link startInOrder} reports to. */
export interface StartHooks {
  /** Marks a capability's readiness component. */
  mark(name: string, ready: boolean, detail: string): void;
  /** Forgets a capability's readiness component (one stopped again after a later one failed). */
  forget(name: string): void;
  /** Called as each capability has started, so that a stop in the middle stops it. */
  onStarted(capability: Capability): void;
  /** Called for each capability stopped again after a later one failed to start. */
  onUndone(capability: Capability): void;
  reportError(error: unknown): void;
  /** Current time in epoch ms: the undo gets until now + 10 s. */
  now(): number;
}

/**
 * Starts `capabilities` in order, each with `context` and a logger bound to its name. When one
 * fails, it and those this call started are stopped again (in reverse) before the error goes up,
 * so that the next try starts each exactly once.
 */
export async function startInOrder(capabilities: readonly Capability[], context: CapabilityContext, hooks: StartHooks): Promise<void> {
  const startedNow: Capability[] = [];
  for (const capability of capabilities) {
    hooks.mark(capability.name, false, 'starting');
    try {
      await capability.start({ ...context, logger: context.logger.child({ capability: capability.name }) });
    } catch (error) {
      hooks.mark(capability.name, false, `could not start: ${errorMessage(error)}`);
      // The failed one may have half-started (a port open, a ledger open): stop it too.
      const deadline = hooks.now() + 10_000;
      for (const undo of [capability, ...startedNow.reverse()]) {
        await undo.stop(deadline).catch((stopError: unknown) => hooks.reportError(stopError));
        if (undo !== capability) {
          hooks.forget(undo.name);
          hooks.onUndone(undo);
        }
      }
      throw error;
    }
    startedNow.push(capability);
    hooks.onStarted(capability);
  }
}
