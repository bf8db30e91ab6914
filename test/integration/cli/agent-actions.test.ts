import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StatusDocument } from '../../../src/status/document.js';
import { runCliInProcess, spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { freePort } from '../../helpers/ports.js';

const ADMIN_TOKEN = 'cli-admin-token-0123456789abcdef';
const PUSH_KEY = 'cli-push-key-0123';

/**
 * The daemon (a child process) and the CLI's --agent road to it: `votes retry --agent` and
 * `stats post --agent` ask the running agent through its status actions, beside the state lock it
 * holds; the status page says it runs as a daemon.
 */
async function daemon(options: { voter?: string } = {}) {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  // A vote cast before the start: the first poll of the cursor finds it (votes.lookback asks a first start for it).
  if (options.voter) emu.admin.castVote({ project_id: fx.projectId, user_id: emu.admin.createUser({ username: options.voter }).id });
  const dir = await mkdtemp(join(tmpdir(), 'la-agent-actions-'));
  const healthPort = await freePort();
  const pushPort = await freePort();
  const flag = join(dir, 'hook-works');
  // The reward hook fails (exit 3) until the flag file exists.
  const script = `if (!require('node:fs').existsSync(${JSON.stringify(flag)})) { console.error('the shop is down'); process.exit(3) }`;
  const config = {
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    health: { listen: `127.0.0.1:${healthPort}`, adminToken: ADMIN_TOKEN },
    state: { directory: './state' },
    log: { format: 'json' },
    stats: { enabled: true, source: 'push', push: { listen: `127.0.0.1:${pushPort}`, key: PUSH_KEY } },
    votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ type: 'exec', name: 'reward', command: [process.execPath, '-e', script], retries: 0 }] },
  };
  await writeFile(join(dir, 'agent.json'), JSON.stringify(config));
  const cli = spawnCli(['run', '--config', 'agent.json'], { cwd: dir, env: {} });
  await cli.lineContaining('agent ready');
  const base = `http://127.0.0.1:${healthPort}`;
  const status = async () => (await call<StatusDocument>(`${base}/status.json`)).body;
  const run = (args: string[], env: Record<string, string> = {}) => runCliInProcess([...args, '--config', 'agent.json'], { cwd: dir, env });
  return { emu, fx, dir, cli, base, status, run, flag, push: (servers: number) => call(`http://127.0.0.1:${pushPort}/stats`, { method: 'POST', bearer: PUSH_KEY, json: { shard_id: 0, shard_count: 1, server_count: servers } }) };
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the CLI --agent road to a running daemon', () => {
  it('votes retry --agent replays a dead letter in the running agent; stats post --agent posts its pushed counts', { timeout: 60_000 }, async () => {
    const d = await daemon({ voter: 'grace' });
    expect((await d.status()).agent.mode).toBe('daemon');

    // A vote whose hook fails: a dead letter in the daemon.
    await until('the dead letter', async () => ((await d.status()).votes.deadLetterCount === 1 ? true : undefined));

    // With --agent the daemon replays it (no state lock to take), with the hook that works now.
    await writeFile(d.flag, '');
    const retried = await d.run(['votes', 'retry', '--agent']);
    expect(retried.stderr).toBe('');
    expect(retried.code).toBe(0);
    expect(retried.stdout).toContain('The running agent took 1 dead letter');
    await until('the dead letter gone', async () => ((await d.status()).votes.deadLetterCount === 0 ? true : undefined));
    expect((await d.run(['votes', 'retry', '--agent'])).stdout).toBe('No dead letter matches: nothing to replay.\n');

    // The push source has counts only in the running agent: --agent posts them.
    expect((await d.push(4_242)).status).toBeLessThan(300);
    await until('the first post', async () => ((await d.status()).stats.posts.length > 0 ? true : undefined));
    expect((await d.push(4_343)).status).toBeLessThan(300);
    const posted = await d.run(['stats', 'post', '--agent']);
    expect(posted.stderr).toBe('');
    expect(posted.stdout).toBe('the agent posted (v1_batch): 4343 servers, 1 shards\n');
    expect(d.emu.admin.metrics(d.fx.projectId).at(-1)?.metrics.server_count).toBe(4_343);

    // The daemon logged each action, without the token.
    d.cli.child.kill('SIGTERM');
    expect(await d.cli.exit()).toBe(0);
    const logs = d.cli.stdout();
    expect(logs).toContain('status page action: dead letters retried');
    expect(logs).toContain('status page action: stats posted now');
    expect(logs).not.toContain(ADMIN_TOKEN);
  });

  it('says what to fix: no token in the config, a token the agent refuses, no agent listening', { timeout: 60_000 }, async () => {
    const d = await daemon();
    const wrong = await d.run(['votes', 'retry', '--agent'], { LISTING_AGENT_HEALTH_ADMIN_TOKEN: 'another-admin-token-0123456789' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(`listing-agent votes retry: the agent at ${d.base} refused the admin token: health.adminToken here differs from the running agent's\n`);
    d.cli.child.kill('SIGTERM');
    expect(await d.cli.exit()).toBe(0);
    const gone = await d.run(['stats', 'post', '--agent']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`listing-agent stats post: no agent answers at ${d.base} (health.listen)`);
    expect(gone.stderr).toContain("Is it running ('listing-agent run')?");
    await writeFile(join(d.dir, 'bare.json'), JSON.stringify({ service: { token: d.fx.projectToken } }));
    const bare = await runCliInProcess(['votes', 'retry', '--agent', '--config', 'bare.json'], { cwd: d.dir, env: {} });
    expect(bare.code).toBe(78);
    expect(bare.stderr).toContain('--agent needs health.adminToken (LISTING_AGENT_HEALTH_ADMIN_TOKEN)');
    const both = await d.run(['stats', 'post', '--agent', '--dry-run']);
    expect(both.code).toBe(2);
  });
});
