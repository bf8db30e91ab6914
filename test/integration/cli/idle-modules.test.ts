import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_PATH } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

/**
 * What the idle daemon has in memory (issue 20): `listing-agent run` in a child process under
 * test/helpers/module-list.mjs, which lists every module loaded (every script V8 compiles, through
 * the inspector: ES modules, CommonJS, and the ES modules `require()` loads) when the agent is ready
 * and idle. A capability that is not configured must not be loaded: the emulator, OAuth, the Redis
 * client, discord.js, the push endpoint. The push source is the control: configured, it is loaded
 * (the listing sees it). And what a bot pays (issue 25): importing the package loads the agent's
 * class alone, and an embedded agent posting stats loads nothing of votes, webhooks, commands or
 * prom-client.
 */

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** Where node_modules really is (a worktree may link it): its modules listed as `node_modules/...` all the same. */
const NODE_MODULES = realpathSync(join(ROOT, 'node_modules'));
const fromRoot = (path: string) => (path.startsWith(NODE_MODULES + '/') ? join('node_modules', path.slice(NODE_MODULES.length + 1)) : relative(ROOT, path));
const MODULE_LIST = fileURLToPath(new URL('../../helpers/module-list.mjs', import.meta.url));

/** Modules that must stay out of a daemon not configured for them, by path from the repository. */
const UNCONFIGURED: Record<string, RegExp> = {
  emulator: /^dist\/emulator\//,
  // listing-agent/testing is loaded by a bot's tests, never by the package or the daemon.
  'the testing kit': /^dist\/(testing\/|public\/testing\.js$)/,
  OAuth: /^dist\/api\/oauth\//,
  '@redis/client': /^node_modules\/@redis\//,
  'discord.js': /^node_modules\/(discord\.js|@discordjs)\//,
  'the push endpoint': /^dist\/stats\/sources\/push\.js$/,
};

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const EMBEDDED_AGENT = fileURLToPath(new URL('../../helpers/embedded-stats-agent.mjs', import.meta.url));
const IMPORT_ROOT = fileURLToPath(new URL('../../helpers/import-root.mjs', import.meta.url));

/** What a bot that embeds an agent posting stats (health off) never runs, so never loads (issue 25). */
const NOT_FOR_STATS: Record<string, RegExp> = {
  'the votes capability': /^dist\/votes\//,
  'the webhook receiver': /^dist\/webhooks\//,
  'the commands capability': /^dist\/commands\//,
  'prom-client': /^node_modules\/prom-client\//,
  'the Redis modules': /^dist\/(redis|leader\/redis-lease)/,
};

/** The paths among `modules` that match one of `patterns`, named. */
function matching(modules: string[], patterns: Record<string, RegExp>): string[] {
  return Object.entries(patterns).flatMap(([name, pattern]) => modules.filter((path) => pattern.test(path)).map((path) => `${name}: ${path}`));
}

/** Starts the daemon with `env`, waits until it is ready, and returns the modules it loaded (paths from the repository). */
async function idleModules(env: Record<string, string>, program: { args: string[]; ready: string } = { args: [CLI_PATH, 'run'], ready: '"msg":"agent ready"' }): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'la-idle-modules-'));
  dirs.push(dir);
  const list = join(dir, 'modules.txt');
  const child = spawn(process.execPath, ['--import', MODULE_LIST, ...program.args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', MODULE_LIST_FILE: list, LISTING_AGENT_STATE_DIRECTORY: join(dir, 'state'), LISTING_AGENT_LOG_FORMAT: 'json', LISTING_AGENT_HEALTH_LISTEN: '127.0.0.1:0', ...env },
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 15_000;
  const waitFor = async (done: () => boolean, what: string) => {
    while (!done()) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${what}; the daemon said:\n${output.slice(-2_000)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  await waitFor(() => output.includes(program.ready), 'the daemon was not ready');
  child.kill('SIGUSR2');
  await waitFor(() => existsSync(list), 'no module list');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  return (await readFile(list, 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map(fromRoot);
}

describe('the idle daemon loads only what it is configured for', () => {
  it('stats from discord-rest: none of the emulator, OAuth, @redis/client, discord.js, the push endpoint', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const modules = await idleModules({
      LISTING_AGENT_SERVICE_TOKEN: fx.projectToken,
      LISTING_AGENT_SERVICE_V1: emu.urls.v1,
      LISTING_AGENT_SERVICE_V0: emu.urls.v0,
      LISTING_AGENT_STATS_ENABLED: 'true',
      LISTING_AGENT_STATS_SOURCE: 'discord-rest',
      LISTING_AGENT_DISCORD_TOKEN: 'idle-modules-test-token',
      // Nothing listens there: the counts stay not ready, which is all this test needs.
      LISTING_AGENT_DISCORD_API_BASE_URL: 'http://127.0.0.1:9/api/v10',
    });
    // The listing is real: the entry, the agent and the configured source are in it.
    expect(modules).toEqual(expect.arrayContaining(['dist/cli/main.js', 'dist/agent/agent.js', 'dist/stats/sources/discord-rest.js', 'node_modules/undici/index.js']));
    const loaded = Object.entries(UNCONFIGURED).flatMap(([name, pattern]) => modules.filter((path) => pattern.test(path)).map((path) => `${name}: ${path}`));
    expect(loaded).toEqual([]);
  });

  it('stats from push: the push endpoint is loaded (the control), still none of the others', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const modules = await idleModules({
      LISTING_AGENT_SERVICE_TOKEN: fx.projectToken,
      LISTING_AGENT_SERVICE_V1: emu.urls.v1,
      LISTING_AGENT_SERVICE_V0: emu.urls.v0,
      LISTING_AGENT_STATS_ENABLED: 'true',
      LISTING_AGENT_STATS_SOURCE: 'push',
      LISTING_AGENT_STATS_PUSH_KEY: 'idle-modules-push-key-0123456789ab',
      LISTING_AGENT_STATS_PUSH_LISTEN: '127.0.0.1:0',
    });
    expect(modules).toContain('dist/stats/sources/push.js');
    expect(modules).not.toContain('dist/stats/sources/discord-rest.js');
    const { 'the push endpoint': _configured, ...others } = UNCONFIGURED;
    const loaded = Object.entries(others).flatMap(([name, pattern]) => modules.filter((path) => pattern.test(path)).map((path) => `${name}: ${path}`));
    expect(loaded).toEqual([]);
  });

  it('embedded, an agent posting stats only (health off), after its first post: none of the above, nor the vote check, the status page, the health server, pino', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const dir = await mkdtemp(join(tmpdir(), 'la-idle-embedded-'));
    dirs.push(dir);
    const modules = await idleModules(
      { LISTING_TOKEN: fx.projectToken, LISTING_V1: emu.urls.v1, LISTING_V0: emu.urls.v0, STATE_DIR: join(dir, 'state') },
      { args: [EMBEDDED_AGENT], ready: 'posted' },
    );
    // The control: the agent, the stats capability and the HTTP client that posted are in it, and
    // so is zod, which the agent loads with require() (the listing sees what require() loads).
    expect(modules).toEqual(expect.arrayContaining(['dist/index.js', 'dist/agent/agent.js', 'dist/stats/capability.js', 'node_modules/undici/index.js', 'node_modules/zod/index.js']));
    const notConfigured: Record<string, RegExp> = {
      ...UNCONFIGURED,
      ...NOT_FOR_STATS,
      'the vote check (hasVoted)': /^dist\/votes\/has-voted\.js$/,
      // The agent's client makes each group of calls at its first use: posting stats takes projects and metrics.
      'the service calls a stats agent makes none of': /^dist\/api\/(v0\/|v1\/(votes|webhooks|users|commands|announcements|integrations)\.js$|schemas\/(votes|webhooks|users|v0)\.js$)/,
      'the status page': /^dist\/status\//,
      'the health server': /^dist\/health\//,
      pino: /^node_modules\/pino\//,
    };
    expect(matching(modules, notConfigured)).toEqual([]);
  });

  it('the package imported, nothing made: the agent class, and none of zod, prom-client, the client, the store, a capability, Redis, the emulator, the testing kit', { timeout: 30_000 }, async () => {
    const modules = await idleModules({}, { args: [IMPORT_ROOT], ready: 'imported' });
    expect(modules).toEqual(expect.arrayContaining(['dist/index.js', 'dist/agent/agent.js']));
    const notYet: Record<string, RegExp> = {
      ...UNCONFIGURED,
      ...NOT_FOR_STATS,
      zod: /^node_modules\/zod\//,
      'the configuration schema': /^dist\/config\/schema/,
      'the service client': /^dist\/api\/(client|client-context|transport)\.js$/,
      undici: /^node_modules\/undici\//,
      'the state store': /^dist\/store\/file\.js$/,
      'the stats capability': /^dist\/stats\//,
      pino: /^node_modules\/pino\//,
    };
    expect(matching(modules, notYet)).toEqual([]);
  });
});
