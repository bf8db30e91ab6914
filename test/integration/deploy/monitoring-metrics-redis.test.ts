import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { freePort, tempDir, waitFor } from '../agent/redis-fixture.js';
import { leads, readyz, startDaemon, type Daemon } from '../leader/daemons.js';
import { dashboardQueries, missingFromScrape, queriedMetrics, readDashboard, readRules, REDIS_ONLY_METRICS, ruleQueries, scrapedSeries } from './monitoring-files.js';

/**
 * The gauges only agents on Redis serve (`listing_agent_leader`, `listing_agent_redis_up`), as
 * the dashboard and the alert rules query them: two daemons on one Redis, each scraped. The rest
 * of what they query is checked on an agent without Redis (monitoring-metrics.test.ts).
 */

describe.skipIf(!programPath('redis-server'))('the dashboard and the alert rules on agents with Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('each agent serves leader and redis_up with the labels queried; exactly one leads, as ListingAgentNoLeader expects', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true, v1RequestsPerSecond: 10_000 } });
    const fx = setupBot(emu);
    const dir = await tempDir('la-monitoring-redis-');
    const daemons: Daemon[] = [];
    for (const name of ['a', 'b']) {
      daemons.push(
        await startDaemon(name, dir, await freePort(), {
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: `./state-${name}`, redis: { url: redis.url, lease: '2s', agentId: `agent-${name}` } },
          // A reward hook no vote reaches here: votes need one to start.
          votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ url: 'http://127.0.0.1:1/rewards' }] },
        }),
      );
    }
    await waitFor('both agents ready', async () => (await Promise.all(daemons.map(readyz))).every((r) => r?.status === 200), 20_000, 50);
    await waitFor('a leader', async () => (await Promise.all(daemons.map(leads))).filter(Boolean).length === 1, 10_000, 20);

    // Only the Redis-only gauges are looked for here.
    const queries = [...dashboardQueries(readDashboard()), ...ruleQueries(readRules())];
    const others = new Set([...queriedMetrics()].filter((name) => !REDIS_ONLY_METRICS.has(name)));
    const scrapes = await Promise.all(daemons.map(async (daemon) => scrapedSeries(await (await fetch(`${daemon.health}/metrics`)).text())));
    for (const scrape of scrapes) {
      expect(missingFromScrape(queries, scrape, others)).toEqual([]);
      for (const name of REDIS_ONLY_METRICS) expect(scrape.has(name), name).toBe(true);
      expect(scrape.get('listing_agent_votes_dead_letters')).toEqual([{}]);
    }
    const leaderValues = await Promise.all(
      daemons.map(async (daemon) => {
        const text = await (await fetch(`${daemon.health}/metrics`)).text();
        return Number(/^listing_agent_leader\{agent="agent-[ab]"\} (\d+)$/m.exec(text)![1]);
      }),
    );
    expect(leaderValues.sort()).toEqual([0, 1]);

    for (const daemon of daemons) daemon.child.kill('SIGTERM');
    expect(await Promise.all(daemons.map((d) => d.exited))).toEqual([0, 0]);
  });
});
