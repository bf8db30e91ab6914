import { silentLogger, type AgentLogger } from '../../log/agent-logger.js';
import { ListingAgentError } from '../../errors.js';
import { formatAddress, type ListenAddress, type ListenSetting } from '../../http/listen-error.js';
import { createLocalServer } from '../../http/local-server.js';
import { createRefusalLog } from '../../runtime/refusal-log.js';
import type { CountSource } from '../source.js';
import { digest, handlePush, pushReading, type PushShare, type PushState } from './push-endpoint.js';

export { pushShardCounts, PushRejectedError, type PushShardCountsOptions } from './push-client.js';
export type { PushBody, ShardCountReport } from './push-reports.js';
export { MAX_PUSH_BODY_BYTES } from './push-reports.js';

/** Options of {@link createPushSource}. */
export interface PushSourceOptions {
  /** Where the endpoint listens (`stats.push.listen`). Port 0 picks a free one (see `url()`). */
  listen: ListenAddress;
  /** The path the bot POSTs to (`stats.push.path`). Default `/stats`. */
  path?: string;
  /** The shared key the bot sends as `Authorization: Bearer <key>` (`stats.push.key`). */
  key: string;
  /** A shard report older than this is stale, and no total is ready while one is (`stats.push.staleAfter`). Default 600 000 (10 min). */
  staleAfterMs?: number;
  /** Shards expected (`stats.push.shardCount`). Default: the `shard_count` of the newest report. */
  shardCount?: number;
  /** The clock (epoch ms), for receive times and staleness. Default `Date.now`. */
  now?: () => number;
  /** Default: silent. */
  logger?: AgentLogger;
  /**
   * The setting a `ListenError` tells people to change. Default `{ path: 'stats.push.listen', env: 'LISTING_AGENT_STATS_PUSH_LISTEN'
   * }`.
   */
  setting?: ListenSetting;
}

/** The defaults of {@link PushSourceOptions}. */
export const PUSH_DEFAULTS = {
  path: '/stats',
  staleAfterMs: 600_000,
  setting: { path: 'stats.push.listen', env: 'LISTING_AGENT_STATS_PUSH_LISTEN' },
} as const satisfies Partial<PushSourceOptions>;

/** The push source: a count source with the HTTP endpoint the bot reports to. */
export interface PushSource extends CountSource {
  /**
   * Listens. Rejects with a `ListenError` naming the address and the fix. Calling it again while
   * it listens changes nothing; after `stop()` it listens again (the reports received before are
   * kept, and age out after `staleAfterMs` as always).
   */
  start(): Promise<void>;
  /** Closes the port and every open connection. Safe to call more than once, or before `start()`; `start()` may follow. */
  stop(): Promise<void>;
  /** The endpoint's URL (`http://127.0.0.1:9466/stats`, with the real port). Throws before `start()` has resolved. */
  url(): string;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The push source: the bot (or each of its processes) POSTs its shards' counts to a local HTTP
 * endpoint, authenticated with a shared key, and the agent adds them up.
 *
 * - `POST {path}` with `Authorization: Bearer <key>` and a JSON body: one report
 *   `{shard_id, shard_count, server_count}`, an array of them, or `{shards: [server counts]}` (index
 *   = shard ID). 204 when recorded; 400 `{error}` naming the field; 401 for a missing or wrong key
 *   (nothing is recorded); 413 above 64 KiB.
 * - `GET {path}` with the key: the current reading and the stored reports, as JSON (for debugging).
 * - `read()` is ready only when every expected shard has a report younger than `staleAfterMs` made
 *   for the expected shard count; otherwise the reason names the missing and stale shards.
 */
export function createPushSource(options: PushSourceOptions): PushSource {
  return pushSource(options, undefined);
}

/**
 * A push source whose pushes are shared with other agents (`state.redis`): each push is handed to
 * `share` before the bot is answered (204 when shared, 202 when only held here), and `read()` and
 * `GET {path}` give the shared reading. Not public: the agent wires it.
 */
export function createSharedPushSource(options: PushSourceOptions, share: PushShare): PushSource {
  return pushSource(options, share);
}

function pushSource(options: PushSourceOptions, share: PushShare | undefined): PushSource {
  const { listen, shardCount } = options;
  if (options.key === '') throw new ListingAgentError('invalid_option', 'the push source needs a shared key: set stats.push.key');
  if (shardCount !== undefined && (!Number.isSafeInteger(shardCount) || shardCount < 1)) {
    throw new ListingAgentError('invalid_option', `shardCount must be an integer of at least 1, not ${shardCount}`);
  }
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const state: PushState = {
    path: options.path ?? PUSH_DEFAULTS.path,
    staleAfterMs: options.staleAfterMs ?? PUSH_DEFAULTS.staleAfterMs,
    shardCount,
    now,
    logger,
    keyDigest: digest(options.key),
    reports: new Map(),
    listeners: new Set(),
    pushedShardCount: undefined,
    listeningUrl: undefined,
    stopped: false,
    ...(share ? { share } : {}),
    refusals: createRefusalLog({ logger, what: 'pushes', now }),
  };
  const { path } = state;
  const setting = options.setting ?? PUSH_DEFAULTS.setting;
  const server = createLocalServer({
    what: 'push endpoint',
    listen,
    setting,
    logger,
    handler: (req, res) => void handlePush(state, req, res),
  });

  // Counts the stops: a listen that resolves after a later stop() must not say it listens.
  let stops = 0;

  async function start(): Promise<void> {
    const asked = stops;
    state.stopped = false;
    const base = await server.start();
    if (asked !== stops) return;
    const url = `${base}${path}`;
    if (state.listeningUrl === url) return;
    state.listeningUrl = url;
    logger.info({ url }, 'push endpoint listening');
  }

  async function stop(): Promise<void> {
    stops += 1;
    state.stopped = true;
    state.listeningUrl = undefined;
    await server.stop();
    // What the last interval only counted is written now, not lost with the process.
    state.refusals.flush();
  }

  return {
    get description() {
      return `push endpoint (${state.listeningUrl ?? `http://${formatAddress(listen)}${path}`})`;
    },
    read: (signal) => (share ? share.read(signal) : Promise.resolve(pushReading(state))),
    onChange(listener) {
      state.listeners.add(listener);
      return () => void state.listeners.delete(listener);
    },
    start,
    stop,
    url() {
      if (state.listeningUrl === undefined)
        throw new ListingAgentError('not_listening', 'the push endpoint is not listening: await start() first');
      return state.listeningUrl;
    },
    [Symbol.asyncDispose]() {
      return this.stop();
    },
  };
}
