import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';
import { freePort, tempDir, waitFor, webhooksFor } from '../agent/redis-fixture.js';
import { startDaemon } from '../leader/daemons.js';
import {
  dashboardQueries,
  missingFromScrape,
  queriedMetrics,
  readDashboard,
  readRules,
  REDIS_ONLY_METRICS,
  ruleQueries,
  scrapedSeries,
} from './monitoring-files.js';

/**
 * Every metric the Grafana dashboard and the alert rules query is served by a live agent: the
 * daemon (`listing-agent run`) against the emulator, with stats (push source), commands, votes
 * (an http reward hook) and webhooks on, after a post, a sync and a vote, so that the series
 * that exist only once something happened exist. Its /metrics is scraped and compared with the
 * PromQL of deploy/grafana/listing-agent.json and deploy/prometheus/alerts.yaml: each metric
 * served, each label a selector names carried, each `label="value"` seen. The Redis-only gauges
 * are checked on agents with Redis in monitoring-metrics-redis.test.ts.
 */

const PUSH_KEY = 'monitoring-test-push-key';

describe('the dashboard and the alert rules query only what a live agent serves', () => {
  it('scrapes a daemon that posted, synced and rewarded a vote, and finds every metric, label and value queried', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, v1RequestsPerSecond: 10_000 } });
    const fx = setupBot(emu);
    const voter = emu.admin.createUser({ username: 'voter' });
    const hook = await startVoteHookServer();
    const dir = await tempDir('la-monitoring-');
    const { ports, secrets } = await webhooksFor(emu, fx, 1);
    const [healthPort, pushPort] = [await freePort(), await freePort()];
    await writeFile(join(dir, 'commands.json'), JSON.stringify([{ name: 'ping', description: 'Replies with pong' }]));
    const daemon = await startDaemon('monitored', dir, healthPort, {
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      stats: { enabled: true, source: 'push', interval: '30m', push: { listen: `127.0.0.1:${pushPort}`, key: PUSH_KEY } },
      commands: { enabled: true, source: 'file', file: 'commands.json' },
      votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ type: 'http', name: 'reward', url: hook.url }] },
      webhooks: { enabled: true, listen: `127.0.0.1:${ports[0]}`, secrets },
      state: { directory: './state' },
    });

    // The bot's side: one shard pushes its count (until the push endpoint listens), then a vote.
    await waitFor('the push endpoint to take the counts', async () => {
      const res = await fetch(`http://127.0.0.1:${pushPort}/stats`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PUSH_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify([{ shard_id: 0, shard_count: 1, server_count: 42 }]),
      }).catch(() => undefined);
      await res?.arrayBuffer();
      return res?.status === 204;
    });
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    await waitFor('the reward hook to run', () => hook.calls.length > 0);

    const queries = [...dashboardQueries(readDashboard()), ...ruleQueries(readRules())];
    let scrape = new Map<string, Record<string, string>[]>();
    // The post, the sync and the poll land in their own time: scrape until nothing is missing.
    await waitFor(
      'every queried metric on /metrics',
      async () => {
        const res = await fetch(`${daemon.health}/metrics`);
        expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
        scrape = scrapedSeries(await res.text());
        return missingFromScrape(queries, scrape, REDIS_ONLY_METRICS).length === 0;
      },
      20_000,
      200,
    ).catch(() => undefined);

    expect(missingFromScrape(queries, scrape, REDIS_ONLY_METRICS), 'queried by deploy/ but not served (or without that label)').toEqual([]);
    const queried = queriedMetrics();
    expect(queried.size).toBeGreaterThan(15);
    // The Redis-only list is what this agent lacks, no more: everything else was found above.
    for (const name of REDIS_ONLY_METRICS) {
      expect(queried, name).toContain(name);
      expect(scrape.has(name), `${name} without state.redis`).toBe(false);
    }
    // The process metrics the dashboard plots are the daemon's own.
    expect(scrape.get('process_cpu_seconds_total')?.length).toBe(1);
    expect(scrape.get('listing_agent_stats_interval_seconds')).toEqual([{}]);
    expect(scrape.get('listing_agent_votes_dead_letters')).toEqual([{}]);

    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
  });
});
