import { Client, GatewayIntentBits } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import type { Vote } from '../../../src/votes/types.js';
import { startTestKit } from '../../../src/testing/index.js';
import { spawnCli } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';

/*
 * `listing-agent/testing` through its own interface (issue 36): a bot's discord.js Client and its
 * embedded agent on one kit; guilds on a shard, votes, the moved clock, the service's faults; what
 * the fake Discord refuses; `listing-agent emulator --discord`. The examples of examples/testing/
 * run from the packed tarball in test/runtimes/testing-examples.test.ts.
 */

const open: { stop(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.stop();
});

async function kitWithBot(options: Parameters<typeof startTestKit>[0], config: object = {}) {
  const kit = await startTestKit(options);
  open.push({ stop: () => kit.close() });
  const client = new Client({
    intents: [GatewayIntentBits.Guilds],
    rest: { api: kit.discord.restUrl },
    // As many shards as GET /gateway/bot recommends (discord.js's default is one), no 5 s between
    // identifies (the fake has no identify limit).
    shards: 'auto',
    ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
  });
  const agent: ListingAgent = createListingAgent({ ...kit.agentOptions(config), discord: client, logger: false });
  open.push({ stop: () => client.destroy() }, { stop: () => agent.stop() });
  return { kit, client, agent };
}

describe('the testing kit', () => {
  it('runs a sharded bot: counts posted, a guild joins on the shard asked, and the agent follows it', async () => {
    const { kit, client, agent } = await kitWithBot({ shards: 2, guilds: 4 });
    await client.login(kit.discord.token);
    await vi.waitFor(() => expect(kit.postedServerCounts()).toEqual([4]), { timeout: 15_000 });
    expect(kit.posts()[0]!.metrics).toMatchObject({ server_count: 4, shard_count: 2 });
    const joined = kit.addGuild({ shard: 1 });
    expect(kit.discord.gateway.shardOf(joined)).toBe(1);
    await vi.waitFor(() => expect(client.guilds.cache.has(joined)).toBe(true));
    expect(kit.removeGuild(joined)).toBe(true);
    await vi.waitFor(() => expect(client.guilds.cache.has(joined)).toBe(false));
    expect(() => kit.addGuild({ shard: 2 })).toThrow("addGuild: shard 2 is not one of the kit's shards (0 to 1; set shards in startTestKit)");
    expect(agent.phase).toBe('running');
    expect(kit.refusals()).toEqual([]);
  });

  it('rewards a vote the service lists, once, after the service failed the poll with a 503', async () => {
    const { kit, client, agent } = await kitWithBot({ guilds: 1 }, { votes: { enabled: true } });
    const rewarded: Vote[] = [];
    agent.on('vote', (vote) => void rewarded.push(vote));
    await client.login(kit.discord.token);
    await vi.waitFor(() => expect(agent.phase).toBe('running'), { timeout: 15_000 });
    kit.failService({ status: 503, method: 'GET', path: '/api/v1/projects/@me/votes*' });
    const vote = kit.vote({ weekend: true });
    expect(vote.weight).toBe(2);
    await vi.waitFor(() => expect(rewarded.map((v) => v.userId)).toEqual([vote.user_id]), { timeout: 10_000 });
    expect(kit.emulator.admin.requests().some((r) => r.status === 503 && r.path.includes('/votes'))).toBe(true);
    expect(rewarded[0]).toMatchObject({ weight: 2, platformId: vote.platform_id });
  });

  it('moves the clock of the emulator and of the agent together, and refuses what is no duration', async () => {
    const kit = await startTestKit({ now: () => Date.parse('2026-01-02T00:00:00Z'), guilds: 0 });
    open.push({ stop: () => kit.close() });
    kit.advanceClock('1h30m');
    kit.advanceClock(30);
    expect(new Date(kit.now()).toISOString()).toBe('2026-01-02T01:30:30.000Z');
    expect(kit.emulator.admin.now().now).toBe('2026-01-02T01:30:30.000Z');
    expect(kit.agentOptions().now()).toBe(kit.now());
    expect(() => kit.advanceClock('soon')).toThrow('advanceClock: "soon" is neither a number of seconds (0 or more) nor a duration (30s, 12h, 1h30m)');
    // A Friday in the emulator's clock: a vote counts double by itself.
    expect(kit.vote().weight).toBe(2);
  });

  it("refuses what the fake Discord cannot imitate: a REST route it lacks (501 naming it), voice on the gateway (4001)", async () => {
    const kit = await startTestKit({ guilds: 1 });
    open.push({ stop: () => kit.close() });
    const auth = { headers: { authorization: `Bot ${kit.discord.token}` } };
    const missing = await call(`${kit.discord.restUrl}/v10/users/@me/guilds`, auth);
    expect(missing.status).toBe(501);
    expect(missing.body.message).toContain('The fake Discord does not implement GET /users/@me/guilds');

    const put = await call(`${kit.discord.restUrl}/v10/applications/${kit.project.platformId}/commands`, {
      method: 'PUT',
      ...auth,
      json: [{ name: 'ping', description: 'Is the bot there?' }],
    });
    expect(put.status).toBe(200);
    expect(kit.discord.rest.commands()).toEqual([expect.objectContaining({ name: 'ping', application_id: kit.project.platformId, type: 1 })]);

    const socket = new WebSocket(`${kit.discord.gatewayUrl}?v=10&encoding=json`);
    const closed = new Promise<[number, string]>((resolve) => socket.on('close', (code, reason) => resolve([code, reason.toString()])));
    await new Promise((resolve) => socket.once('message', resolve));
    socket.send(JSON.stringify({ op: 2, d: { token: kit.discord.token, shard: [0, 1] } }));
    socket.send(JSON.stringify({ op: 4, d: { guild_id: '1', channel_id: '2', self_mute: false, self_deaf: false } }));
    expect(await closed).toEqual([4001, 'The fake Discord gateway does not imitate voice (op 4, voice state update).']);
    expect(kit.refusals()).toEqual([
      'REST: GET /users/@me/guilds',
      'gateway: The fake Discord gateway does not imitate voice (op 4, voice state update).',
    ]);
  });
});

describe('listing-agent emulator --discord', () => {
  it("starts a fake Discord for the seeded bot and prints the settings a bot needs; a discord.js Client logs in with them", async () => {
    const cli = spawnCli(['emulator', '--port', '0', '--json', '--discord', '--shards', '2', '--guilds', '5']);
    open.push({ stop: async () => cli.child.kill('SIGTERM') });
    const summary = JSON.parse(await cli.firstLine());
    const bot = summary.projects[0];
    expect(summary.discord).toMatchObject({ token: 'fake-bot-token', application_id: bot.platform_id, shards: 2, guilds: 5 });
    expect(summary.discord.environment).toMatchObject({
      LISTING_AGENT_SERVICE_TOKEN: bot.project_token,
      LISTING_AGENT_SERVICE_V1: summary.v1,
      DISCORD_TOKEN: 'fake-bot-token',
      DISCORD_API: summary.discord.rest,
    });
    const client = new Client({
      intents: [GatewayIntentBits.Guilds],
      rest: { api: summary.discord.environment.DISCORD_API },
      shards: 'auto',
      ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
    });
    open.push({ stop: () => client.destroy() });
    await client.login(summary.discord.environment.DISCORD_TOKEN);
    await vi.waitFor(() => expect(client.guilds.cache.size).toBe(5), { timeout: 15_000 });
    expect(client.application?.id).toBe(bot.platform_id);
  });

  it('refuses a wrong count naming the option', async () => {
    const cli = spawnCli(['emulator', '--port', '0', '--discord', '--shards', 'two']);
    expect(await cli.exit()).toBe(78);
    expect(cli.stderr()).toContain('--shards must be a whole number from 1 to 10000 (got two)');
  });
});
