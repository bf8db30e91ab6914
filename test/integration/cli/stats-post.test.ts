import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscordRest } from '../../helpers/fake-discord/index.js';

const BOT_TOKEN = 'fake-bot-token-SECRET';

/** An emulator with a bot, a fake Discord REST API, and a folder with `agent.json` joining them. */
async function setup(stats: Record<string, unknown> = {}, discord: Record<string, unknown> = {}) {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const fake = await startFakeDiscordRest({ approximateGuildCount: 1_234, recommendedShards: 2, token: BOT_TOKEN });
  const cwd = await mkdtemp(join(tmpdir(), 'la-stats-post-'));
  const config = {
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    discord: { token: BOT_TOKEN, apiBaseUrl: fake.url, ...discord },
    stats: { enabled: true, source: 'discord-rest', ...stats },
  };
  await writeFile(join(cwd, 'agent.json'), JSON.stringify(config));
  const post = (...flags: string[]) => runCliInProcess(['stats', 'post', '--config', 'agent.json', ...flags], { cwd, env: {} });
  return { emu, fx, fake, cwd, post };
}

describe('listing-agent stats post', () => {
  it('--dry-run reads Discord once and prints the batch it would send, sending nothing', async () => {
    const t = await setup({ v0: true });
    const res = await t.post('--dry-run');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('1234 servers, 2 shards');
    expect(res.stdout).toContain(`would send (v1_batch): POST ${t.emu.urls.v1}/projects/@me/metrics/batch`);
    const body = JSON.parse(res.stdout.split('\n').find((line) => line.startsWith('{"data"'))!);
    expect(body.data).toEqual([{ metrics: { server_count: 1_234, shard_count: 2 }, timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    expect(res.stdout).toContain('would send (v0): POST');
    expect(res.stdout).toContain('{"server_count":1234,"shard_count":2}');
    expect(t.fake.requests.map((r) => r.path)).toEqual(['/applications/@me', '/gateway/bot']);
    expect(t.emu.admin.requests()).toEqual([]);
    expect(res.stdout + res.stderr).not.toContain('SECRET');
  });

  it('posts the counts Discord gives as one batch entry, and to v0 when enabled', async () => {
    const t = await setup({ v0: true });
    const res = await t.post();
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('posted (v1_batch)');
    expect(res.stdout).toContain('posted (v0)');
    const applied = t.emu.admin.metrics(t.fx.projectId);
    expect(applied.map((m) => [m.source, m.metrics])).toEqual([
      ['v1-batch', { server_count: 1_234, shard_count: 2 }],
      ['v0', expect.objectContaining({ server_count: 1_234, shard_count: 2 })],
    ]);
  });

  it('posts one PATCH in patch mode, with the configured shard count', async () => {
    const t = await setup({ mode: 'patch', rest: { shardCount: 4 } });
    const res = await t.post();
    expect(res.code).toBe(0);
    expect(t.emu.admin.metrics(t.fx.projectId).map((m) => [m.source, m.metrics])).toEqual([['v1', { server_count: 1_234, shard_count: 4 }]]);
    expect(t.fake.requests.map((r) => r.path)).toEqual(['/applications/@me']);
  });

  it('exits 1 with the reason when the counts are not ready, posting nothing', async () => {
    const t = await setup({}, { token: 'not-the-bot-token' });
    const res = await t.post();
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('the counts are not ready');
    expect(res.stderr).toContain('check discord.token');
    expect(t.emu.admin.metrics(t.fx.projectId)).toEqual([]);
  });

  it('exits 1 when the service refuses the post, saying why', async () => {
    const t = await setup();
    t.emu.admin.deleteProject(t.fx.projectId);
    const res = await t.post();
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('v1_batch failed');
    expect(res.stderr).toContain('404');
  });

  it('explains in one line why the embedded and push sources cannot post once, exit 1', async () => {
    for (const source of ['embedded', 'push']) {
      const t = await setup({ source, enabled: false });
      const res = await t.post('--dry-run');
      expect(res.code).toBe(1);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toContain(`stats.source is ${source}`);
      expect(t.fake.requests).toEqual([]);
    }
  });

  it('refuses an invalid config with exit 78 and shows its own help', async () => {
    const t = await setup({ mode: 'sometimes' });
    const res = await t.post();
    expect(res.code).toBe(78);
    expect(res.stderr).toContain('stats.mode');
    const help = await runCliInProcess(['stats', 'post', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--dry-run');
    const usage = await runCliInProcess(['stats', 'send']);
    expect(usage.code).toBe(2);
  });
});
