import { access, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signDelivery } from '../../../src/contract/signature.js';
import { spawnCli, type CliChild } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscordRest } from '../../helpers/fake-discord/index.js';
import { call } from '../../helpers/http.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';

/**
 * `listing-agent run` with the health server off: nothing of the agent's own keeps node's event
 * loop busy (every agent timer is unref'd: the library never keeps a bot's process alive), so the
 * daemon itself must. Each capability alone: the process is still alive and still working after
 * several of its intervals, and SIGTERM stops it with exit 0 and the state lock released.
 */

const SECRET = 'whs_run_alive_test_secret';

async function workspace(config: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'la-run-alive-'));
  await writeFile(join(dir, 'config.json'), JSON.stringify({ health: { enabled: false }, state: { directory: './state' }, log: { format: 'json' }, ...config }, null, 2));
  return dir;
}

/** Waits for `check`, failing at once (with the daemon's output) if the daemon exits first. */
async function whileAlive(cli: CliChild, what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (cli.child.exitCode !== null || cli.child.signalCode !== null) {
      throw new Error(`the daemon exited (${cli.child.exitCode ?? cli.child.signalCode}) while waiting for ${what}; stdout: ${cli.stdout()}; stderr: ${cli.stderr()}`);
    }
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stdout: ${cli.stdout()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const exists = (path: string) => access(path).then(() => true, () => false);

/** SIGTERM: exit 0, and the state directory's lock is gone. */
async function stopsCleanly(cli: CliChild, dir: string): Promise<void> {
  expect(await exists(join(dir, 'state', 'state.lock'))).toBe(true);
  cli.child.kill('SIGTERM');
  expect(await cli.exit()).toBe(0);
  expect(await exists(join(dir, 'state', 'state.lock'))).toBe(false);
  expect(cli.stdout()).toContain('"msg":"agent stopped"');
}

describe('listing-agent run with health.enabled false stays up until told to stop', () => {
  it('votes alone: polls the cursor again and again, and rewards a vote cast later', { timeout: 40_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const voters = [emu.admin.createUser({ username: 'early' }), emu.admin.createUser({ username: 'late' })];
    const hook = await startVoteHookServer();
    emu.admin.castVote({ project_id: fx.projectId, user_id: voters[0]!.id });
    const dir = await workspace({
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ name: 'reward', url: hook.url }] },
    });
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: {} });
    await whileAlive(cli, 'the first vote rewarded', () => hook.calls.length === 1);
    const polls = () => emu.admin.requests().filter((r) => r.method === 'GET' && r.path.endsWith('/votes')).length;
    const first = polls();
    // One more poll, then the vote cast after it needs yet another: the cursor is polled again and again.
    await whileAlive(cli, 'one more poll of the cursor', () => polls() >= first + 1);
    emu.admin.castVote({ project_id: fx.projectId, user_id: voters[1]!.id });
    await whileAlive(cli, 'the later vote rewarded', () => hook.calls.length === 2);
    expect(polls()).toBeGreaterThanOrEqual(first + 2);
    await stopsCleanly(cli, dir);
  });

  it('stats alone: keeps posting on its schedule, and logs the first post (only) at info', { timeout: 40_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const discord = await startFakeDiscordRest({ approximateGuildCount: 321, recommendedShards: 1, token: 'fake-bot-token' });
    const dir = await workspace({
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      discord: { token: 'fake-bot-token', apiBaseUrl: discord.url },
      stats: { enabled: true, source: 'discord-rest', mode: 'patch', schedule: '*/2 * * * * *', rest: { shardCount: 1, cacheTtl: '10s' } },
    });
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: {} });
    await whileAlive(cli, 'three posts', () => emu.admin.metrics(fx.projectId).length >= 3);
    expect(emu.admin.metrics(fx.projectId).at(-1)?.metrics).toMatchObject({ server_count: 321 });
    const firstPosts = cli
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"msg":"first stats post accepted"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(firstPosts).toEqual([expect.objectContaining({ level: 'info', target: 'v1', serverCount: 321, shardCount: 1 })]);
    await stopsCleanly(cli, dir);
  });

  it('commands alone: still up well after the sync', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const dir = await workspace({
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      commands: { enabled: true, source: 'file', file: 'commands.json' },
    });
    await writeFile(join(dir, 'commands.json'), JSON.stringify([{ name: 'ping', description: 'Check that the bot is alive' }]));
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: {} });
    await whileAlive(cli, 'the sync', () => emu.admin.commands(fx.projectId).length === 1);
    const syncedAt = Date.now();
    // Nothing more to observe from outside until the next interval (a minute at least): alive is the point.
    await whileAlive(cli, 'three seconds past the sync', () => Date.now() - syncedAt > 3_000);
    await stopsCleanly(cli, dir);
  });

  it('webhooks alone: keeps receiving and rewarding signed deliveries', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const hook = await startVoteHookServer();
    const dir = await workspace({
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      votes: { hooks: [{ name: 'reward', url: hook.url }] },
      webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [SECRET] },
    });
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: {} });
    const url: string = JSON.parse(await cli.lineContaining('webhook receiver listening')).url;
    const deliver = async (user: string) => {
      const body = JSON.stringify(voteCreate(fx, user));
      return call(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) }) } });
    };
    expect((await deliver('u1')).status).toBe(204);
    await whileAlive(cli, 'the first reward', () => hook.calls.length === 1);
    const at = Date.now();
    await whileAlive(cli, 'three seconds later', () => Date.now() - at > 3_000);
    expect((await deliver('u2')).status).toBe(204);
    await whileAlive(cli, 'the second reward', () => hook.calls.length === 2);
    await stopsCleanly(cli, dir);
  });

  it('a token refused at start: stays up, keeps retrying, and rewards signed webhook votes meanwhile', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const hook = await startVoteHookServer();
    const dir = await workspace({
      service: { token: 'not.a-valid.token', v1: emu.urls.v1, v0: emu.urls.v0 },
      votes: { enabled: true, pollInterval: '5s', hooks: [{ name: 'reward', url: hook.url }] },
      webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [SECRET] },
    });
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: dir, env: {} });
    const asked = () => emu.admin.requests().filter((r) => r.path === '/api/v1/projects/@me').length;
    // The receiver opens at the start, whatever the service says of the token.
    const url: string = JSON.parse(await cli.lineContaining('webhook receiver listening')).url;
    await whileAlive(cli, 'the first refusal', () => asked() >= 1);
    const body = JSON.stringify(voteCreate(fx, 'u1'));
    const signed = signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) });
    expect((await call(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signed } })).status).toBe(204);
    await whileAlive(cli, 'the webhook vote rewarded', () => hook.calls.length === 1);
    // The first retry comes 5 s later.
    await whileAlive(cli, 'a retry', () => asked() >= 2, 15_000);
    await cli.lineContaining('the service still refuses the project token');
    const refused = cli.stdout().split('\n').filter((line) => line.includes('refuse')).map((line) => JSON.parse(line));
    expect(refused.map((line) => [line.level, line.attempt])).toEqual([['error', 1], ['warn', 2]]);
    expect(refused[0].fix).toContain(`service.token (from the config file ${join(dir, 'config.json')})`);
    expect(refused[0].fix).toContain('listing-agent doctor');
    await stopsCleanly(cli, dir);
  });
});

/** The Snowflake of voter `uN` (`u1`: ...001), and of their vote. */
const snowflakeOf = (base: bigint, user: string) => String(base + BigInt(user.replace(/\D/g, '')));

function voteCreate(fx: { projectId: string; platformId: string }, user: string) {
  return {
    type: 'vote.create',
    data: {
      id: snowflakeOf(1_800_000_000_000_000_000n, user),
      weight: 1,
      created_at: new Date().toISOString(),
      expires_at: new Date(Date.now() + 12 * 3_600_000).toISOString(),
      project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
      user: { id: snowflakeOf(1_700_000_000_000_000_000n, user), platform_id: '200000000000000002', name: user, avatar_url: null },
    },
  };
}
