import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StatusDocument } from '../../../src/status/document.js';
import { escapeHtml } from '../../../src/status/html.js';
import { spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscordRest } from '../../helpers/fake-discord/index.js';
import { call } from '../../helpers/http.js';
import { freePort } from '../../helpers/ports.js';
import { startReceiver } from '../../helpers/receiver.js';

/*
 * Issue 34, item 4: what the agent prints or serves shows a URL as the daemon's redaction does
 * (`user:redacted@`, `token=redacted`), never its password or `?token=`: the status page and
 * /status.json (webhooks.publicUrl), `config check`, `doctor`, `webhooks test` and `stats post`,
 * each the CLI as a child process.
 */

const HOOK_PASSWORD = 'pl4nted-hook-pw-1c9e';
const HOOK_TOKEN = 'pl4nted-hook-tok-5a0d';
const PUBLIC_PASSWORD = 'pl4nted-public-pw-77b2';
const PUBLIC_TOKEN = 'pl4nted-public-tok-0f3e';
const SERVICE_PASSWORD = 'pl4nted-service-pw-4e81';
const ARG_PASSWORD = 'pl4nted-arg-pw-93aa';
const WEBHOOK_SECRET = 'whs_pl4nted_printed_urls_62c1';
const PLANTED = [HOOK_PASSWORD, HOOK_TOKEN, PUBLIC_PASSWORD, PUBLIC_TOKEN, SERVICE_PASSWORD, ARG_PASSWORD, WEBHOOK_SECRET];

const PUBLIC_URL = `https://agent:${PUBLIC_PASSWORD}@hooks.example.com/webhooks/listing?token=${PUBLIC_TOKEN}`;
const PUBLIC_SHOWN = 'https://agent:redacted@hooks.example.com/webhooks/listing?token=redacted';

/** The planted secrets found in `text`, raw, JSON-escaped or HTML-escaped (by position in PLANTED, never the value). */
function planted(text: string): number[] {
  return PLANTED.flatMap((secret, index) => ([secret, JSON.stringify(secret).slice(1, -1), escapeHtml(secret)].some((form) => text.includes(form)) ? [index] : []));
}

async function folder(config: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'la-printed-urls-'));
  await writeFile(join(dir, 'agent.json'), JSON.stringify(config));
  return dir;
}

describe('URLs as they are printed and served (issue 34, item 4)', () => {
  it('config check prints hook URLs, the public URL and a command argument without their password or ?token=', async () => {
    const dir = await folder({
      service: { token: 'a.b.c' },
      webhooks: { enabled: true, secrets: [WEBHOOK_SECRET], publicUrl: PUBLIC_URL },
      votes: {
        hooks: [
          { name: 'reward', url: `http://rewards:${HOOK_PASSWORD}@127.0.0.1:8080/reward?token=${HOOK_TOKEN}&shop=main` },
          { name: 'script', command: ['/usr/bin/reward', `--db=postgres://app:${ARG_PASSWORD}@127.0.0.1/rewards`, `https://app:${ARG_PASSWORD}@127.0.0.1/x`] },
        ],
      },
    });
    const check = spawnCli(['config', 'check', '-c', 'agent.json'], { cwd: dir, env: {} });
    expect(await check.exit()).toBe(0);
    const effective = JSON.parse(check.stdout());
    expect(effective.votes.hooks[0].url).toBe('http://rewards:redacted@127.0.0.1:8080/reward?token=redacted&shop=main');
    expect(effective.votes.hooks[1].command.slice(1)).toEqual(['--db=postgres://[redacted]@127.0.0.1/rewards', 'https://app:redacted@127.0.0.1/x']);
    expect(effective.webhooks.publicUrl).toBe(PUBLIC_SHOWN);
    expect(planted(check.stdout() + check.stderr())).toEqual([]);
  });

  it('doctor names service.v1 and webhooks.publicUrl without their password or ?token=, in text and --json', { timeout: 30_000 }, async () => {
    const fx = setupBot(await startTestEmulator());
    const port = await freePort();
    const dir = await folder({
      service: { token: fx.projectToken, v1: `http://svc:${SERVICE_PASSWORD}@127.0.0.1:${port}/api/v1` },
      health: { listen: '127.0.0.1:0' },
      webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [WEBHOOK_SECRET], publicUrl: PUBLIC_URL },
      votes: { hooks: [{ url: `http://rewards:${HOOK_PASSWORD}@127.0.0.1:1/reward?token=${HOOK_TOKEN}` }] },
    });
    for (const flags of [[], ['--json']]) {
      const doctor = spawnCli(['doctor', '-c', 'agent.json', '--timeout', '3000', ...flags], { cwd: dir, env: {} });
      expect(await doctor.exit(), flags.join(' ')).toBe(2);
      const out = doctor.stdout() + doctor.stderr();
      expect(out).toContain(`cannot reach the service at http://svc:redacted@127.0.0.1:${port}/api/v1/projects/@me`);
      expect(out).toContain(PUBLIC_SHOWN);
      expect(planted(out), flags.join(' ')).toEqual([]);
    }
  });

  it("webhooks test shows neither the URL's ?token= nor the secret when the receiver repeats them, and refuses user info without repeating it", async () => {
    const receiver = await startReceiver((request) => ({ status: 401, json: { error: `refused ${request.path} signed with ${WEBHOOK_SECRET}` } }));
    const sent = spawnCli(['webhooks', 'test', '--url', `${receiver.url}?token=${HOOK_TOKEN}`, '--secret', WEBHOOK_SECRET], { env: {} });
    expect(await sent.exit()).toBe(1);
    expect(sent.stdout()).toContain(`webhook.test to ${receiver.url}?token=redacted: 401 Unauthorized`);
    expect(sent.stdout()).toContain('answer: {"error":"refused /hook?token=[redacted] signed with [redacted]"}');
    expect(planted(sent.stdout() + sent.stderr())).toEqual([]);

    const credentialed = receiver.url.replace('//', `//hook:${HOOK_PASSWORD}@`);
    const refused = spawnCli(['webhooks', 'test', '--url', credentialed, '--secret', WEBHOOK_SECRET], { env: {} });
    expect(await refused.exit()).toBe(2);
    expect(refused.stderr()).toContain('--url holds user info (a user or a password before the @), which fetch cannot send: give the URL without it');
    expect(planted(refused.stdout() + refused.stderr())).toEqual([]);
  });

  it('stats post --dry-run prints the service URL without its password', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const discord = await startFakeDiscordRest({ approximateGuildCount: 3, recommendedShards: 1, token: 'fake-bot-token-0123' });
    const v1 = emu.urls.v1.replace('//', `//svc:${SERVICE_PASSWORD}@`);
    const dir = await folder({
      service: { token: fx.projectToken, v1, v0: emu.urls.v0 },
      discord: { token: 'fake-bot-token-0123', apiBaseUrl: discord.url },
      stats: { enabled: true, source: 'discord-rest' },
    });
    const post = spawnCli(['stats', 'post', '--dry-run', '-c', 'agent.json'], { cwd: dir, env: {} });
    expect(await post.exit()).toBe(0);
    expect(post.stdout()).toContain(`would send (v1_batch): POST ${emu.urls.v1.replace('//', '//svc:redacted@')}/projects/@me/metrics/batch`);
    expect(planted(post.stdout() + post.stderr())).toEqual([]);
  });

  it("the status page and /status.json show webhooks.publicUrl without its password or ?token=", { timeout: 30_000 }, async () => {
    const healthPort = await freePort();
    const dir = await folder({
      service: { token: 'a.b.c', v1: 'http://127.0.0.1:1/api/v1' },
      health: { listen: `127.0.0.1:${healthPort}` },
      webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [WEBHOOK_SECRET], publicUrl: PUBLIC_URL },
      votes: { hooks: [{ command: [process.execPath, '-e', ''] }] },
    });
    const daemon = spawnCli(['run', '-c', 'agent.json'], { cwd: dir, env: { LISTING_AGENT_LOG_FORMAT: 'json' } });
    await daemon.lineContaining('health server listening');
    const base = `http://127.0.0.1:${healthPort}`;
    const document = (await call<StatusDocument>(`${base}/status.json`)).body;
    expect(document.webhooks.publicUrl).toBe(PUBLIC_SHOWN);
    const page = (await call(`${base}/`)).text;
    expect(page).toContain(escapeHtml(PUBLIC_SHOWN));
    expect(planted(JSON.stringify(document) + page)).toEqual([]);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exit()).toBe(0);
    expect(planted(daemon.stdout() + daemon.stderr())).toEqual([]);
  });
});
