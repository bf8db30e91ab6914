import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createAgentMetrics } from '../../src/runtime/metrics.js';
import { ROOT } from './markdown.js';

describe('docs/metrics.md', () => {
  it('has a row for every listing_agent_* metric the agent serves, naming its labels', async () => {
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    // The Redis gauges exist only on an agent with state.redis.
    metrics.watchCluster(() => ({ redisUp: true, agentId: 'agent-a', leading: true }));
    metrics.markSuccess('stats', 0);
    // These appear once stats and votes run.
    metrics.setStatsInterval(1_800);
    metrics.watchVoteLedger(() => ({ pending: 0, deadLetters: 0 }));
    // With the push source on Redis.
    metrics.watchPushShare(() => 0);
    const served = await registry.getMetricsAsJSON();
    expect(served.length).toBeGreaterThan(10);

    const rows = readFileSync(`${ROOT}docs/metrics.md`, 'utf8').split('\n').filter((line) => line.startsWith('| `listing_agent_'));
    const problems: string[] = [];
    for (const metric of served) {
      const row = rows.find((line) => line.startsWith(`| \`${metric.name}\` |`));
      if (!row) {
        problems.push(`${metric.name}: no row`);
        continue;
      }
      const labels = new Set(metric.values.flatMap((value) => Object.keys(value.labels)));
      for (const label of labels) if (!row.includes(`\`${label}\``)) problems.push(`${metric.name}: the label ${label} is not named`);
    }
    const documented = rows.map((line) => /^\| `([a-z_]+)`/.exec(line)![1]!);
    const gone = documented.filter((name) => !served.some((metric) => metric.name === name));
    expect(problems, 'add the metric to the table of docs/metrics.md').toEqual([]);
    expect(gone, 'these metrics are documented but no longer served').toEqual([]);
  });
});
