import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { ValidationError } from '../../../src/errors.js';
import { createPushSource, pushShardCounts, type PushSource } from '../../../src/public/stats.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { capturedLog } from '../../helpers/log-lines.js';
import { freePort } from '../../helpers/ports.js';

/*
 * Issue 34: a shard reporting 2,147,483,647 servers (the contract's int32 ceiling) was taken,
 * summed and posted, and every refused push wrote a warn line of its own. A pushed count past
 * what one shard holds is refused with the reason, logged the way the receiver logs its
 * refusals (the first of each reason per 10 s, then a summary), and never posted.
 */

const KEY = 'push-refusals-key-0123456789abcdef';
const ADMIN_TOKEN = 'push-refusals-admin-token-0123456789';
const INT32_MAX = 2_147_483_647;
const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function startPush() {
  const log = capturedLog({ level: 'debug' });
  const source: PushSource = createPushSource({ listen: { host: '127.0.0.1', port: 0 }, key: KEY, logger: log.logger });
  stops.push(() => source.stop());
  await source.start();
  const url = source.url();
  const post = (json: unknown, bearer = KEY) => call(url, { method: 'POST', json, bearer });
  const warnings = () => log.lines.filter((line) => line.level === 'warn').map((line) => String(line.msg));
  return { source, post, warnings };
}

describe('push source: what it refuses, and how it says so', () => {
  it('refuses a shard with 2,147,483,647 servers with the reason, records nothing, and logs it summarised', async () => {
    const { source, post, warnings } = await startPush();
    expect((await post({ shard_id: 0, shard_count: 1, server_count: 1_234 })).status).toBe(204);

    const refused = await post({ shard_id: 0, shard_count: 1, server_count: INT32_MAX });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(
      `server_count: is ${INT32_MAX}, more than one shard holds (Discord shards a bot at 2,500 servers per shard; ` +
        "the push endpoint takes at most 5,000): send each shard's own count",
    );
    // Every form of the body, and one bad shard refuses the whole push.
    expect((await post({ shards: [10, INT32_MAX] })).body.error).toMatch(/^shards\[1\]: is 2147483647, more than one shard holds/);
    const many = [{ shard_id: 0, shard_count: 2, server_count: 10 }, { shard_id: 1, shard_count: 2, server_count: 5_001 }];
    expect((await post(many)).body.error).toMatch(/^\[1\]\.server_count: is 5001, more than one shard holds/);
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 1_234, shardCount: 1, shards: [1_234] });
    // 5,000 is the bound, taken.
    expect((await post({ shard_id: 0, shard_count: 1, server_count: 5_000 })).status).toBe(204);

    expect(warnings()).toEqual([`push refused: ${refused.body.error}`]);
    await source.stop();
    expect(warnings()).toEqual([
      `push refused: ${refused.body.error}`,
      'pushes refused in the last 10 s: 3 implausible_count (the first of each reason was logged)',
    ]);
  });

  it('logs a flood of wrong keys as one line and a summary, never with the key', async () => {
    const { source, post, warnings } = await startPush();
    for (let i = 0; i < 20; i += 1) {
      expect((await post({ shard_id: 0, shard_count: 1, server_count: 1 }, `wrong-key-${i}-0123456789`)).status).toBe(401);
    }
    expect((await post('not a report')).status).toBe(400);
    expect(warnings()).toEqual([
      'push refused: missing or wrong key: send Authorization: Bearer <the key set as stats.push.key>',
      'push refused: (root): must be {shard_id, shard_count, server_count}, an array of them, or {shards: [server counts]}',
    ]);
    await source.stop();
    expect(warnings().at(-1)).toBe('pushes refused in the last 10 s: 20 wrong_key, 1 bad_body (the first of each reason was logged)');
    expect(JSON.stringify(warnings())).not.toContain('wrong-key-');
  });

  it('pushShardCounts refuses the same count before sending, in the same words', async () => {
    const { post } = await startPush();
    const reports = { shard_id: 0, shard_count: 1, server_count: INT32_MAX };
    const error = await pushShardCounts({ url: 'http://127.0.0.1:1/stats', key: KEY, reports }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const said = (await post({ shard_id: 0, shard_count: 1, server_count: INT32_MAX })).body.error as string;
    expect((error as ValidationError).message).toContain(said);
  });
});

describe('an agent with the push source', () => {
  let agent: ListingAgent | undefined;
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
  });

  it('never posts a refused count: the service sees the counts before and after it', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const port = await freePort();
    agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        health: { listen: '127.0.0.1:0', adminToken: ADMIN_TOKEN },
        state: { directory: await mkdtemp(join(tmpdir(), 'la-push-refusals-')) },
        stats: { enabled: true, source: 'push', mode: 'patch', push: { listen: `127.0.0.1:${port}`, key: KEY } },
      },
      logger: false,
    });
    const posted: number[] = [];
    agent.on('posted', (result) => posted.push(...result.samples.map((sample) => sample.serverCount)));
    await agent.start();
    const push = (servers: number) =>
      call(`http://127.0.0.1:${port}/stats`, { method: 'POST', bearer: KEY, json: { shard_id: 0, shard_count: 1, server_count: servers } });
    // The status page's "post stats now", as the CLI's `stats post --agent` asks it.
    const postNow = () => call(`${agent!.healthServerUrl}/status/actions/post-stats`, { method: 'POST', bearer: ADMIN_TOKEN });

    expect((await push(1_234)).status).toBe(204);
    await waitFor(() => posted.length === 1);
    expect((await push(INT32_MAX)).status).toBe(400);
    expect((await postNow()).body).toMatchObject({ ok: true, posted: [{ servers: 1_234 }] });
    expect((await push(1_300)).status).toBe(204);
    expect((await postNow()).body).toMatchObject({ ok: true, posted: [{ servers: 1_300 }] });
    expect(posted).toEqual([1_234, 1_234, 1_300]);
    expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count)).toEqual([1_234, 1_234, 1_300]);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
