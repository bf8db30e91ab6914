import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

/*
 * Issue 34, item 2: the daemon's exec hooks get what docs/security.md promises, the vote's
 * variables, PATH, HOME, LANG and TZ, and the names a hook lists (`env`); never the agent's own
 * credentials. The daemon runs as a child process; its exec hook writes its environment to a file.
 */

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch((error: unknown) => {
      if (error instanceof Error && error.message.startsWith('the daemon exited')) throw error;
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("the daemon's exec hooks (issue 34, item 2)", () => {
  it('get the vote, PATH, HOME, LANG, TZ and the names they list; never the agent credentials or an unrelated secret', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    emu.admin.castVote({ project_id: fx.projectId, user_id: emu.admin.createUser({ username: 'voter' }).id });
    const dir = await mkdtemp(join(tmpdir(), 'la-exec-env-'));
    const seen = join(dir, 'env.json');
    const script = `require('node:fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify(process.env))`;
    const config = {
      service: { token: '${PROJECT_TOKEN}', v1: emu.urls.v1, v0: emu.urls.v0 },
      health: { enabled: false },
      state: { directory: './state' },
      log: { format: 'json' },
      votes: {
        enabled: true,
        pollInterval: '5s',
        lookback: '1h',
        hooks: [
          { name: 'reward', command: [process.execPath, '-e', script], env: ['DATABASE_URL', 'NOT_SET_ANYWHERE'], retries: 0 },
          { name: 'signed', url: 'http://127.0.0.1:1/reward', secret: '${REWARD_HOOK_SECRET}', retries: 0 },
        ],
      },
    };
    await writeFile(join(dir, 'agent.json'), JSON.stringify(config));
    const env = {
      HOME: dir,
      LANG: 'C.UTF-8',
      TZ: 'Europe/Paris',
      PROJECT_TOKEN: fx.projectToken,
      REWARD_HOOK_SECRET: 'reward-hook-secret-0123',
      LISTING_OAUTH_ACCESS_TOKEN: 'oauth-access-token-0123',
      LISTING_AGENT_HEALTH_ADMIN_TOKEN: 'admin-token-0123456789abcdef',
      SHOP_API_SECRET: 'an-unrelated-secret-0123',
      DATABASE_URL: 'postgres://rewards:db-password-0123@127.0.0.1:5432/rewards',
    };
    const daemon = spawnCli(['run', '--config', 'agent.json'], { cwd: dir, env });
    let exited: number | null | undefined;
    void daemon.exit().then((code) => (exited = code));
    const hookEnv = await until('the hook to run', async () => {
      if (exited !== undefined) throw new Error(`the daemon exited with ${exited}: ${daemon.stderr()}`);
      return JSON.parse(await readFile(seen, 'utf8')) as Record<string, string>;
    });
    daemon.child.kill('SIGTERM');
    expect(await daemon.exit()).toBe(0);

    const { LISTING_VOTE_KEY, LISTING_VOTE_USER_ID, ...rest } = hookEnv;
    expect(LISTING_VOTE_KEY).toMatch(/^\d+:\d+$/);
    expect(LISTING_VOTE_USER_ID).toMatch(/^\d+$/);
    expect(rest).toMatchObject({ PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8', TZ: 'Europe/Paris', DATABASE_URL: env.DATABASE_URL });
    for (const name of ['PROJECT_TOKEN', 'REWARD_HOOK_SECRET', 'LISTING_OAUTH_ACCESS_TOKEN', 'LISTING_AGENT_HEALTH_ADMIN_TOKEN', 'SHOP_API_SECRET', 'NOT_SET_ANYWHERE']) {
      expect(hookEnv, name).not.toHaveProperty(name);
    }
    // Nothing beyond the base, the listed name and the agent's per-call variables (Node adds none of its own to a child).
    const names = Object.keys(hookEnv).filter((name) => !/^LISTING_(VOTE_|IDEMPOTENCY_KEY$|HOOK_TYPE$)/.test(name));
    expect(names.sort()).toEqual(['DATABASE_URL', 'HOME', 'LANG', 'PATH', 'TZ']);
    for (const value of [fx.projectToken, env.REWARD_HOOK_SECRET, env.LISTING_OAUTH_ACCESS_TOKEN, env.SHOP_API_SECRET]) {
      expect(Object.values(hookEnv)).not.toContain(value);
    }
  });
});
