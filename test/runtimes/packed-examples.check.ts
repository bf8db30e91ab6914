import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { startFakeDiscord, type FakeDiscord } from '../helpers/fake-discord/index.js';
import { botProject, type BotProject } from './packed.js';
import { runWithRuntime, type RuntimeChild } from './runtime.js';
import { warningLines } from './warnings.js';

/**
 * Issue 32's closing proof: a fresh TypeScript ES module bot and a fresh CommonJS bot with a
 * ShardingManager, installed from the packed tarball, written only as the shipped docs say: they
 * are the package's own examples (examples/discord-bot.ts, examples/sharded-bot/), copied out of
 * node_modules/listing-agent unchanged, the TypeScript one compiled by the project's tsc. Their
 * settings are the documented variables (LISTING_AGENT_SERVICE_TOKEN, LISTING_AGENT_SERVICE_V1...)
 * pointing at the emulator; discord.js is pointed at the fake Discord by a preload, as DNS would
 * (bots/fake-discord-rest.cjs). Each reaches a first post, a rewarded vote (the voter's role
 * given by the bot, in the shard that holds the support server) and `/perk` answered from
 * hasVoted, in the manager's shard process for the sharded bot.
 */

const run = promisify(execFile);
const PRELOAD = join(dirname(fileURLToPath(import.meta.url)), 'bots', 'fake-discord-rest.cjs');
const ROLE_ID = '400000000000000001';

interface World {
  fake: FakeDiscord;
  emu: Awaited<ReturnType<typeof startTestEmulator>>;
  fx: ReturnType<typeof setupBot>;
  guildId: string;
  voter: { id: string; platform_id: string };
}

async function world(shardCount: number, guilds: number): Promise<World> {
  const fake = await startFakeDiscord({ shardCount, guilds });
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const voter = emu.admin.createUser({ username: 'voter' }) as { id: string; platform_id: string };
  const guildId = fake.gateway.guildIds().at(-1)!;
  fake.rest.route('PUT', `/guilds/${guildId}/members/${voter.platform_id}/roles/${ROLE_ID}`, () => ({ status: 204, body: undefined }));
  return { fake, emu, fx, guildId, voter };
}

/** The bot's environment: the documented settings, aimed at the emulator and the fake Discord. */
function botEnv(w: World): Record<string, string> {
  return {
    LISTING_AGENT_SERVICE_TOKEN: w.fx.projectToken,
    LISTING_AGENT_SERVICE_V1: w.emu.urls.v1,
    LISTING_AGENT_SERVICE_V0: w.emu.urls.v0,
    LISTING_AGENT_HEALTH_LISTEN: '127.0.0.1:0',
    LISTING_AGENT_VOTES_POLL_INTERVAL: '5s',
    DISCORD_TOKEN: w.fake.token,
    SUPPORT_GUILD_ID: w.guildId,
    VOTER_ROLE_ID: ROLE_ID,
    FAKE_DISCORD_API: w.fake.restUrl,
    NODE_OPTIONS: `--require ${PRELOAD}`,
  };
}

/** A `/perk` chat command from the voter in the support server, as Discord's gateway sends it. */
function perkInteraction(w: World, id: string) {
  const user = { id: w.voter.platform_id, username: 'voter', discriminator: '0', global_name: null, avatar: null };
  return {
    id,
    application_id: '300000000000000001',
    type: 2,
    data: { id: '500000000000000001', name: 'perk', type: 1 },
    guild_id: w.guildId,
    channel: { id: '600000000000000001', type: 0, guild_id: w.guildId, name: 'general' },
    member: { user, roles: [], joined_at: '2025-01-01T00:00:00.000Z', deaf: false, mute: false, flags: 0, permissions: '0' },
    token: `interaction-token-${id}`,
    version: 1,
    locale: 'en-US',
    guild_locale: 'en-US',
    app_permissions: '0',
    entitlements: [],
    authorizing_integration_owners: { '0': w.guildId },
    context: 0,
  };
}

/** What the bot answered to `/perk` (the interaction callback's body), once it has. */
async function perkAnswer(w: World, id: string): Promise<string> {
  const path = `/interactions/${id}/interaction-token-${id}/callback`;
  w.fake.rest.route('POST', path, () => ({ status: 204, body: undefined }));
  await expect.poll(() => w.fake.gateway.dispatchToGuild(w.guildId, 'INTERACTION_CREATE', perkInteraction(w, id)), { timeout: 5_000 }).toBe(true);
  await expect.poll(() => w.fake.rest.requests.find((r) => r.path === path)?.status, { timeout: 15_000, interval: 50 }).toBe(204);
  return w.fake.rest.requests.find((r) => r.path === path)!.body;
}

/** The first post, then a vote cast after it rewarded once by the bot, and `/perk` says so. */
async function firstPostAndRewardedVote(w: World, bot: RuntimeChild, guilds: number): Promise<void> {
  const posted = () => w.emu.admin.metrics(w.fx.projectId).map((m) => m.metrics.server_count);
  await expect.poll(posted, { timeout: 30_000, interval: 100 }).toEqual([guilds]);
  w.emu.admin.castVote({ project_id: w.fx.projectId, user_id: w.voter.id });
  const rolePath = `/guilds/${w.guildId}/members/${w.voter.platform_id}/roles/${ROLE_ID}`;
  const rewards = () => w.fake.rest.requests.filter((r) => r.method === 'PUT' && r.path === rolePath && r.status === 204).length;
  await expect.poll(rewards, { timeout: 20_000, interval: 100 }).toBe(1);
  await bot.line(`rewarded ${w.voter.platform_id} for vote`);
  // Asked after the vote only: a "no" is cached for 30 s.
  expect(JSON.parse(await perkAnswer(w, '700000000000000002'))).toMatchObject({ data: { content: 'Thanks for voting: the perk is yours.' } });
}

/** `proof` for `bot`, failing with what the bot printed. */
async function showingOutput(bot: RuntimeChild, proof: Promise<void>): Promise<void> {
  await proof.catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- what the bot printed ---\n${bot.output()}`, { cause: error });
  });
}

/** SIGTERM to the bot's processes (the manager and its shards), as a service manager sends it. */
function stop(bot: RuntimeChild): Promise<number | string> {
  bot.kill('SIGTERM');
  return bot.exit();
}

async function compile(project: BotProject): Promise<void> {
  const tsconfig = { compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, skipLibCheck: true, types: ['node'], rootDir: 'src', outDir: 'dist' }, include: ['src'] };
  await writeFile(join(project.dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  await run(process.execPath, [join(project.dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project.dir], { cwd: project.dir });
}

// npm pack, tsc and a ShardingManager's spawn (5.5 s between shards) are slow on a loaded machine.
describe('the shipped examples, as fresh bot projects from the packed tarball (issue 32)', { timeout: 120_000 }, () => {
  it('TypeScript ES module bot (examples/discord-bot.ts, compiled by tsc): first post, a vote rewarded, /perk from hasVoted', async () => {
    const w = await world(1, 3);
    const project = await botProject('module', undefined, { fromPackage: { 'src/bot.ts': 'examples/discord-bot.ts' }, beside: ['typescript', '@types'] });
    await compile(project);
    const bot = runWithRuntime([join('dist', 'bot.js')], { cwd: project.dir, env: botEnv(w), processGroup: true });
    await showingOutput(bot, firstPostAndRewardedVote(w, bot, 3));
    expect(await stop(bot), bot.output()).toBe('SIGTERM');
    const output = bot.output();
    expect(output).not.toContain(w.fx.projectToken);
    expect(warningLines(output)).toEqual([]);
  });

  it('CommonJS bot with a ShardingManager (examples/sharded-bot/): one agent in the manager, the reward in the shard of the guild, /perk from a shard', async () => {
    const w = await world(2, 5);
    const project = await botProject('commonjs', undefined, {
      fromPackage: { 'manager.cjs': 'examples/sharded-bot/manager.cjs', 'shard.cjs': 'examples/sharded-bot/shard.cjs' },
    });
    const bot = runWithRuntime(['manager.cjs'], { cwd: project.dir, env: botEnv(w), processGroup: true });
    await showingOutput(bot, firstPostAndRewardedVote(w, bot, 5));
    expect(await bot.line('rewarded')).toContain(`(shard ${w.fake.gateway.shardOf(w.guildId)})`);
    // Both shards logged in, each once; the counts posted are the whole bot's.
    expect(w.fake.gateway.events.filter((e) => e.type === 'identify').map((e) => e.shardId).sort()).toEqual([0, 1]);
    expect(await stop(bot)).toBe('SIGTERM');
    const output = bot.output();
    expect(output).not.toContain(w.fx.projectToken);
    expect(warningLines(output)).toEqual([]);
  });
});
