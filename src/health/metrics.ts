import type { Registry } from 'prom-client';

/** The agent's Prometheus metrics. */
export function createAgentMetrics(registry: Registry) {
  void registry;
  return {};
}

/** The metrics made by {@link createAgentMetrics}. */
export type AgentMetrics = ReturnType<typeof createAgentMetrics>;
