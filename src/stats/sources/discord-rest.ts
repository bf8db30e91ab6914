import { redact } from '../../api/redact.js';
import { formatDuration } from '../../config/duration.js';
import { createDiscordRestClient, type DiscordRestClient } from '../../discord/client.js';
import { botToken, DISCORD_CONNECTION_DEFAULTS, type DiscordConnectionOptions } from '../../discord/rest.js';
import { causeMessage, ListingAgentError } from '../../errors.js';
import type { CountReading, CountSource } from '../source.js';

/** Options of {@link createDiscordRestSource}. */
export interface DiscordRestSourceOptions extends DiscordConnectionOptions {
  /**
   * The shard count to report (`stats.rest.shardCount`). Default: the `shards` of
   * `GET /gateway/bot`, which is Discord's recommendation, not necessarily what the bot runs: set
   * this when the bot runs a fixed number of shards.
   */
  shardCount?: number;
  /** How long a count read from Discord is reused (`stats.rest.cacheTtl`). Default 600 000 (10 min). */
  cacheTtlMs?: number;
}

/** The defaults of {@link DiscordRestSourceOptions}. */
export const DISCORD_REST_DEFAULTS = {
  cacheTtlMs: 600_000,
  ...DISCORD_CONNECTION_DEFAULTS,
} as const satisfies Partial<DiscordRestSourceOptions>;

const APPLICATION = 'GET /applications/@me';
const GATEWAY = 'GET /gateway/bot';
type Route = typeof APPLICATION | typeof GATEWAY;

type Fetched = { ok: true; value: number } | { ok: false; reason: string };

function notReady(reason: string): CountReading {
  return { ready: false, reason };
}

/** The field `route`'s answer must carry, as a count. */
function pick(route: Route, body: unknown): Fetched {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, reason: `Discord's answer to ${route} is not a JSON object: is the API base URL right?` };
  }
  const [field, min] = route === APPLICATION ? (['approximate_guild_count', 0] as const) : (['shards', 1] as const);
  const value = (body as Record<string, unknown>)[field];
  if (value === undefined || value === null) return { ok: false, reason: `Discord's answer to ${route} has no ${field}` };
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    return { ok: false, reason: `Discord's answer to ${route} has ${field} ${JSON.stringify(value)}, not an integer of at least ${min}` };
  }
  return { ok: true, value };
}

/** Resolves with `promise`, or at once with a not-ready reading when `signal` aborts first. */
function unlessAborted(promise: Promise<CountReading>, signal: AbortSignal | undefined): Promise<CountReading> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(notReady('the read was aborted'));
  return new Promise((resolve) => {
    const onAbort = () => resolve(notReady('the read was aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then((reading) => {
      signal.removeEventListener('abort', onAbort);
      resolve(reading);
    });
  });
}

/**
 * Counts from Discord's REST API, for a sidecar that has no gateway connection:
 * `approximate_guild_count` of `GET /applications/@me`, and the shard count from the config or
 * `shards` of `GET /gateway/bot`.
 *
 * - Each answer is reused for `cacheTtlMs`; concurrent reads share one request.
 * - Discord's rate-limit headers are obeyed per bucket: when `X-RateLimit-Remaining` is 0 no
 *   request goes out before `X-RateLimit-Reset-After`; a 429 stops requests on its bucket (every
 *   route when global) for the longest of `retry_after`, `Retry-After` and `X-RateLimit-Reset-After`.
 *   Nothing sleeps: until then reads answer `ready: false` at once, saying how long is left.
 * - While rate limited, a cached reading past its lifetime is NOT served as ready: a reading carries
 *   no age, so the poster would stamp an old count with the current time; the waits are seconds
 *   while samples are minutes apart, so skipping one sample costs less than a wrong one.
 * - A 401 or 403 answers "check discord.token" and is not retried before `cacheTtlMs` has passed:
 *   the token cannot change while the agent runs, and Discord bans IPs that send many invalid
 *   requests (401, 403, 429).
 * - `read()` never throws; the token never appears in a reason.
 */
export function createDiscordRestSource(options: DiscordRestSourceOptions): CountSource {
  if (botToken(options.token) === '')
    throw new ListingAgentError('invalid_option', 'the Discord REST source needs the bot token: set discord.token');
  const { shardCount } = options;
  if (shardCount !== undefined && (!Number.isSafeInteger(shardCount) || shardCount < 1)) {
    throw new ListingAgentError('invalid_option', `shardCount must be an integer of at least 1, not ${shardCount}`);
  }
  const client = createDiscordRestClient(options);
  const counts = createCountReader(client, shardCount, options.cacheTtlMs ?? DISCORD_REST_DEFAULTS.cacheTtlMs, options.now ?? Date.now);
  let inflight: Promise<CountReading> | undefined;
  return {
    description: `Discord REST API ` +
      `(servers: ${APPLICATION}; shards: ${shardCount !== undefined ? `${shardCount}, from the config` : GATEWAY})`,
    read(signal) {
      const cached = counts.cached();
      if (cached !== undefined) return Promise.resolve(cached);
      inflight ??= counts
        .refresh()
        .catch((error: unknown) => notReady(`unexpected error while reading from Discord: ${causeMessage(error)}`))
        // The client scrubs its reasons; this catches any other path that could carry the token out.
        .then((reading) => (reading.ready ? reading : notReady(redact(reading.reason, client.secrets))))
        .finally(() => {
          inflight = undefined;
        });
      return unlessAborted(inflight, signal);
    },
  };
}

/**
 * The counts of one source: each route's value cached for `cacheTtlMs`, and a 401 or 403
 * remembered for as long (see {@link createDiscordRestSource}).
 */
function createCountReader(client: DiscordRestClient, shardCount: number | undefined, cacheTtlMs: number, now: () => number) {
  const cache = new Map<Route, { value: number; at: number }>();
  let authFailure: { reason: string; until: number } | undefined;

  const fresh = (route: Route, at: number) => {
    const cached = cache.get(route);
    return cached !== undefined && at - cached.at < cacheTtlMs ? cached.value : undefined;
  };

  async function value(route: Route): Promise<Fetched> {
    const cached = fresh(route, now());
    if (cached !== undefined) return { ok: true, value: cached };
    const answer = await client.get(route, route.slice('GET '.length));
    const at = now();
    if (!answer.ok) {
      if (answer.status === 401 || answer.status === 403) authFailure = { reason: answer.reason, until: at + cacheTtlMs };
      return answer;
    }
    const picked = pick(route, answer.body);
    if (picked.ok) cache.set(route, { value: picked.value, at });
    return picked;
  }

  return {
    /** The reading when every count is fresh, else undefined. */
    cached(): CountReading | undefined {
      const at = now();
      const guilds = fresh(APPLICATION, at);
      const shards = shardCount ?? fresh(GATEWAY, at);
      return guilds !== undefined && shards !== undefined ? { ready: true, serverCount: guilds, shardCount: shards } : undefined;
    },
    async refresh(): Promise<CountReading> {
      const started = now();
      if (authFailure !== undefined && started < authFailure.until) {
        return notReady(`${authFailure.reason}; next try in ${formatDuration(Math.ceil((authFailure.until - started) / 1_000) * 1_000)}`);
      }
      authFailure = undefined;
      const guilds = await value(APPLICATION);
      if (!guilds.ok) return notReady(guilds.reason);
      const shards: Fetched = shardCount !== undefined ? { ok: true, value: shardCount } : await value(GATEWAY);
      if (!shards.ok) return notReady(shards.reason);
      return { ready: true, serverCount: guilds.value, shardCount: shards.value };
    },
  };
}
