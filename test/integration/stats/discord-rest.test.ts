import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createDiscordRestSource, type DiscordRestSourceOptions } from '../../../src/stats/sources/discord-rest.js';
import { startFakeDiscordRest, type FakeDiscordRest, type FakeDiscordRestState } from '../../helpers/fake-discord/index.js';

const TOKEN = 'fake-bot-token-Mz1.abc.def';

/** A fake Discord, a source reading it, and a clock the test moves by hand. */
async function setup(state: Partial<FakeDiscordRestState> = {}, options: Partial<DiscordRestSourceOptions> = {}) {
  const fake = await startFakeDiscordRest({ token: TOKEN, approximateGuildCount: 1234, recommendedShards: 3, ...state });
  const clock = { t: 1_700_000_000_000 };
  const source = createDiscordRestSource({ token: TOKEN, apiBaseUrl: fake.url, cacheTtlMs: 60_000, now: () => clock.t, ...options });
  return { fake, clock, source };
}

const paths = (fake: FakeDiscordRest) => fake.requests.map((r) => `${r.status} ${r.path}`);

describe('Discord REST source: counts', () => {
  it('reads approximate_guild_count and the shard count of GET /gateway/bot, with Authorization: Bot <token>', async () => {
    const { fake, source } = await setup();
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 1234, shardCount: 3 });
    expect(paths(fake)).toEqual(['200 /applications/@me', '200 /gateway/bot']);
    expect(fake.requests.every((r) => r.authorization === `Bot ${TOKEN}`)).toBe(true);
    expect(source.description).toContain('GET /gateway/bot');
  });

  it('accepts a token written with its "Bot " prefix', async () => {
    const { fake, source } = await setup({}, { token: `Bot ${TOKEN}` });
    await expect(source.read()).resolves.toMatchObject({ ready: true });
    expect(fake.requests[0]!.authorization).toBe(`Bot ${TOKEN}`);
  });

  it('takes the shard count from the config and never asks GET /gateway/bot', async () => {
    const { fake, source } = await setup({}, { shardCount: 8 });
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 1234, shardCount: 8 });
    expect(paths(fake)).toEqual(['200 /applications/@me']);
    expect(source.description).toContain('8, from the config');
  });

  it('reports 0 servers as a real count: Discord says so, no cache is filling', async () => {
    const { source } = await setup({ approximateGuildCount: 0, recommendedShards: 1 });
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 0, shardCount: 1 });
  });
});

describe('Discord REST source: cache', () => {
  it('reuses a reading for cacheTtlMs, then asks again and sees the new count', async () => {
    const { fake, clock, source } = await setup();
    await source.read();
    clock.t += 59_999;
    fake.state.approximateGuildCount = 1300;
    await expect(source.read()).resolves.toMatchObject({ serverCount: 1234 });
    expect(fake.requests).toHaveLength(2);

    clock.t += 1;
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 1300, shardCount: 3 });
    expect(paths(fake)).toEqual(['200 /applications/@me', '200 /gateway/bot', '200 /applications/@me', '200 /gateway/bot']);
  });

  it('sends one request pair for reads made at the same time', async () => {
    const { fake, source } = await setup();
    const readings = await Promise.all([source.read(), source.read(), source.read()]);
    expect(readings.every((r) => r.ready)).toBe(true);
    expect(fake.requests).toHaveLength(2);
  });
});

describe('Discord REST source: rate limits', () => {
  it('sends nothing while X-RateLimit-Remaining is 0, until X-RateLimit-Reset-After has passed', async () => {
    const { fake, clock, source } = await setup({ remaining: 2, resetAfterSeconds: 120 });
    await expect(source.read()).resolves.toMatchObject({ ready: true });
    expect(fake.state.remaining).toBe(0);

    clock.t += 61_000; // past the cache lifetime, inside the reset
    const limited = await source.read();
    expect(limited).toEqual({ ready: false, reason: expect.stringMatching(/^rate limited by Discord \(X-RateLimit-Remaining reached 0 on GET \/gateway\/bot\): no request to GET \/applications\/@me for another 59s$/) });
    expect(fake.requests).toHaveLength(2);

    clock.t += 59_000;
    fake.state.remaining = 50;
    await expect(source.read()).resolves.toMatchObject({ ready: true });
    expect(fake.requests).toHaveLength(4);
  });

  it('answers a 429 with not ready, waits its retry_after without hammering, then reads again', async () => {
    const { fake, clock, source } = await setup({ remaining: 0, resetAfterSeconds: 30 });
    const first = await source.read();
    expect(first).toEqual({ ready: false, reason: 'rate limited by Discord (GET /applications/@me answered 429 with scope user): no request for 30s' });
    expect(paths(fake)).toEqual(['429 /applications/@me']);

    for (let i = 0; i < 5; i += 1) {
      clock.t += 5_000;
      await expect(source.read()).resolves.toMatchObject({ ready: false, reason: expect.stringMatching(/no request to GET \/applications\/@me for another \d+s$/) });
    }
    expect(fake.requests).toHaveLength(1);

    clock.t += 5_000;
    fake.state.remaining = 50;
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 1234, shardCount: 3 });
  });

  it('does not serve the expired cached reading as ready while rate limited', async () => {
    const { fake, clock, source } = await setup();
    await expect(source.read()).resolves.toMatchObject({ ready: true });
    clock.t += 60_000;
    fake.state.remaining = 0;
    await expect(source.read()).resolves.toMatchObject({ ready: false, reason: expect.stringContaining('429') });
  });

  it('stops every route after a global 429, whichever route got it', async () => {
    const { fake, clock, source } = await setup();
    fake.route('GET', '/gateway/bot', () => ({ status: 429, body: { message: 'You are being rate limited.', retry_after: 90.5, global: true } }));
    await expect(source.read()).resolves.toEqual({
      ready: false,
      reason: 'rate limited by Discord (GET /gateway/bot answered 429 (global)): no request for 1m30s500ms',
    });
    clock.t += 61_000; // the cached guild count has expired; the global wait has not
    await expect(source.read()).resolves.toEqual({
      ready: false,
      reason: 'rate limited by Discord (GET /gateway/bot answered 429 (global)): no request to GET /applications/@me for another 30s',
    });
    expect(paths(fake)).toEqual(['200 /applications/@me', '429 /gateway/bot']);
  });
});

describe('Discord REST source: failures', () => {
  it('answers a 401 with a reason naming discord.token and never the token, and does not retry within the TTL', async () => {
    const { fake, clock, source } = await setup({ token: 'the-right-token' });
    const reading = await source.read();
    expect(reading.ready).toBe(false);
    const reason = reading.ready ? '' : reading.reason;
    expect(reason).toContain('discord.token');
    expect(reason).toContain('401');
    expect(reason).not.toContain(TOKEN);
    clock.t += 30_000;
    await expect(source.read()).resolves.toMatchObject({ ready: false, reason: expect.stringContaining('next try in 30s') });
    expect(fake.requests).toHaveLength(1);
    clock.t += 30_000;
    await source.read();
    expect(fake.requests).toHaveLength(2);
  });

  it.each([
    ['no approximate_guild_count', { id: '1', name: 'Fake Bot' }, /has no approximate_guild_count/],
    ['a negative count', { approximate_guild_count: -1 }, /approximate_guild_count -1, not an integer of at least 0/],
    ['a string count', { approximate_guild_count: '12' }, /approximate_guild_count "12"/],
    ['not an object', [1, 2], /not a JSON object/],
  ])('answers not ready for an application with %s', async (_name, body, reason) => {
    const { fake, source } = await setup();
    fake.route('GET', '/applications/@me', () => ({ status: 200, body }));
    await expect(source.read()).resolves.toEqual({ ready: false, reason: expect.stringMatching(reason) });
  });

  it('answers not ready for a /gateway/bot answer without shards', async () => {
    const { fake, source } = await setup();
    fake.route('GET', '/gateway/bot', () => ({ status: 200, body: { url: 'wss://gateway.discord.gg' } }));
    await expect(source.read()).resolves.toEqual({ ready: false, reason: "Discord's answer to GET /gateway/bot has no shards" });
  });

  it('answers not ready for a body that is not JSON', async () => {
    const server = createServer((_req, res) => res.end('<html>hello</html>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const source = createDiscordRestSource({ token: TOKEN, apiBaseUrl: `http://127.0.0.1:${port}/api` });
      await expect(source.read()).resolves.toMatchObject({ ready: false, reason: expect.stringContaining('not a JSON object') });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers a 5xx with its status and Discord message', async () => {
    const { fake, source } = await setup();
    fake.route('GET', '/applications/@me', () => ({ status: 502, body: { message: 'Bad Gateway', code: 0 } }));
    await expect(source.read()).resolves.toEqual({ ready: false, reason: 'Discord answered 502 to GET /applications/@me: Bad Gateway' });
  });

  it('answers a network error with the reason, and tries again on the next read', async () => {
    const { fake, source } = await setup();
    const url = fake.url;
    await fake.close();
    const reading = await source.read();
    expect(reading).toEqual({ ready: false, reason: expect.stringMatching(/^cannot reach Discord for GET \/applications\/@me .*ECONNREFUSED/) });
    expect(reading.ready ? '' : reading.reason).toContain(url);
    await expect(source.read()).resolves.toMatchObject({ ready: false });
  });

  it('answers an aborted read at once without throwing', async () => {
    const { source } = await setup();
    const controller = new AbortController();
    controller.abort();
    await expect(source.read(controller.signal)).resolves.toEqual({ ready: false, reason: 'the read was aborted' });
  });

  it('keeps the token out of reasons even when the server echoes it', async () => {
    const { fake, source } = await setup();
    fake.route('GET', '/applications/@me', (req) => ({ status: 500, body: { message: `bad header ${req.headers.authorization}` } }));
    const reading = await source.read();
    expect(reading.ready ? '' : reading.reason).toBe('Discord answered 500 to GET /applications/@me: bad header Bot [redacted]');
  });
});
