import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { createRedisLeadership } from '../../../src/leader/redis-lease.js';
import { createRedisConnection, RedisUnavailableError, type RedisConnection } from '../../../src/redis/connection.js';
import { createRedisVoteLedger } from '../../../src/votes/ledger-redis.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { freezer, startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { voteAt } from '../../helpers/votes.js';
import { programPath } from '../../setup/provided.js';
import { tempDir, waitFor } from '../agent/redis-fixture.js';

/**
 * A single Redis server that stops answering while its connection stays open (stopped with
 * SIGSTOP, as a frozen machine or a partition the TCP connection survives). The client's own
 * timeout ends once a command is written, so without a deadline of its own a write, a lease
 * renewal or a `WAIT` would wait for ever: the agent would neither refuse the vote nor say so.
 */

const DEADLINE_MS = 400;
const opened: RedisConnection[] = [];
const agents: ListingAgent[] = [];
let prefixes = 0;

describe.skipIf(!programPath('redis-server'))('a Redis server that stops answering', () => {
  let redis: TestRedis;
  const { freeze, thaw } = freezer(() => redis);
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    thaw();
    await redis?.close();
  });
  afterEach(async () => {
    thaw();
    await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 3_000 })));
    await Promise.all(opened.splice(0).map((connection) => connection.close()));
  });

  it('refuses each command within its deadline, is down until the server answers, and loses nothing', { timeout: 20_000 }, async () => {
    const connection = createRedisConnection({ url: redis.url, prefix: `frozen-${(prefixes += 1)}:`, commandTimeoutMs: DEADLINE_MS, reconnectDelaysMs: [50] });
    opened.push(connection);
    connection.start();
    await connection.whenUp({ timeoutMs: 5_000 });
    const ledger = createRedisVoteLedger({ connection, agentId: 'a', leaseMs: 2_000, keepKeysForMs: 60_000 });
    await ledger.open();
    const first = voteAt('1', Date.now() - 1_000);
    expect(await ledger.recordPending([first])).toHaveLength(1);
    const leadership = createRedisLeadership({ connection, agentId: 'a', leaseMs: 2_000 });
    leadership.start();
    await waitFor('the lease', () => leadership.isLeader, 5_000);

    freeze();
    const second = voteAt('2', Date.now() - 1_000);
    const started = performance.now();
    const refused = await ledger.recordPending([second]).catch((error: unknown) => error);
    const waited = performance.now() - started;
    expect(refused).toBeInstanceOf(RedisUnavailableError);
    expect(waited).toBeLessThan(DEADLINE_MS + 1_500);
    expect(connection.isUp).toBe(false);
    expect(connection.downReason).toMatch(new RegExp(`did not answer within ${DEADLINE_MS} ms`));
    // While it is down a command fails at once; the lease is given up when it cannot be renewed.
    await expect(connection.client.sendCommand(['PING'])).rejects.toThrow();
    await waitFor('the lease given up', () => !leadership.isLeader, 5_000);

    thaw();
    await connection.whenUp({ timeoutMs: 5_000 });
    await waitFor('the lease again', () => leadership.isLeader, 5_000);
    // The first vote is still recorded (a duplicate now); the refused one is recorded once.
    expect(await ledger.recordPending([first])).toEqual([]);
    await ledger.recordPending([second]);
    expect(await ledger.recordPending([second])).toEqual([]);
    await leadership.stop();
    await ledger.close();
  });

  it('waits a WAIT its own timeout beyond the deadline', async () => {
    const connection = createRedisConnection({ url: redis.url, prefix: `frozen-${(prefixes += 1)}:`, commandTimeoutMs: DEADLINE_MS, reconnectDelaysMs: [50] });
    opened.push(connection);
    connection.start();
    await connection.whenUp({ timeoutMs: 5_000 });
    // No replica: WAIT 1 answers 0 after its own timeout, longer than the command deadline.
    const started = performance.now();
    expect(await connection.client.sendCommand(['WAIT', '1', String(DEADLINE_MS * 2)])).toBe(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(DEADLINE_MS * 2 - 50);
    expect(connection.isUp).toBe(true);
  });

  it('an agent on it says it is not ready while the server does not answer, and ready once it does', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        state: { directory: await tempDir('la-frozen-'), redis: { url: redis.url, lease: '2s', agentId: 'f', prefix: `frozen-agent-${(prefixes += 1)}:` } },
        health: { listen: '127.0.0.1:0' },
      },
      reconnectDelaysMs: [200],
    });
    agent.on('error', () => undefined);
    agents.push(agent);
    await agent.start();
    await waitFor('the lead', () => agent.leadership!.isLeader, 10_000);
    expect((await call(`${agent.healthServerUrl}/readyz`)).status).toBe(200);

    freeze();
    // The lease's next renewal has no answer: past its deadline the agent says Redis is down.
    await waitFor('not ready', async () => (await call(`${agent.healthServerUrl}/readyz`)).status === 503, 10_000);
    const ready = await call(`${agent.healthServerUrl}/readyz`);
    expect(ready.body.components.redis.ready).toBe(false);
    expect(agent.leadership!.isLeader).toBe(false);

    thaw();
    await waitFor('ready again', async () => (await call(`${agent.healthServerUrl}/readyz`)).status === 200, 10_000);
    await waitFor('the lead again', () => agent.leadership!.isLeader, 10_000);
  });
});
