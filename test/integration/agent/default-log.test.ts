import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscord } from '../../helpers/fake-discord/index.js';

/**
 * What the README's three lines print in a bot's process (issue 32, item 4): with no `logger`, an
 * embedded agent writes its warnings and errors to stderr, one plain line each beginning
 * `listing-agent:`, and one line when it is ready and one at its first post; `logger: false`
 * silences it. The bot is a child process (test/helpers/three-lines-bot.mjs) on the built package.
 */

const BOT = fileURLToPath(new URL('../../helpers/three-lines-bot.mjs', import.meta.url));

/** Runs the bot until it printed `until` on stdout, then SIGTERM (the client destroyed, the agent stopped), and waits for its end. */
async function runBot(token: (fx: { projectToken: string }) => string, until: string, extraEnv: Record<string, string> = {}) {
  const fake = await startFakeDiscord({ shardCount: 1, guilds: 3 });
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const stateDir = await mkdtemp(join(tmpdir(), 'la-default-log-'));
  const child = spawn(process.execPath, [BOT], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      LISTING_TOKEN: token(fx),
      LISTING_V1: emu.urls.v1,
      LISTING_V0: emu.urls.v0,
      STATE_DIR: stateDir,
      DISCORD_API: fake.restUrl,
      DISCORD_TOKEN: fake.token,
      ...extraEnv,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the bot did not print ${until}; stdout: ${stdout}; stderr: ${stderr}`)), 15_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.split('\n').includes(until)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => reject(new Error(`the bot exited before printing ${until}; stderr: ${stderr}`)));
  });
  child.kill('SIGTERM');
  const code = await exited;
  return { code, stdout, stderr, fx, emu };
}

/** A project token with its signature spoiled: the service answers 401. */
const spoiled = (fx: { projectToken: string }) => `${fx.projectToken.slice(0, -4)}${fx.projectToken.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;

describe('the README three lines, with no logger', () => {
  it('a token the service refuses: one stderr line that says so and names the fix, and never the token', { timeout: 30_000 }, async () => {
    const { code, stderr, fx } = await runBot(spoiled, 'service refused');
    expect(code).toBe(0);
    const lines = stderr.trimEnd().split('\n');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^listing-agent: the service refused the project token \(401\)/);
    expect(lines[0]).toContain('copy the project token from the project\'s Integrations and API settings');
    expect(lines[0]).toContain('service.token');
    for (const part of fx.projectToken.split('.')) expect(stderr).not.toContain(part);
  });

  it('with logger: false, nothing at all', { timeout: 30_000 }, async () => {
    const { code, stderr } = await runBot(spoiled, 'service refused', { LOGGER_OFF: '1' });
    expect(code).toBe(0);
    expect(stderr).toBe('');
  });

  it('a token the service takes: one line when the agent is ready, one at its first post, nothing else', { timeout: 30_000 }, async () => {
    const { code, stderr, fx, emu } = await runBot((f) => f.projectToken, 'posted');
    expect(code).toBe(0);
    expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count)).toEqual([3]);
    expect(stderr.trimEnd().split('\n')).toEqual([
      `listing-agent: agent ready (project: Test Bot, projectId: ${fx.projectId})`,
      expect.stringMatching(/^listing-agent: first stats post accepted \(.*serverCount: 3, shardCount: 1/),
    ]);
  });
});
