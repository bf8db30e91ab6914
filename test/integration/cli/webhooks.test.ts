import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileTokenStore } from '../../../src/api/oauth/token-store.js';
import { clientFor } from '../../helpers/client.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startReceiver } from '../../helpers/receiver.js';
import { freePort } from '../../helpers/ports.js';

const LEGACY = 'legacy-shared-secret';

const until = async <T>(attempt: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

/** An emulator with a bot, an http reward hook, and `agent.json` with the receiver on a free port. */
async function setup() {
  const emu = await startTestEmulator({ settings: { allowHttpLoopback: true } });
  const fx = setupBot(emu);
  const hook = await startReceiver();
  const cwd = await mkdtemp(join(tmpdir(), 'la-webhooks-cli-'));
  const port = await freePort();
  const config = {
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    state: { directory: './state' },
    votes: { hooks: [{ name: 'reward', url: hook.url, retries: 0 }] },
    webhooks: { enabled: true, listen: `127.0.0.1:${port}`, secrets: ['whs_not_the_webhooks'], legacyAuthorization: LEGACY },
    log: { format: 'json' },
  };
  await writeFile(join(cwd, 'agent.json'), JSON.stringify(config));
  return { emu, fx, hook, cwd, url: `http://127.0.0.1:${port}/webhooks/listing` };
}

describe('listing-agent webhooks serve / rotate', () => {
  it('serves the receiver alone; a rotation from the CLI reaches it without a restart; v0 and v1 votes reach the hooks once; SIGTERM stops it', async () => {
    const t = await setup();
    const client = clientFor(t.emu, { accessToken: t.fx.accessToken, projectId: t.fx.projectId });
    let rotated: Awaited<ReturnType<typeof runCliInProcess>> | undefined;
    const scenario = (async () => {
      // Listening: a GET is 405, which proves it is our receiver.
      await until(async () => ((await fetch(t.url)).status === 405 ? true : undefined));
      const webhook = await client.webhooks.create({ label: 'serve', url: t.url, allowHttpLoopback: true });
      rotated = await runCliInProcess(['webhooks', 'rotate', '--webhook', webhook.id, '--config', 'agent.json'], {
        cwd: t.cwd,
        env: { LISTING_OAUTH_ACCESS_TOKEN: t.fx.accessToken, LISTING_AGENT_WEBHOOKS_SECRETS: '' },
      });
      const voter = t.emu.admin.createUser({ username: 'voter' });
      t.emu.admin.castVote({ project_id: t.fx.projectId, user_id: voter.id });
      await t.emu.admin.idle();
      await t.hook.waitFor(1);
      const legacy = JSON.stringify({ bot: t.fx.platformId, user: '300000000000000003', type: 'upvote', isWeekend: false });
      // 503 until the project is known (looked up at start), then 204; a retry after that is a duplicate.
      await until(async () => ((await fetch(t.url, { method: 'POST', body: legacy, headers: { authorization: LEGACY } })).status === 204 ? true : undefined));
      expect((await fetch(t.url, { method: 'POST', body: legacy, headers: { authorization: LEGACY } })).status).toBe(204);
      await t.hook.waitFor(2);
      return webhook;
    })();
    const served = await runCliInProcess(['webhooks', 'serve', '--config', 'agent.json'], { cwd: t.cwd, stopAfter: scenario });
    const webhook = await scenario;
    expect(served.stderr).toBe('');
    expect(served.code).toBe(0);
    expect(served.stdout).toContain(`receiving at ${t.url} (hooks: reward)`);
    expect(rotated!.code).toBe(0);
    expect(rotated!.stdout).toContain(`Rotated webhook ${webhook.id}`);
    const secret = t.emu.context.state.webhooks.get(webhook.id)!.secret;
    expect(rotated!.stdout + rotated!.stderr + served.stdout + served.logs).not.toContain(secret);
    const file = join(t.cwd, 'state', 'webhook-secrets.json');
    expect(await readFile(file, 'utf8')).toContain(secret);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(t.hook.requests.map((r) => r.json.vote.road)).toEqual(['webhook', 'webhook']);
    expect(t.hook.requests[1]!.json.vote).toMatchObject({ platform_id: '300000000000000003', project_id: t.fx.projectId });
    expect(served.logs).toContain('webhook receiver listening');
  });

  it('rotate reads the token from a token file (with its project), refuses without one, and never prints a secret', async () => {
    const t = await setup();
    const client = clientFor(t.emu, { accessToken: t.fx.accessToken, projectId: t.fx.projectId });
    const webhook = await client.webhooks.create({ label: 'rotate', url: t.url, allowHttpLoopback: true });
    const none = await runCliInProcess(['webhooks', 'rotate', '--webhook', webhook.id, '--config', 'agent.json'], { cwd: t.cwd });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('LISTING_OAUTH_ACCESS_TOKEN');
    const store = createFileTokenStore(join(t.cwd, 'tokens.json'));
    const project = { id: t.fx.projectId, platform_id: t.fx.platformId, name: 'Test Bot', platform: 'discord', type: 'bot' };
    await store.save({ accessToken: t.fx.accessToken, refreshToken: t.fx.refreshToken, expiresAt: Date.now() + 3_600_000, scopes: ['project.webhooks.write'], project });
    const first = await runCliInProcess(['webhooks', 'rotate', '--webhook', webhook.id, '--access-token-file', 'tokens.json', '--config', 'agent.json'], { cwd: t.cwd });
    expect(first.code).toBe(0);
    const oldSecret = t.emu.context.state.webhooks.get(webhook.id)!.secret;
    await writeFile(join(t.cwd, 'token.txt'), `${t.fx.accessToken}\n`);
    const second = await runCliInProcess(['webhooks', 'rotate', '--webhook', webhook.id, '--project', t.fx.projectId, '--access-token-file', 'token.txt', '--config', 'agent.json'], { cwd: t.cwd });
    expect(second.code).toBe(0);
    const newSecret = t.emu.context.state.webhooks.get(webhook.id)!.secret;
    const saved = JSON.parse(await readFile(join(t.cwd, 'state', 'webhook-secrets.json'), 'utf8'));
    // The previous secret stays for its grace period; the new one has none.
    expect(saved.secrets.map((s: { secret: string; expiresAt?: string }) => [s.secret, s.expiresAt === undefined])).toEqual([
      [oldSecret, false],
      [newSecret, true],
    ]);
    expect(first.stdout + second.stdout + first.stderr + second.stderr).not.toMatch(/whs_/);
    const unknown = await runCliInProcess(['webhooks', 'rotate', '--webhook', '999', '--access-token-file', 'token.txt', '--project', t.fx.projectId, '--config', 'agent.json'], { cwd: t.cwd });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^listing-agent webhooks rotate: /);
  });

  it('explains itself: help, unknown subcommands, serve without any secret', async () => {
    const help = await runCliInProcess(['webhooks', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('rotate --webhook ID');
    expect((await runCliInProcess(['help'])).stdout).toContain('webhooks');
    expect((await runCliInProcess(['webhooks', 'nope'])).code).toBe(2);
    const testHelp = await runCliInProcess(['webhooks', 'test', '--help']);
    expect(testHelp.stdout).toContain('--secret SECRET');
    const cwd = await mkdtemp(join(tmpdir(), 'la-webhooks-cli-'));
    await writeFile(join(cwd, 'agent.json'), JSON.stringify({ service: { token: 'a.b.c' } }));
    const bare = await runCliInProcess(['webhooks', 'serve', '--config', 'agent.json'], { cwd });
    expect(bare.code).toBe(78);
    expect(bare.stderr).toContain('no webhook secret');
  });
});
