/**
 * topgg-autoposter, aimed at a local emulator, for the footprint, start-up and requests benches.
 *
 * - The poster: topgg-autoposter's own `BasePoster` (the class its `DJSPoster` extends: the fixed
 *   5 s delay before the first post, `setInterval` for the rest, `@top-gg/sdk`'s `Api.postStats`),
 *   bound to a stand-in client with the three binds `DJSPoster` gives it, copied from its source.
 *   `AutoPoster(token, client)` itself insists on `client instanceof require('discord.js').Client`,
 *   which would load discord.js into the process: in a real bot that memory is the bot's, not the
 *   poster's, so it is left out. The stand-in reports the same counts our agent is given.
 * - The service: `@top-gg/sdk` sends every request with undici 5's `request()` to the hard-coded
 *   `https://top.gg/api...`, through undici's global dispatcher. `redirectTopgg(origin)` installs,
 *   with the sdk's own undici, a global dispatcher that sends requests for `https://top.gg` to
 *   `origin` (same path, method, headers and body: the emulator serves v0 at `<origin>/api`) and
 *   refuses any other origin. Nothing of the sdk or the poster is patched.
 *
 * Run as a child process (`node bench/helpers/autoposter.mjs`), it starts one poster from the
 * environment (BENCH_EMULATOR_ORIGIN, BENCH_TOKEN, BENCH_SERVER_COUNT, BENCH_SHARD_COUNT,
 * BENCH_INTERVAL_MS) and prints one JSON line per event: `{"event":"started"}`, then
 * `{"event":"posted","at":<epoch ms>}` or `{"event":"error","message":...}`.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const sdkRequire = createRequire(`${dirname(require.resolve('@top-gg/sdk'))}/`);
/** The undici the sdk itself uses (its own copy, 5.x). */
const undici = sdkRequire('undici');
const { BasePoster } = require('topgg-autoposter/dist/structs/BasePoster.js');

export const undiciVersion = sdkRequire('undici/package.json').version;

/**
 * Sends the sdk's requests for https://top.gg to `origin` instead. Returns the number of requests
 * in flight (a fake-timer driver waits for 0) and a way to put the previous dispatcher back.
 */
export function redirectTopgg(origin) {
  const agent = new undici.Agent();
  const previous = undici.getGlobalDispatcher();
  let inFlight = 0;
  class ToEmulator extends undici.Dispatcher {
    dispatch(options, handler) {
      if (String(options.origin) !== 'https://top.gg') throw new Error(`unexpected origin ${String(options.origin)}`);
      inFlight += 1;
      let ended = false;
      const end = () => {
        if (!ended) {
          ended = true;
          inFlight -= 1;
        }
      };
      const wrapped = new Proxy(handler, {
        get(target, property) {
          const value = Reflect.get(target, property);
          if (typeof value !== 'function') return value;
          if (property === 'onComplete' || property === 'onError') {
            return (...args) => {
              end();
              return value.apply(target, args);
            };
          }
          return value.bind(target);
        },
      });
      return agent.dispatch({ ...options, origin }, wrapped);
    }
    close(...args) {
      return agent.close(...args);
    }
    destroy(...args) {
      return agent.destroy(...args);
    }
  }
  undici.setGlobalDispatcher(new ToEmulator());
  return {
    inFlight: () => inFlight,
    async restore() {
      undici.setGlobalDispatcher(previous);
      await agent.close();
    },
  };
}

/** A stand-in for a discord.js Client: ready, with `counts.serverCount` guilds and `counts.shardCount` internal shards. */
export function standInClient(counts) {
  return {
    ws: { status: 0 },
    guilds: { cache: { get size() { return counts.serverCount; } } },
    shard: null,
    options: { get shardCount() { return counts.shardCount; } },
    once() {},
  };
}

/** topgg-autoposter's poster over a stand-in client: DJSPoster's binds, without its discord.js check. */
export class StandInPoster extends BasePoster {
  constructor(token, client, options) {
    super(token, options);
    this.client = client;
    // As DJSPoster (topgg-autoposter 2.0.2, dist/structs/DJSPoster.js).
    this._binder({
      clientReady: () => this.client.ws.status === 0,
      waitForReady: (fn) => this.client.once('ready', () => fn()),
      getStats: async () => ({
        serverCount: this.client.guilds.cache.size,
        shardId: this.client.shard?.ids[0],
        shardCount: this.client.options.shardCount || 1,
      }),
    });
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const env = process.env;
  redirectTopgg(env.BENCH_EMULATOR_ORIGIN);
  const counts = { serverCount: Number(env.BENCH_SERVER_COUNT), shardCount: Number(env.BENCH_SHARD_COUNT) };
  const poster = new StandInPoster(env.BENCH_TOKEN, standInClient(counts), { interval: Number(env.BENCH_INTERVAL_MS ?? 1_800_000) });
  const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
  poster.on('posted', () => say({ event: 'posted', at: Date.now() }));
  poster.on('error', (error) => say({ event: 'error', message: String(error?.message ?? error) }));
  say({ event: 'started', at: Date.now() });
  // Never outlives the bench.
  process.on('disconnect', () => process.exit(0));
  setTimeout(() => process.exit(0), Number(env.BENCH_MAX_SECONDS ?? 300) * 1000).unref();
}
