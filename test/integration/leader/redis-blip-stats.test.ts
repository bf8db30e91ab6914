import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { freePort, sleep, tempDir, waitFor } from '../agent/redis-fixture.js';

/**
 * Issue 23: with Redis down longer than the lease, the leader steps down; when Redis returns, the
 * agent that takes the lease starts its stats again. It used to fail that start forever ("the push
 * endpoint was stopped: create a new one"), post nothing, and keep `/readyz` at 503. Two agents
 * on one redis-server, stats from the push source posting every second; two outages, so that at
 * the latest in the second one the lease goes to an agent that led before.
 */

const LEASE_MS = 2_000;
const PUSH_KEY = 'push-key-blip-0123456789';
const agents: ListingAgent[] = [];

describe.skipIf(!programPath('redis-server'))('a Redis outage longer than the lease', () => {
  let redis: TestRedis;
  let redisDown = false;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 3_000 })));
    if (redisDown) await redis.start();
    redisDown = false;
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('the agent that takes the lease back posts stats again, and /readyz returns to 200', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator({ settings: { v1RequestsPerSecond: 10_000, v1ProjectWritesPerMinute: 10_000 } });
    const fx = setupBot(emu);
    const names = ['p', 'q'];
    const pushPorts = [await freePort(), await freePort()];
    for (const [i, name] of names.entries()) {
      const agent = createListingAgent({
        config: {
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: await tempDir('la-blip-'), redis: { url: redis.url, lease: `${LEASE_MS}ms`, agentId: name } },
          health: { listen: '127.0.0.1:0' },
          stats: { enabled: true, source: 'push', schedule: '* * * * * *', push: { listen: `127.0.0.1:${pushPorts[i]}`, key: PUSH_KEY } },
        },
        reconnectDelaysMs: [200],
      });
      agent.on('error', () => undefined);
      agents.push(agent);
    }
    // The bot: pushes changing counts to both agents (the one not leading may refuse the connection).
    let pushing = true;
    let servers = 1_000;
    const bot = (async () => {
      while (pushing) {
        servers += 1;
        await Promise.all(
          pushPorts.map((port) => call(`http://127.0.0.1:${port}/stats`, { bearer: PUSH_KEY, json: { shard_id: 0, shard_count: 1, server_count: servers } }).catch(() => undefined)),
        );
        await sleep(200);
      }
    })();
    try {
      await Promise.all(agents.map((agent) => agent.start()));
      const leader = () => agents.find((agent) => agent.leadership!.isLeader);
      const postsSince = (at: number) => emu.admin.metrics(fx.projectId).filter((m) => Date.parse(m.applied_at) > at).length;
      await waitFor('a leader', () => leader() !== undefined, 10_000);
      await waitFor('a first post', () => postsSince(0) > 0, 10_000);
      const led = new Set([leader()!.leadership!.agentId]);
      const retaken: boolean[] = [];

      for (let round = 1; round <= 2; round += 1) {
        await redis.stop();
        redisDown = true;
        await waitFor(`round ${round}: every agent stepped down`, () => leader() === undefined, LEASE_MS * 2);
        // Longer than the lease in all.
        await sleep(LEASE_MS);
        await redis.start();
        redisDown = false;
        await waitFor(`round ${round}: a leader again`, () => leader() !== undefined, 10_000);
        const back = leader()!;
        const ledBefore = led.has(back.leadership!.agentId);
        led.add(back.leadership!.agentId);
        retaken.push(ledBefore);
        const tookAt = Date.now();
        // Posts resume within a few of its one-second schedule, and every agent is ready again.
        await waitFor(`round ${round}: ${back.leadership!.agentId} (led before: ${ledBefore}) posting again`, () => postsSince(tookAt) >= 2, 10_000, 50);
        for (const agent of agents) {
          await waitFor(`round ${round}: /readyz of ${agent.leadership!.agentId} at 200`, async () => (await call(`${agent.healthServerUrl}/readyz`)).status === 200, 10_000, 50);
        }
        expect(back.readiness.snapshot().components.stats).toMatchObject({ ready: true });
      }
      // Two agents, three leaderships: in one round at least, the lease went to an agent that led before.
      expect(retaken).toContain(true);
    } finally {
      pushing = false;
      await bot;
    }
  });
});
