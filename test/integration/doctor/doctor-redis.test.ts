import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult, DoctorReport } from '../../../src/doctor/types.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { freePort } from '../../helpers/ports.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';

/** `listing-agent doctor` with `state.redis`: a real redis-server on 127.0.0.1, up and down. */

let redis: TestRedis;
let prefixes = 0;
const hasRedis = programPath('redis-server') !== undefined;

beforeAll(async () => {
  if (hasRedis) redis = await startTestRedis();
});
afterAll(async () => {
  await redis?.close();
});

const REDIS_PASSWORD = 'planted-redis-password-SECRET';
const WEBHOOK_SECRET = 'whs_planted_redis_SECRET';

/** A bot on the emulator, a config on `redisUrl` under a prefix of its own, and `report(timeoutMs)` running `doctor --json`. */
async function setup(redisUrl: string, extra: Record<string, unknown> = {}) {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const prefix = `doctor-${(prefixes += 1)}:`;
  const cwd = await mkdtemp(join(tmpdir(), 'la-doctor-redis-'));
  const config: Record<string, unknown> = {
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    health: { enabled: false },
    state: { redis: { url: redisUrl, prefix } },
    ...extra,
  };
  // Votes need a hook to receive them (no call reaches this one: the doctor sends no vote).
  if ('votes' in extra) config.votes = { hooks: [{ url: 'http://127.0.0.1:1/rewards' }], ...(extra.votes as object) };
  await writeFile(join(cwd, 'agent.json'), JSON.stringify(config));
  // A check's deadline: generous where Redis answers (a loaded machine may take over 1.5 s to run
  // a check), tight where it is down (doctor must still answer at once).
  const report = async (timeoutMs = 5_000) => {
    const res = await runCliInProcess(['doctor', '--config', 'agent.json', '--json', '--timeout', String(timeoutMs)], { cwd, env: {} });
    for (const secret of [REDIS_PASSWORD, WEBHOOK_SECRET, fx.projectToken]) expect(res.stdout + res.stderr).not.toContain(secret);
    const parsed = JSON.parse(res.stdout) as DoctorReport;
    return { ...parsed, code: res.code, check: (name: string) => parsed.checks.find((c) => c.name === name) as CheckResult };
  };
  return { fx, prefix, report };
}

describe.skipIf(!hasRedis)('listing-agent doctor with state.redis', () => {
  it('shows the Redis version and the leader, and takes no lock', async () => {
    const t = await setup(redis.url);
    await redis.command('SET', `${t.prefix}leader`, 'host-a/4242|7', 'PX', '15000');
    const r = await t.report();
    expect(r.check('redis.server')).toMatchObject({ status: 'ok', summary: expect.stringMatching(/^redis redis:\/\/127\.0\.0\.1:\d+ answers in \d+ ms: Redis \d+\.\d+/) });
    expect(r.check('redis.leader')).toMatchObject({ status: 'ok', summary: expect.stringMatching(/^host-a\/4242 leads \(fencing token 7, \d+(\.\d)? s left on its lease\)$/) });
    expect(r.check('state.lock').status).toBe('skip');
    expect(r.check('state.directory').status).toBe('skip');
    expect(r.code).toBe(0);
  });

  it('warns when no agent leads', async () => {
    const t = await setup(redis.url);
    const r = await t.report();
    expect(r.check('redis.leader')).toMatchObject({ status: 'warn', summary: expect.stringContaining('no agent leads') });
    expect(r.code).toBe(1);
  });

  it('reads the votes cursor and the shared webhook secrets from Redis', async () => {
    const port = await freePort();
    const t = await setup(redis.url, {
      votes: { enabled: true },
      webhooks: { enabled: true, secrets: ['whs_in_config'], listen: `127.0.0.1:${port}` },
      stats: { enabled: true, source: 'redis' },
    });
    const cursor = { cursor: null, newestCreatedAt: null, newestKey: null };
    await redis.command('SET', `${t.prefix}state:votes:cursor:${t.fx.projectId}`, JSON.stringify(cursor));
    const shared = { version: 1, secrets: [{ secret: WEBHOOK_SECRET, source: 'rotate', webhookId: 'w1', addedAt: new Date().toISOString() }] };
    await redis.command('SET', `${t.prefix}webhooks:secrets`, JSON.stringify(shared));
    const r = await t.report();
    expect(r.check('votes.cursor').status).toBe('ok');
    expect(r.check('webhooks.secret').summary).toBe('2 v1 secrets (1 in webhooks.secrets, 1 in Redis); none is shown');
    expect(r.check('stats.source')).toMatchObject({ status: 'warn', summary: expect.stringContaining('the shard reports in Redis are not complete') });
  });

  it('fails redis.server when Redis is down, naming it without its password, and skips the leader', async () => {
    const port = await freePort();
    const t = await setup(`redis://:${REDIS_PASSWORD}@127.0.0.1:${port}`, { votes: { enabled: true } });
    const started = Date.now();
    const r = await t.report(1_500);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(r.check('redis.server')).toMatchObject({ status: 'fail', summary: expect.stringContaining(`cannot reach redis redis://127.0.0.1:${port}`) });
    expect(r.check('redis.server').fix).toContain('state.redis.url (LISTING_AGENT_STATE_REDIS_URL)');
    expect(r.check('redis.leader').status).toBe('skip');
    expect(r.check('votes.cursor')).toMatchObject({ status: 'fail', summary: expect.stringContaining('cannot read the stored cursor') });
    expect(r.code).toBe(2);
  });
});
