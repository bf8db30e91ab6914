import { access, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection } from '../../../src/redis/connection.js';
import { createRedisVoteLedger } from '../../../src/votes/ledger-redis.js';
import { voteKey, type Vote } from '../../../src/votes/types.js';
import { signDelivery } from '../../../src/contract/signature.js';
import { clientFor } from '../../helpers/client.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startReceiver } from '../../helpers/receiver.js';
import { startTestRedis, type TestRedis } from '../../helpers/redis.js';
import { programPath } from '../../setup/provided.js';
import { freePort } from '../../helpers/ports.js';

/**
 * The CLI commands that touch the state (`votes failed/retry`, `commands diff/sync`,
 * `webhooks serve`) on `state.redis`: they act on what the agents keep in Redis, never on an
 * empty state directory, and a Redis that does not answer is one line and exit code 1.
 */

const HOUR = 3_600_000;
const SECRET = 'whs_redis_cli_secret';
const iso = (ms: number) => new Date(ms).toISOString();

let redis: TestRedis;
let prefixes = 0;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis?.close();
});

/** `redis-cli`'s answer without the RESP framing (`:2` → `2`, a bulk string → its text, nil → undefined). */
async function redisValue(...args: string[]): Promise<string | undefined> {
  const reply = await redis.command(...args);
  if (reply === '$-1' || reply === '_') return undefined;
  if (reply.startsWith(':')) return reply.slice(1);
  if (reply.startsWith('$')) return reply.split('\r\n')[1];
  return reply;
}

/**
 * A folder with `agent.json` on the test Redis (a fresh prefix) whose http hook `reward` posts to
 * a local receiver (and with `stream`, the reward stream hook `redis-stream`); `state.directory`
 * is `./state`, which no command here may create.
 */
async function setup(extra: Record<string, unknown> = {}, options: { stream?: boolean; allowHttpLoopback?: boolean } = {}) {
  const emu = await startTestEmulator(options.allowHttpLoopback ? { settings: { allowHttpLoopback: true } } : {});
  const fx = setupBot(emu);
  const hook = await startReceiver();
  const cwd = await mkdtemp(join(tmpdir(), 'la-redis-cli-'));
  const prefix = `cli${++prefixes}:`;
  const config = {
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    state: { directory: './state', redis: { url: redis.url, prefix } },
    votes: { hooks: [{ name: 'reward', url: hook.url, retries: 0 }], ...(options.stream ? { stream: { enabled: true } } : {}) },
    log: { format: 'json' },
    ...extra,
  };
  await writeFile(join(cwd, 'agent.json'), JSON.stringify(config));
  const cli = (...args: string[]) => runCliInProcess([...args, '--config', 'agent.json'], { cwd, env: {} });
  const stateDirExists = () => access(join(cwd, 'state')).then(() => true, () => false);
  return { emu, fx, hook, cwd, prefix, config, cli, stateDirExists };
}

function vote(userId: string, createdAt: number): Vote {
  return { key: voteKey(userId, createdAt), userId, platformId: null, projectId: '1', weight: 1, createdAt: iso(createdAt), expiresAt: iso(createdAt + 12 * HOUR), road: 'poll' };
}

/** Dead letters in the Redis ledger under `prefix`, as an agent whose hooks gave up leaves them. */
async function deadLettersInRedis(prefix: string, letters: { vote: Vote; hook: string }[]) {
  const connection = createRedisConnection({ url: redis.url, prefix });
  connection.start();
  await connection.whenUp({ timeoutMs: 5_000 });
  const ledger = createRedisVoteLedger({ connection, agentId: 'agent-a', leaseMs: 15_000, keepKeysForMs: HOUR });
  try {
    await ledger.open();
    await ledger.recordPending(letters.map((l) => l.vote));
    for (const { vote: v, hook } of letters) {
      await ledger.recordDeadLetter({ key: v.key, hook, vote: v, attempts: 4, error: `${hook} failed: HTTP 500`, failedAt: iso(Date.now()) });
    }
    for (const key of new Set(letters.map((l) => l.vote.key))) await ledger.recordComplete(key);
  } finally {
    await ledger.close();
    await connection.close();
  }
}

describe.skipIf(!programPath('redis-server'))('the CLI on state.redis', () => {
  it('votes failed lists the dead letters kept in Redis; votes retry replays them through the http and stream hooks and removes them', async () => {
    const t = await setup({}, { stream: true });
    const none = await t.cli('votes', 'failed');
    expect(none.stderr).toBe('');
    expect(none.code).toBe(0);
    expect(none.stdout).toBe(`No dead letters in redis ${redis.url} (prefix ${t.prefix}).\n`);

    const a = vote('111', Date.now() - HOUR);
    const b = vote('222', Date.now() - HOUR / 2);
    const c = vote('333', Date.now() - HOUR / 4);
    await deadLettersInRedis(t.prefix, [{ vote: a, hook: 'reward' }, { vote: b, hook: 'vote-event' }, { vote: c, hook: 'reward' }, { vote: c, hook: 'redis-stream' }]);

    const listed = await t.cli('votes', 'failed');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`4 dead letters in redis ${redis.url} (prefix ${t.prefix}):`);
    expect(listed.stdout).toContain(`${a.key}  hook reward  4 attempts`);
    expect(listed.stdout).toContain(`${b.key}  hook vote-event`);
    const json = await t.cli('votes', 'failed', '--json');
    expect(json.stdout.trim().split('\n').map((line) => JSON.parse(line).key).sort()).toEqual([a.key, b.key, c.key, c.key].sort());

    const one = await t.cli('votes', 'retry', '--key', a.key);
    expect(one.stderr).toBe('');
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('Replayed 1 dead letter: 1 succeeded, 0 failed again.');
    expect(t.hook.requests.map((r) => r.headers['idempotency-key'])).toEqual([a.key]);

    const rest = await t.cli('votes', 'retry');
    expect(rest.code).toBe(0);
    expect(rest.stdout).toContain('Replayed 2 dead letters: 2 succeeded, 0 failed again.');
    expect(rest.stdout).toContain(`ok      ${c.key}  hook redis-stream`);
    expect(rest.stdout).toContain('1 dead letters of hooks not in the config (vote-event) were left alone');
    expect(t.hook.requests.map((r) => r.headers['idempotency-key'])).toEqual([a.key, c.key]);
    expect(t.hook.requests[1]!.json.vote).toMatchObject({ user_id: '333' });

    const left = await t.cli('votes', 'failed', '--json');
    expect(left.stdout.trim().split('\n').map((line) => JSON.parse(line).hook)).toEqual(['vote-event']);
    expect(await redisValue('HLEN', `${t.prefix}votes:dead`)).toBe('1');
    // The stream hook ran on the command's own connection: the vote is in the reward stream.
    expect(await redisValue('XLEN', `${t.prefix}votes:stream`)).toBe('1');
    // The replay's heartbeat is gone with it; nothing was written to the state directory.
    expect(await redisValue('KEYS', `${t.prefix}agent:*`)).toBe('*0');
    expect(await t.stateDirExists()).toBe(false);
  });

  it('commands sync records the hash in Redis without the leader fence; the second sync and diff see it unchanged', async () => {
    const t = await setup({ commands: { source: 'file', file: 'commands.json' } });
    await writeFile(join(t.cwd, 'commands.json'), JSON.stringify([{ name: 'ping', description: 'Replies with pong' }]));
    // An agent leads (a fence token was handed out): the CLI's sync is an operator's, not fenced.
    await redis.command('SET', `${t.prefix}leader:fence`, '7');

    const first = await t.cli('commands', 'sync');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Synced 1 commands to the listing.');
    const recorded = JSON.parse((await redisValue('GET', `${t.prefix}state:commands:lastSync`))!);
    expect(recorded).toMatchObject({ commands: [{ name: 'ping' }] });
    expect(recorded.hash).toMatch(/^[0-9a-f]+$/);

    const second = await t.cli('commands', 'sync');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Unchanged since the last sync: nothing sent (1 commands)');
    const diff = await t.cli('commands', 'diff');
    expect(diff.stdout).toContain('No change since the last sync (1 commands');
    expect(t.emu.admin.requests().filter((r) => r.method === 'PUT' && r.path.endsWith('/commands'))).toHaveLength(1);
    expect(await t.stateDirExists()).toBe(false);
  });

  it('webhooks serve records a signed delivery in the Redis ledger (and the reward stream); a second receiver on the same Redis answers its repeat as a duplicate', async () => {
    const [portA, portB] = [await freePort(), await freePort()];
    const t = await setup({ webhooks: { enabled: true, listen: `127.0.0.1:${portA}`, secrets: [SECRET] }, log: { format: 'json', level: 'debug' } }, { stream: true });
    await writeFile(join(t.cwd, 'b.json'), JSON.stringify({ ...t.config, webhooks: { enabled: true, listen: `127.0.0.1:${portB}`, secrets: [SECRET] }, log: { format: 'json', level: 'debug' } }));
    const createdAt = new Date(Date.now() - 60_000).toISOString();
    const body = JSON.stringify({
      type: 'vote.create',
      data: {
        id: '1500000000000000001',
        weight: 1,
        created_at: createdAt,
        expires_at: new Date(Date.parse(createdAt) + 12 * HOUR).toISOString(),
        project: { id: t.fx.projectId, type: 'bot', platform: 'discord', platform_id: t.fx.platformId },
        user: { id: '1400000000000000001', platform_id: '200000000000000002', name: 'voter', avatar_url: null },
      },
    });
    const deliver = (port: number) =>
      fetch(`http://127.0.0.1:${port}/webhooks/listing`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) }) },
      });
    const listening = async (port: number) => {
      for (let i = 0; i < 400; i += 1) {
        const status = await fetch(`http://127.0.0.1:${port}/webhooks/listing`).then((r) => r.status, () => 0);
        if (status === 405) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`no receiver on ${port}`);
    };

    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    // Both at once: with Redis neither takes a lock, and the ledger is theirs to share.
    const servingA = runCliInProcess(['webhooks', 'serve', '--config', 'agent.json'], { cwd: t.cwd, stopAfter: stopped });
    const servingB = runCliInProcess(['webhooks', 'serve', '--config', 'b.json'], { cwd: t.cwd, stopAfter: stopped });
    try {
      await Promise.all([listening(portA), listening(portB)]);
      expect((await deliver(portA)).status).toBe(204);
      await t.hook.waitFor(1);
      expect((await deliver(portB)).status).toBe(204);
    } finally {
      stop();
    }
    const [a, b] = await Promise.all([servingA, servingB]);
    expect(a.stderr + b.stderr).toBe('');
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(b.logs).toContain('vote already recorded');
    // The logger redacts the configured URL itself (it may hold a password); the prefix says where.
    expect(a.logs).toMatch(new RegExp(`"state":"redis [^"]+ \\(prefix ${t.prefix}\\)".*"msg":"webhooks serve: votes are recorded here"`));
    // One vote, its hook once, recorded in Redis; nothing in the state directory.
    expect(t.hook.requests).toHaveLength(1);
    expect(t.hook.requests[0]!.json.vote).toMatchObject({ user_id: '1400000000000000001', road: 'webhook' });
    expect(await redisValue('ZCARD', `${t.prefix}votes:index`)).toBe('1');
    expect(await redisValue('XLEN', `${t.prefix}votes:stream`)).toBe('1');
    expect(await t.stateDirExists()).toBe(false);
  });

  it('webhooks rotate stores the new secret in Redis, where a running webhooks serve with no copy of it accepts it; nothing goes to the state directory', async () => {
    const port = await freePort();
    const t = await setup({ webhooks: { enabled: true, listen: `127.0.0.1:${port}`, secrets: [SECRET] } }, { allowHttpLoopback: true });
    const client = clientFor(t.emu, { accessToken: t.fx.accessToken, projectId: t.fx.projectId });
    const webhook = await client.webhooks.create({ label: 'rotate', url: `http://127.0.0.1:${port}/webhooks/listing`, allowHttpLoopback: true });
    const url = `http://127.0.0.1:${port}/webhooks/listing`;
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const serving = runCliInProcess(['webhooks', 'serve', '--config', 'agent.json'], { cwd: t.cwd, stopAfter: stopped });
    let rotated: Awaited<ReturnType<typeof runCliInProcess>>;
    let status: number;
    try {
      for (let i = 0; i < 400 && (await fetch(url).then((r) => r.status, () => 0)) !== 405; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
      rotated = await runCliInProcess(['webhooks', 'rotate', '--webhook', webhook.id, '--config', 'agent.json'], { cwd: t.cwd, env: { LISTING_OAUTH_ACCESS_TOKEN: t.fx.accessToken } });
      const secret = t.emu.context.state.webhooks.get(webhook.id)!.secret;
      const body = JSON.stringify({
        type: 'vote.create',
        data: {
          id: '1500000000000000002',
          weight: 1,
          created_at: new Date(Date.now() - 1_000).toISOString(),
          expires_at: new Date(Date.now() + 12 * HOUR).toISOString(),
          project: { id: t.fx.projectId, type: 'bot', platform: 'discord', platform_id: t.fx.platformId },
          user: { id: '1400000000000000002', platform_id: '200000000000000009', name: 'voter', avatar_url: null },
        },
      });
      status = (await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signDelivery({ secret, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) }) } })).status;
      await t.hook.waitFor(1);
    } finally {
      stop();
    }
    const served = await serving;
    const secret = t.emu.context.state.webhooks.get(webhook.id)!.secret;
    expect(rotated!.code).toBe(0);
    expect(rotated!.stdout).toContain(`Rotated webhook ${webhook.id}: the new secret is in redis redis://127.0.0.1:${redis.port}`);
    expect(status!).toBe(204);
    const stored = JSON.parse((await redisValue('GET', `${t.prefix}webhooks:secrets`))!);
    expect(stored.secrets).toEqual([expect.objectContaining({ secret, source: 'rotate', webhookId: webhook.id })]);
    expect(rotated!.stdout + rotated!.stderr + served.stdout + served.stderr + served.logs).not.toContain(secret);
    expect(served.code).toBe(0);
    expect(await t.stateDirExists()).toBe(false);
  });

  it('a Redis that does not answer is one line naming its host (never the password) and exit code 1, for every command', async () => {
    const down = await startTestRedis();
    await down.stop();
    try {
      const t = await setup({
        state: { directory: './state', redis: { url: `redis://:hunter2-pass@127.0.0.1:${down.port}/0` } },
        commands: { source: 'file', file: 'commands.json' },
        webhooks: { enabled: true, listen: `127.0.0.1:${await freePort()}`, secrets: [SECRET] },
      });
      await writeFile(join(t.cwd, 'commands.json'), JSON.stringify([{ name: 'ping', description: 'Replies with pong' }]));
      const runs = await Promise.all([
        t.cli('votes', 'failed'),
        t.cli('votes', 'retry'),
        t.cli('commands', 'sync'),
        t.cli('commands', 'diff'),
        t.cli('webhooks', 'serve'),
        runCliInProcess(['webhooks', 'rotate', '--webhook', '123', '--project', t.fx.projectId, '--config', 'agent.json'], { cwd: t.cwd, env: { LISTING_OAUTH_ACCESS_TOKEN: t.fx.accessToken } }),
      ]);
      // Redis is asked before the webhook is rotated: no new secret is made that nobody keeps.
      expect(t.emu.admin.requests().filter((r) => r.path.includes('rotate'))).toEqual([]);
      for (const [i, run] of runs.entries()) {
        const name = ['votes failed', 'votes retry', 'commands sync', 'commands diff', 'webhooks serve', 'webhooks rotate'][i];
        expect(run.code, name).toBe(1);
        expect(run.stderr, name).toMatch(new RegExp(`^listing-agent ${name}: cannot reach redis redis://127\\.0\\.0\\.1:${down.port}/0 \\(state\\.redis\\.url\\) within 5 s: .+\\n$`));
        expect(run.stdout + run.stderr + run.logs, name).not.toContain('hunter2');
        expect(run.stderr, name).not.toMatch(/\n\s+at /);
      }
      expect(t.hook.requests).toHaveLength(0);
      expect(await t.stateDirExists()).toBe(false);
    } finally {
      await down.close();
    }
  });
});
