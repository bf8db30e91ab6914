import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SECRET_PATHS } from '../../../src/public/config.js';
import { signDelivery } from '../../../src/public/webhooks.js';
import { runCliInProcess, spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { freePort } from '../../helpers/ports.js';
import { sendOnFreshConnection } from '../../helpers/sockets.js';

/*
 * Issue 34, "what held, and must keep holding", for the daemon as a child process: a value
 * planted in every secret of the schema never shows in its log, its state files, `/status.json`,
 * the page, `/metrics`, `/readyz` or the CLI's output (`config check`, `doctor`, `votes failed`);
 * its state files are 0600 in a 0700 directory; it listens on loopback by default.
 */

/**
 * A value for every secret of the schema but those of `state.redis` (this daemon runs on files; a Redis URL's password:
 * test/integration/cli/redis-state.test.ts; every secret path is masked by `config check`: test/unit/config/mask.test.ts).
 */
const PLANTED = {
  'discord.token': 'planted-discord-token.MTIzNDU2.SECRETabcdef',
  'stats.push.key': 'planted-push-key-SECRET-0123456789',
  'votes.hooks[].secret': 'planted-hook-secret-SECRET-5d8e0',
  'votes.hooks[].authorization': 'Bearer planted-hook-authorization-SECRET-2b6c',
  'webhooks.secrets[]': 'whs_planted_webhook_secret_SECRET',
  'webhooks.legacyAuthorization': 'planted-legacy-authorization-SECRET',
  'health.adminToken': 'planted-admin-token-SECRET-0123456789',
} as const satisfies Record<string, string>;

const AUTH = 'votes.hooks[].authorization' as const;
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A reward hook that fails its first call (500, a text that quotes nothing it was sent) and takes the rest. */
async function rewardHook(): Promise<{ url: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      if (calls === 1) res.writeHead(500, { 'content-type': 'text/plain' }).end('the shop is down');
      else res.writeHead(204).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/reward`, calls: () => calls };
}

/** Every file under `dir`, with its mode. */
async function filesUnder(dir: string): Promise<{ path: string; mode: number; text: string }[]> {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    found.push({ path, mode: (await stat(path)).mode & 0o777, text: (await readFile(path)).toString('latin1') });
  }
  return found;
}

/** The places (by name) where a planted secret shows, raw or JSON-escaped or URL-encoded. */
function leaks(places: Record<string, string>, secrets: Readonly<Record<string, string>>): string[] {
  const found: string[] = [];
  for (const [where, text] of Object.entries(places)) {
    for (const [path, value] of Object.entries(secrets)) {
      const forms = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), value.replace(/^Bearer /, '')]);
      if ([...forms].some((form) => text.includes(form))) found.push(`${path} in ${where}`);
    }
  }
  return found;
}

describe('the daemon keeps what held (issue 34)', () => {
  it('listens on loopback by default: the health server, the webhook receiver and the push endpoint', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'la-held-defaults-'));
    const res = await runCliInProcess(['config', 'check'], { cwd, env: { LISTING_AGENT_SERVICE_TOKEN: 'proj.SECRET-PROJECT-TOKEN.sig' } });
    expect(res.code).toBe(0);
    const effective = JSON.parse(res.stdout);
    const listens = [effective.health.listen, effective.webhooks.listen, effective.stats.push.listen];
    expect(listens).toEqual(['127.0.0.1:9464', '127.0.0.1:9465', '127.0.0.1:9466']);
  });

  it('shows no planted secret anywhere, and keeps its state files 0600 in a 0700 directory', { timeout: 90_000 }, async () => {
    // A secret the schema gains must be planted here too (the project token is the emulator's).
    const planted = [...SECRET_PATHS].filter((path) => !path.startsWith('state.redis.') && path !== 'service.token');
    expect(Object.keys(PLANTED).sort()).toEqual(planted.sort());
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const secrets = { ...PLANTED, 'service.token': fx.projectToken };
    const hook = await rewardHook();
    const dir = await mkdtemp(join(tmpdir(), 'la-held-secrets-'));
    const [healthPort, webhookPort, pushPort] = [await freePort(), await freePort(), await freePort()];
    const config = {
      service: { token: '${PROJECT_TOKEN}', v1: emu.urls.v1, v0: emu.urls.v0 },
      discord: { token: PLANTED['discord.token'] },
      health: { listen: `127.0.0.1:${healthPort}` },
      state: { directory: './state' },
      log: { format: 'json', level: 'debug' },
      stats: { enabled: true, source: 'push', push: { listen: `127.0.0.1:${pushPort}`, key: PLANTED['stats.push.key'] } },
      votes: {
        enabled: true,
        pollInterval: '5s',
        hooks: [{ name: 'shop', url: hook.url, retries: 0, secret: PLANTED['votes.hooks[].secret'], authorization: PLANTED[AUTH] }],
      },
      webhooks: { enabled: true, listen: `127.0.0.1:${webhookPort}`, secrets: [PLANTED['webhooks.secrets[]']] },
    };
    await writeFile(join(dir, 'agent.json'), JSON.stringify(config));
    const env = {
      PROJECT_TOKEN: fx.projectToken,
      LISTING_AGENT_WEBHOOKS_LEGACY_AUTHORIZATION: PLANTED['webhooks.legacyAuthorization'],
      LISTING_AGENT_HEALTH_ADMIN_TOKEN: PLANTED['health.adminToken'],
    };
    const cli = spawnCli(['run', '--config', 'agent.json'], { cwd: dir, env });
    await cli.lineContaining('agent ready', 30_000);
    const places: Record<string, string> = {};

    // Counts pushed (and a wrong key), a signed vote (and a wrong signature), a v0 vote (and a wrong Authorization).
    const push = (key: string) => sendOnFreshConnection(`http://127.0.0.1:${pushPort}/stats`, {
      method: 'POST',
      body: JSON.stringify({ shard_id: 0, shard_count: 1, server_count: 77 }),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    expect((await push(PLANTED['stats.push.key'])).status).toBe(204);
    places['a refused push'] = (await push('wrong-push-key-0123456789')).text;
    const receiver = `http://127.0.0.1:${webhookPort}/webhooks/listing`;
    const createdAt = new Date().toISOString();
    const body = JSON.stringify({
      type: 'vote.create',
      data: {
        id: '1500000000000000011',
        weight: 1,
        created_at: createdAt,
        expires_at: new Date(Date.parse(createdAt) + 43_200_000).toISOString(),
        project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
        user: { id: '600000000000000001', platform_id: '200000000000000002', name: 'voter', avatar_url: null },
      },
    });
    const deliver = (sent: string, headers: Record<string, string>) =>
      sendOnFreshConnection(receiver, { method: 'POST', body: sent, headers });
    const t = Math.floor(Date.now() / 1000);
    const signature = signDelivery({ secret: PLANTED['webhooks.secrets[]'], rawBody: body, timestampSeconds: t });
    expect((await deliver(body, { 'content-type': 'application/json', ...signature })).status).toBe(204);
    places['a refused signature'] = (await deliver(body, { 'x-topgg-signature': 't=1,v1=00' })).text;
    const upvote = JSON.stringify({ bot: fx.platformId, user: '600000000000000002', type: 'upvote' });
    expect((await deliver(upvote, { authorization: PLANTED['webhooks.legacyAuthorization'] })).status).toBe(204);
    places['a refused v0 Authorization'] = (await deliver(upvote, { authorization: 'wrong' })).text;
    await cli.lineContaining('dead-lettered', 30_000);

    // What the health server shows, an action with the admin token, one without.
    const health = `http://127.0.0.1:${healthPort}`;
    for (const path of ['/', '/status.json', '/metrics', '/readyz', '/healthz']) {
      places[`GET ${path}`] = (await sendOnFreshConnection(`${health}${path}`)).text;
    }
    const adminHeaders = { 'content-type': 'application/json', authorization: `Bearer ${PLANTED['health.adminToken']}` };
    const act = (name: string, headers: Record<string, string>) =>
      sendOnFreshConnection(`${health}/status/actions/${name}`, { method: 'POST', body: '{}', headers });
    places['the post-stats action'] = (await act('post-stats', adminHeaders)).text;
    places['a refused action'] = (await act('retry', { ...adminHeaders, authorization: 'Bearer wrong' })).text;
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
    places['the daemon log'] = cli.stdout() + cli.stderr();

    // The CLI, after the daemon: the effective config, the doctor, the dead letter.
    for (const args of [['config', 'check'], ['doctor'], ['votes', 'failed']]) {
      const res = await runCliInProcess([...args, '--config', 'agent.json'], { cwd: dir, env });
      places[`listing-agent ${args.join(' ')}`] = res.stdout + res.stderr + res.logs;
    }
    expect(places['listing-agent votes failed']).toContain('shop');

    const state = join(dir, 'state');
    expect((await stat(state)).mode & 0o777).toBe(0o700);
    const files = await filesUnder(state);
    expect(files.map((file) => file.path.slice(state.length + 1)).sort()).toEqual(expect.arrayContaining(['state.json', 'votes.journal']));
    for (const file of files) {
      expect({ file: file.path, mode: file.mode.toString(8) }).toEqual({ file: file.path, mode: '600' });
      places[`the state file ${file.path.slice(state.length + 1)}`] = file.text;
    }
    expect(leaks(places, secrets)).toEqual([]);
  });
});
