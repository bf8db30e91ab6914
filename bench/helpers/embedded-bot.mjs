/**
 * One row of bench/embedded-footprint.bench.ts, run as a child process from a temporary bot project
 * (the packed package installed as test/runtimes/packed.ts installs it; discord.js and
 * topgg-autoposter beside it). It is a discord.js bot that HAS LOGGED IN: a `Client` logs in to
 * the fake Discord the bench runs (src/testing: its REST at BENCH_DISCORD_REST, whose
 * `GET /gateway/bot` points at its gateway; READY, then the guilds), as a running bot has. Then,
 * by `BENCH_ROW`:
 *   djs         nothing more (the baseline);
 *   autoposter  `require('topgg-autoposter')` (timed);
 *   import      `import('listing-agent')` (timed), nothing started;
 *   stats       + an agent posting stats only (`discord: client`: the counts of the bot's guild
 *               cache; health off), after its first post;
 *   full        + stats, votes (cursor polled) and health (on 127.0.0.1:0), after its first post.
 * The service is an emulator in the bench's process (BENCH_V1, BENCH_V0, BENCH_TOKEN). Then two
 * forced collections (`--expose-gc`) and one JSON line: heap used, RSS, the size of V8's young
 * generation (information: it stays as large as it grew, so it is part of the RSS a row adds), the
 * import's milliseconds.
 *
 * The Client's REST sends through the bot's undici: as npm installs a discord.js 14 bot,
 * discord.js, @discordjs/rest and listing-agent share one undici 6 at the top, so login has
 * loaded and warmed the copy the agent then uses (llhttp's wasm instantiated, the global
 * dispatcher made). In this repository's node_modules (which the bot project links)
 * @discordjs/rest has a nested copy of its own, so its default strategy would warm a copy the
 * agent never uses: `makeRequest` (a REST option, @discordjs/rest's own undici strategy) sends
 * through the bot's `undici`, discord.js's copy (bench/embedded-footprint.bench.ts,
 * test/helpers/bot-install.ts); checked below, so a changed layout fails the row rather than
 * measuring the wrong thing.
 */
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { STATUS_CODES } from 'node:http';
import { getHeapSpaceStatistics } from 'node:v8';

const require = createRequire(join(process.cwd(), 'index.js'));
const env = process.env;
const row = env.BENCH_ROW ?? 'djs';

/** @discordjs/rest's `makeRequest` on the bot's undici (dist/index.js, "strategies/undiciRequest"). */
function botUndiciRequest() {
  const djsUndici = createRequire(realpathSync(require.resolve('discord.js'))).resolve('undici');
  const botUndici = require.resolve('undici');
  if (realpathSync(djsUndici) !== realpathSync(botUndici)) {
    throw new Error(`the bot's undici (${botUndici}) is not discord.js's (${djsUndici})`);
  }
  const undici = require('undici');
  return async (url, init) => {
    const res = await undici.request(url, init);
    return {
      body: res.body,
      arrayBuffer: () => res.body.arrayBuffer(),
      json: () => res.body.json(),
      text: () => res.body.text(),
      get bodyUsed() {
        return res.body.bodyUsed;
      },
      headers: new undici.Headers(res.headers),
      status: res.statusCode,
      statusText: STATUS_CODES[res.statusCode],
      ok: res.statusCode >= 200 && res.statusCode < 300,
    };
  };
}

/** Rejects after `ms` with `what`, so a row that hangs fails instead. */
const within = (promise, ms, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref())]);

const { Client, Events, GatewayIntentBits } = require('discord.js');
const client = new Client({
  intents: [GatewayIntentBits.Guilds],
  rest: { api: env.BENCH_DISCORD_REST, makeRequest: botUndiciRequest() },
  // discord.js spaces identifies 5 s apart, as Discord asks; the fake does not need it.
  ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
});
const ready = once(client, Events.ClientReady);
await client.login(env.BENCH_DISCORD_TOKEN);
await within(ready, 30_000, 'login to the fake gateway');
if (client.guilds.cache.size !== Number(env.BENCH_GUILDS)) {
  throw new Error(`logged in with ${client.guilds.cache.size} guilds, expected ${env.BENCH_GUILDS}`);
}
globalThis.gc();
globalThis.gc();

let importMs = 0;
let agent;
const stateDirectory = mkdtempSync(join(tmpdir(), 'la-footprint-state-'));
if (row === 'autoposter') {
  const start = performance.now();
  require('topgg-autoposter');
  importMs = performance.now() - start;
} else if (row !== 'djs') {
  const start = performance.now();
  const { createListingAgent } = await import('listing-agent');
  importMs = performance.now() - start;
  if (row === 'stats' || row === 'full') {
    const full = row === 'full';
    agent = createListingAgent({
      token: env.BENCH_TOKEN,
      discord: client,
      config: {
        service: { v1: env.BENCH_V1, v0: env.BENCH_V0 },
        health: full ? { enabled: true, listen: '127.0.0.1:0' } : { enabled: false },
        votes: { enabled: full },
        state: { directory: stateDirectory },
      },
    });
    const posted = new Promise((resolve, reject) => {
      agent.once('posted', resolve);
      agent.once('error', reject);
    });
    // The bot's reward: votes need a listener (or a hook) as the agent starts.
    if (full) agent.on('vote', () => undefined);
    // Given a Client that is ready, the agent starts by itself (autoStart).
    await within(posted, 30_000, "the agent's first post");
  }
}
globalThis.gc();
globalThis.gc();
const memory = process.memoryUsage();
// V8's young generation keeps the size it grew to, after the collections too: part of the RSS a row adds.
const newSpace = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;
console.log(JSON.stringify({ row, heapUsed: memory.heapUsed, rss: memory.rss, newSpace, importMs, guilds: client.guilds.cache.size }));
if (agent) await agent.stop();
await client.destroy();
rmSync(stateDirectory, { recursive: true, force: true });
process.exit(0);
