import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { silentLogger } from '../log/agent-logger.js';
import { ListingAgentError } from '../errors.js';
import { commandFacade } from './command-facade.js';
import { checkServer, markDown, observeLate, observeReply, retryLater, whenUp } from './connection-state.js';
import type { ConnectionState, RedisSettingWords } from './connection-state.js';
import {
  REDIS_CONNECTION_DEFAULTS,
  type RedisClient,
  type RedisConnection,
  type RedisConnectionEvents,
  type RedisConnectionOptions,
  type RedisScript,
  RedisUnavailableError,
} from './connection-types.js';
import type { RedisServer } from './server.js';
import { describeRedisUrl, scriptSha } from './keys.js';
import { clusterLink, clusterPrefix } from './cluster.js';
import { createConfirmer } from './confirm.js';
import { sentinelLink, serverLink, type Link, type LinkEvents } from './links.js';

/**
 * One connection to Redis for everything an agent keeps there (state, vote ledger, lease, shard
 * reports, reward stream). Built on the official client (`@redis/client`), set up so that an
 * outage is visible instead of hidden: commands fail at once while Redis is away (no offline
 * queue that would hold a webhook past its deadline), each command has a timeout, and the client
 * reconnects forever with a capped backoff. It reaches one server at a URL, the primary that
 * Sentinels name (following it across a failover), or the primary of the agent's slot in a Redis
 * Cluster (cluster.ts), and is up only on a primary: each time it connects it checks the server's
 * role (connection-state.ts).
 */

export {
  REDIS_CONNECTION_DEFAULTS,
  RedisServerError,
  RedisUnavailableError,
  redisFailure,
  type RedisConnection,
  type RedisConnectionEvents,
  type RedisConnectionOptions,
  type RedisClusterNodes,
  type RedisScript,
  type RedisSentinelOptions,
  type RedisTlsOptions,
} from './connection-types.js';
export type { RedisSettingWords } from './connection-state.js';

/**
 * A default agent ID, `<hostname>/<8 random hex digits>`: unique per process without reading
 * `process` (the daemon passes `<hostname>/<pid>` instead, from the CLI).
 */
export function defaultAgentId(): string {
  return `${hostname()}/${randomUUID().slice(0, 8)}`;
}

/** How {@link createRedisConnection}'s own messages name its options. */
const OPTION_WORDS: RedisSettingWords = {
  url: 'url',
  masterName: 'sentinel.masterName',
  nodes: 'sentinel.nodes',
  clusterNodes: 'cluster.nodes',
};

/** A Lua script run by SHA on `client`, sent whole when Redis forgot it. */
function scriptOn(client: RedisClient, source: string): RedisScript {
  const sha = scriptSha(source);
  return {
    async run(keys, args) {
      const argv = [String(keys.length), ...keys, ...args.map(String)];
      try {
        return await client.sendCommand(['EVALSHA', sha, ...argv]);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return client.sendCommand(['EVAL', source, ...argv]);
      }
    },
  };
}

/** What the Sentinel client's errors mean, in the words of the settings to change. */
function sentinelReason(text: string, options: RedisConnectionOptions, words: RedisSettingWords): string {
  const detail = text.replace(/^obseve client error: (Error: )?/, '');
  if (/No such master with that name/i.test(detail)) {
    const name = options.sentinel?.masterName ?? '?';
    return `the Sentinels monitor no primary called ${name}: set ${words.masterName} to a name they monitor (SENTINEL MASTERS lists them)`;
  }
  if (/unknown command .?sentinel/i.test(detail)) {
    const fix = `list the Sentinels there, or set ${words.url} for one Redis server`;
    return `a server of ${words.nodes} is not a Sentinel (it does not know SENTINEL): ${fix}`;
  }
  return `asking the Sentinels: ${detail}`;
}

/** The link's events, as changes of `state`. */
function linkEvents(state: () => ConnectionState, options: RedisConnectionOptions, words: RedisSettingWords): LinkEvents {
  /** The last thing a Sentinel said while the connection was down: a better reason than "none of the sentinels are available". */
  let lastNote: string | undefined;
  return {
    ready: () => void checkServer(state()),
    lost(reason, keepReason) {
      const s = state();
      s.generation += 1;
      s.onServer = false;
      markDown(s, keepReason && !s.up ? (s.downReason ?? reason) : reason);
      if (s.link.kind !== 'server') retryLater(s, 'check');
    },
    note(text) {
      const s = state();
      if (s.up || !s.started) return;
      lastNote = sentinelReason(text, options, words);
      s.downReason = lastNote;
    },
    gaveUp(text) {
      const s = state();
      const noneAnswered = /None of the sentinels are available/i.test(text);
      markDown(s, lastNote !== undefined && noneAnswered ? lastNote : sentinelReason(text, options, words));
      retryLater(s, 'connect');
    },
  };
}

/** The connection's link, for exactly one of `url`, `sentinel` and `cluster`; `prefix` is the one its keys get. */
function linkFor(options: RedisConnectionOptions, prefix: string, events: LinkEvents): Link {
  const { url, sentinel, cluster } = options;
  if ([url, sentinel, cluster].filter((given) => given !== undefined).length !== 1) {
    const message =
      'a Redis connection needs exactly one of url (one server), sentinel (a primary the Sentinels name) and cluster (a Redis Cluster)';
    throw new ListingAgentError('invalid_option', message);
  }
  if (url !== undefined) return serverLink({ ...options, url }, events);
  if (cluster !== undefined) {
    if (cluster.nodes.length === 0) {
      throw new ListingAgentError('invalid_option', 'cluster.nodes is empty: list at least one node of the cluster (host and port)');
    }
    return clusterLink({ ...options, cluster }, prefix, events);
  }
  if (sentinel!.nodes.length === 0) {
    throw new ListingAgentError('invalid_option', 'sentinel.nodes is empty: list at least one Sentinel (host and port)');
  }
  return sentinelLink({ ...options, sentinel: sentinel! }, events);
}

/** `redis redis://host:port/db`, `redis mymaster (Sentinels host:port, ...)` or `redis cluster (host:port, ...)`, never a password. */
function describeTarget(options: RedisConnectionOptions): string {
  if (options.url !== undefined) return `redis ${describeRedisUrl(options.url)}`;
  if (options.cluster !== undefined) {
    return `redis cluster (${options.cluster.nodes.map((node) => `${node.host}:${node.port}`).join(', ')})`;
  }
  const nodes = options.sentinel?.nodes.map((node) => `${node.host}:${node.port}`).join(', ') ?? '';
  return `redis ${options.sentinel?.masterName ?? '?'} (Sentinels ${nodes})`;
}

/**
 * Connects to Redis as `options` say, its messages naming settings with `words` (from-config.ts
 * passes the config's keys). Call `start()` to begin.
 */
export function openRedisConnection(options: RedisConnectionOptions, words: RedisSettingWords): RedisConnection {
  const given = options.prefix ?? REDIS_CONNECTION_DEFAULTS.prefix;
  // On a cluster every key must hash to one slot: the prefix becomes a hash tag.
  const prefix = options.cluster === undefined ? given : clusterPrefix(given);
  let state: ConnectionState | undefined;
  const link = linkFor(options, prefix, linkEvents(() => state!, options, words));
  const emitter = new EventEmitter<RedisConnectionEvents>();
  const made: ConnectionState = {
    link,
    client: undefined as unknown as RedisClient,
    confirm: () => Promise.resolve(),
    emitter,
    logger: options.logger ?? silentLogger,
    words,
    description: describeTarget(options),
    delays: options.reconnectDelaysMs ?? REDIS_CONNECTION_DEFAULTS.reconnectDelaysMs,
    up: false,
    downReason: 'not connected yet',
    server: undefined,
    onServer: false,
    refused: undefined,
    started: false,
    closing: undefined,
    generation: 0,
    misses: 0,
    retryTimer: undefined,
  };
  state = made;
  const confirmer = createConfirmer({
    client: () => made.client,
    replicas: options.replicas,
    timeoutMs: options.confirmTimeoutMs ?? REDIS_CONNECTION_DEFAULTS.confirmTimeoutMs,
    onRefused: (reason) => emitter.emit('refusing', reason),
  });
  // Another server (a failover, a restart): its replicas are read again.
  emitter.on('server', () => confirmer.forget());
  made.confirm = confirmer.confirm;
  const deadlineMs = options.commandTimeoutMs ?? REDIS_CONNECTION_DEFAULTS.commandTimeoutMs;
  made.client = commandFacade(link, {
    routeKey: prefix,
    observe: (error) => observeReply(made, error),
    deadlineMs,
    late: () => observeLate(made, deadlineMs),
    unavailable: () => made.downReason ?? 'reconnecting',
  });
  return connectionOf(made, prefix);
}

/** The connection object: the emitter, with the state's getters and the methods. */
function connectionOf(state: ConnectionState, prefix: string): RedisConnection {
  const { emitter, link, client } = state;
  // defineProperties, not Object.assign: assign would copy the getters' values once.
  Object.defineProperties(emitter, {
    isUp: { get: () => state.up, enumerable: true },
    downReason: { get: () => state.downReason, enumerable: true },
    server: { get: () => (state.onServer ? state.server : undefined), enumerable: true },
  });
  const connection = Object.assign(emitter, {
    client,
    prefix,
    key: (...parts: string[]) => prefix + parts.join(':'),
    serverChangedSince: (seen: RedisConnection['server']) => !state.up || state.server === undefined || state.server !== seen,
    start() {
      if (state.started) return;
      state.started = true;
      state.refused = undefined;
      // Started again while closing: connect once the close is done (the client connects again after a close).
      if (state.closing) {
        void state.closing.then(() => {
          if (state.started) link.connect();
        });
      } else link.connect();
    },
    whenUp: (waitOptions: { timeoutMs?: number; signal?: AbortSignal } = {}) => whenUp(state, waitOptions),
    script: (source: string): RedisScript => scriptOn(client, source),
    async confirm(what: string, written?: { on: RedisServer | undefined }) {
      const moved = () => written !== undefined && connection.serverChangedSince(written.on);
      if (!moved()) await state.confirm(what);
      if (moved()) {
        throw new RedisUnavailableError(
          `Redis: ${what} is not confirmed: the connection is on another server since the write (a failover?), ` +
            'where it may not be, so it is refused',
        );
      }
    },
    describe: () => state.description,
    close() {
      if (state.closing) return state.closing;
      const closing = closeLink(state).finally(() => {
        if (state.closing === closing) state.closing = undefined;
      });
      state.closing = closing;
      return closing;
    },
  });
  return connection as RedisConnection;
}

async function closeLink(state: ConnectionState): Promise<void> {
  if (!state.started) return;
  // A close asked for is not an outage: no "connection lost" warning, no `down` event.
  state.started = false;
  state.up = false;
  state.downReason = 'closed';
  state.generation += 1;
  state.onServer = false;
  clearTimeout(state.retryTimer);
  await state.link.close();
  state.up = false;
  state.downReason = 'closed';
}

/** Connects to Redis as `options` say (exactly one of `url`, `sentinel` and `cluster`). Call `start()` to begin. */
export function createRedisConnection(options: RedisConnectionOptions): RedisConnection {
  return openRedisConnection(options, OPTION_WORDS);
}
