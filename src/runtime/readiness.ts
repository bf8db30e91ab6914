/** One component's state, as `/readyz` reports it. */
export interface ComponentState {
  ready: boolean;
  /** Why it is not ready (or a short note when it is). */
  detail: string;
  /** Epoch ms of the last change. */
  since: number;
}

/** The readiness of every component (`service`, `store`, and one per enabled capability). */
export interface Readiness {
  /** Marks a component; returns true when its readiness changed. */
  set(component: string, ready: boolean, detail: string): boolean;
  /** Forgets a component (a capability that stopped on purpose). */
  remove(component: string): void;
  /** Ready when every component is. */
  snapshot(): { ready: boolean; components: Record<string, ComponentState> };
}

/**
 * Creates an empty readiness registry reading time from `now`. `onChange` hears every change,
 * whoever made it (the agent, or a capability through its context).
 */
export function createReadiness(now: () => number, onChange?: (component: string, state: ComponentState) => void): Readiness {
  const components = new Map<string, ComponentState>();
  return {
    set(component, ready, detail) {
      const previous = components.get(component);
      const changed = previous?.ready !== ready || previous.detail !== detail;
      if (changed) {
        const state = { ready, detail, since: previous?.ready === ready ? previous.since : now() };
        components.set(component, state);
        onChange?.(component, { ...state });
      }
      return changed;
    },
    remove(component) {
      components.delete(component);
    },
    snapshot() {
      const all = Object.fromEntries([...components].map(([name, state]) => [name, { ...state }]));
      return { ready: components.size > 0 && [...components.values()].every((c) => c.ready), components: all };
    },
  };
}
