/**
 * One row of bench/embedded-footprint.bench.ts, run as a child process from a temporary bot project
 * (the packed package installed as test/runtimes/packed.ts installs it; discord.js and
 * topgg-autoposter beside it). It imports discord.js and makes a `Client` (not logged in: no
 * gateway, the process a bot is before it connects), then, by `BENCH_ROW`:
 *   djs         nothing more (the baseline);
 *   autoposter  `require('topgg-autoposter')` (timed);
 *   import      `import('listing-agent')` (timed), nothing started;
 *   stats       + an agent posting stats only (counts from `countSource`, health off), waits for its first post;
 *   full        + stats, votes (cursor polled) and health (on 127.0.0.1:0), waits for the first post.
 * Information rows, "as a logged-in bot" (`djs-rest`, `stats-rest`): as `djs` and `stats`, but the
 * Client's REST first makes one request, as login does (`GET /gateway/bot`), to an HTTP server on
 * 127.0.0.1 in this process (see `restAsAfterLogin`). A bot that has logged in has already loaded and
 * warmed its undici (llhttp's wasm instantiated, the global dispatcher made), which the agent shares.
 * The service is an emulator in another process (BENCH_V1, BENCH_V0, BENCH_TOKEN).
 * Then two forced collections (`--expose-gc`) and one JSON line: heap used, RSS, the import's
 * milliseconds; then CPU (utime+stime of /proc/self/stat is not needed: process.cpuUsage) over
 * BENCH_SAMPLE_MS of idling, and a second line with it.
 */
import { createRequire } from 'node:module';
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const require = createRequire(join(process.cwd(), 'index.js'));
const env = process.env;
const asLoggedIn = env.BENCH_ROW?.endsWith('-rest') ?? false;
const row = asLoggedIn ? env.BENCH_ROW.slice(0, -'-rest'.length) : (env.BENCH_ROW ?? 'djs');
const sampleMs = Number(env.BENCH_SAMPLE_MS ?? 5000);

/**
 * The REST options, and the one request, that leave this process as login leaves a bot's: login's
 * first call is `GET /gateway/bot` through `client.rest`. `api` (an option of @discordjs/rest 2.x,
 * default https://discord.com/api) points it at a server here that answers as Discord does.
 *
 * `makeRequest` (also a REST option) is @discordjs/rest's own undici strategy, on the bot's undici.
 * Why: as npm installs a discord.js 14 bot, discord.js, @discordjs/rest and listing-agent share one
 * undici 6 at the top. In this repository's node_modules (which the bot project links) @discordjs/rest
 * has a nested copy of its own, so its default strategy would warm a copy the agent never uses. The
 * bot's `undici` is discord.js's copy (bench/embedded-footprint.bench.ts, test/helpers/bot-install.ts);
 * checked below, so a changed layout fails the row rather than measuring the wrong thing.
 */
async function restAsAfterLogin() {
  const { createServer, STATUS_CODES } = await import('node:http');
  const djsUndici = createRequire(realpathSync(require.resolve('discord.js'))).resolve('undici');
  const botUndici = require.resolve('undici');
  if (realpathSync(djsUndici) !== realpathSync(botUndici)) throw new Error(`the bot's undici (${botUndici}) is not discord.js's (${djsUndici})`);
  const undici = require('undici');
  let served = 0;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/v10/gateway/bot') return void res.writeHead(404).end();
    served += 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: 'wss://gateway.discord.gg', shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 } }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const api = `http://127.0.0.1:${server.address().port}`;
  // As @discordjs/rest's makeRequest (dist/index.js, "strategies/undiciRequest"), for GET (no body).
  const makeRequest = async (url, init) => {
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
  /** Login's first REST call; throws unless it reached the server through `makeRequest`. */
  const request = async (client) => {
    client.rest.setToken('bench-token-not-a-real-one');
    const gateway = await client.rest.get(Routes.gatewayBot());
    if (served !== 1 || typeof gateway.url !== 'string') throw new Error(`GET /gateway/bot: served ${served}, body ${JSON.stringify(gateway)}`);
  };
  return { options: { api, makeRequest }, request };
}

const { Client, GatewayIntentBits, Routes } = require('discord.js');
const login = asLoggedIn ? await restAsAfterLogin() : undefined;
const client = new Client({ intents: [GatewayIntentBits.Guilds], ...(login ? { rest: login.options } : {}) });
if (login) await login.request(client);
globalThis.gc();
globalThis.gc();

let importMs = 0;
let agent;
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
    const config = {
      service: { v1: env.BENCH_V1, v0: env.BENCH_V0 },
      health: full ? { enabled: true, listen: '127.0.0.1:0' } : { enabled: false },
      stats: { enabled: true },
      votes: { enabled: full },
      state: { directory: mkdtempSync(join(tmpdir(), 'la-footprint-state-')) },
    };
    agent = createListingAgent({
      token: env.BENCH_TOKEN,
      config,
      countSource: { description: 'the bench bot', read: async () => ({ ready: true, serverCount: 1234, shardCount: 2, shards: [617, 617] }) },
    });
    const posted = new Promise((resolve, reject) => {
      agent.once('posted', resolve);
      agent.once('error', reject);
    });
    // The bot's reward: votes need a listener (or a hook) as the agent starts.
    if (full) agent.on('vote', () => undefined);
    await agent.start();
    await posted;
  }
}
globalThis.gc();
globalThis.gc();
const memory = process.memoryUsage();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await new Promise((resolve) => setTimeout(resolve, sampleMs));
const cpu = process.cpuUsage(cpu0);
const elapsed = performance.now() - t0;
console.log(JSON.stringify({ row: env.BENCH_ROW ?? row, heapUsed: memory.heapUsed, rss: memory.rss, importMs, cpuMs: (cpu.user + cpu.system) / 1000, elapsedMs: elapsed, client: typeof client }));
if (agent) await agent.stop();
process.exit(0);
