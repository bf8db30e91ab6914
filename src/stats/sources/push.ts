import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { silentLogger, type AgentLogger } from '../../log/agent-logger.js';
import { ListingAgentError } from '../../errors.js';
import { formatAddress, type ListenAddress, type ListenSetting } from '../../http/listen-error.js';
import { createLocalServer } from '../../http/local-server.js';
import { readBody } from '../../http/read-body.js';
import type { CountReading, CountSource } from '../source.js';
import { describeIssues, parsePushBody, summarise, type StoredReport } from './push-reports.js';

export { pushShardCounts, PushRejectedError, type PushShardCountsOptions } from './push-client.js';
export type { PushBody, ShardCountReport } from './push-reports.js';

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
  /** The setting a `ListenError` tells people to change. Default `{ path: 'stats.push.listen', env: 'LISTING_AGENT_STATS_PUSH_LISTEN' }`. */
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
  /** Listens. Rejects with a `ListenError` naming the address and the fix. Calling it again returns the same promise. */
  start(): Promise<void>;
  /** Closes the port and every open connection. Safe to call more than once, or before `start()`. */
  stop(): Promise<void>;
  /** The endpoint's URL (`http://127.0.0.1:9466/stats`, with the real port). Throws before `start()` has resolved. */
  url(): string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Bodies above this are refused with 413: a report is tens of bytes, a 10 000-shard `{shards}` ~100 KiB less. */
export const MAX_PUSH_BODY_BYTES = 64 * 1024;

const ALLOW = 'GET, HEAD, POST';

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const digest = (text: string) => createHash('sha256').update(text).digest();


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
  const { listen, shardCount } = options;
  if (options.key === '') throw new ListingAgentError('invalid_option', 'the push source needs a shared key: set stats.push.key');
  if (shardCount !== undefined && (!Number.isSafeInteger(shardCount) || shardCount < 1)) {
    throw new ListingAgentError('invalid_option', `shardCount must be an integer of at least 1, not ${shardCount}`);
  }
  const path = options.path ?? PUSH_DEFAULTS.path;
  const staleAfterMs = options.staleAfterMs ?? PUSH_DEFAULTS.staleAfterMs;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const setting = options.setting ?? PUSH_DEFAULTS.setting;
  const keyDigest = digest(options.key);
  /** The newest report per shard ID. */
  const reports = new Map<number, StoredReport>();
  /** The `shard_count` of the newest push: a bot that reshards says so in its next report. */
  let pushedShardCount: number | undefined;
  let listeningUrl: string | undefined;
  let stopped = false;
  /** `onChange` listeners: told after each recorded report, so the first post need not wait for a poll. */
  const listeners = new Set<() => void>();

  const reading = (): CountReading => {
    const summary = summarise(reports.values(), { now: now(), staleAfterMs, shardCount: shardCount ?? pushedShardCount, configured: shardCount !== undefined });
    if (summary.ready || listeningUrl !== undefined) return summary;
    return { ready: false, reason: `the push endpoint is not listening (${stopped ? 'stopped' : 'start() not called or failed'}); ${summary.reason}` };
  };

  /** Constant time: both sides are hashed first, so neither the length nor a prefix leaks. */
  function authorised(req: IncomingMessage): boolean {
    const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    return match !== null && timingSafeEqual(digest(match[1]!.trim()), keyDigest);
  }

  async function receive(req: IncomingMessage): Promise<Reply> {
    const read = await readBody(req, MAX_PUSH_BODY_BYTES);
    const body = read.kind === 'bytes' ? { kind: 'text' as const, text: read.bytes.toString('utf8') } : read;
    if (body.kind === 'gone') return { status: 400 };
    if (body.kind === 'too_large') {
      return { status: 413, body: { error: `the body is larger than ${MAX_PUSH_BODY_BYTES} bytes: send one report per shard, or {shards: [...]}` } };
    }
    if (body.text.trim() === '') return { status: 400, body: { error: 'the body is empty: send JSON {shard_id, shard_count, server_count}' } };
    let json: unknown;
    try {
      json = JSON.parse(body.text);
    } catch (error) {
      return { status: 400, body: { error: `the body is not JSON (${error instanceof Error ? error.message : 'parse error'})` } };
    }
    const parsed = parsePushBody(json);
    if (!parsed.ok) return { status: 400, body: { error: describeIssues(parsed.issues) } };
    const pushed = parsed.reports[0]!.shard_count;
    if (shardCount !== undefined && pushed !== shardCount) {
      // Refused rather than stored: the bot sees the 400, and a wrong layout never sits in the total.
      return { status: 400, body: { error: `shard_count: is ${pushed} but the agent expects ${shardCount} shards (stats.push.shardCount): change one of them` } };
    }
    const at = now();
    for (const report of parsed.reports) reports.set(report.shard_id, { ...report, receivedAt: at });
    pushedShardCount = pushed;
    // After a reshard down, shards past the new count will never report again: forget them.
    for (const id of reports.keys()) if (id >= pushed) reports.delete(id);
    logger.debug({ shards: parsed.reports.map((r) => r.shard_id), shardCount: pushed }, 'shard counts pushed');
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch (error) {
        // A listener's bug must not turn the bot's report into a 500: the report is recorded.
        logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'a push listener threw');
      }
    }
    return { status: 204 };
  }

  async function route(req: IncomingMessage): Promise<Reply> {
    const requestPath = (req.url ?? '/').split(/[?#]/, 1)[0];
    if (requestPath !== path) return { status: 404, body: { error: `no such path: the push endpoint answers ${path}` } };
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'HEAD') {
      return { status: 405, body: { error: `${req.method ?? 'this method'} is not allowed: use ${ALLOW}` }, headers: { allow: ALLOW } };
    }
    if (!authorised(req)) {
      logger.warn({ remote: req.socket.remoteAddress, method: req.method }, 'push refused: missing or wrong key');
      return {
        status: 401,
        body: { error: 'missing or wrong key: send Authorization: Bearer <the key set as stats.push.key>' },
        headers: { 'www-authenticate': 'Bearer realm="listing-agent push"' },
      };
    }
    if (req.method === 'POST') return receive(req);
    const at = now();
    const stored = [...reports.values()]
      .sort((a, b) => a.shard_id - b.shard_id)
      .map(({ receivedAt, ...r }) => ({ ...r, received_at: new Date(receivedAt).toISOString(), age_ms: at - receivedAt }));
    return { status: 200, body: { ...reading(), reports: stored } };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let reply: Reply;
    try {
      reply = await route(req);
    } catch (error) {
      // Nothing above should throw; if it does, the bot gets a 500 and the agent keeps running.
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'push request failed');
      reply = { status: 500, body: { error: 'internal error: see the agent log' } };
    }
    if (res.headersSent || res.destroyed) return;
    const text = reply.body === undefined ? '' : JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      ...(text ? { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) } : {}),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      // A body left unread (a refusal before reading, a 413) is not worth draining: close instead.
      ...(req.complete ? {} : { connection: 'close' }),
      ...reply.headers,
    });
    res.end(req.method === 'HEAD' || reply.status === 204 ? undefined : text);
  }

  const server = createLocalServer({ what: 'push endpoint', listen, setting, logger, handler: (req, res) => void handle(req, res) });

  async function start(): Promise<void> {
    const base = await server.start();
    listeningUrl = `${base}${path}`;
    logger.info({ url: listeningUrl }, 'push endpoint listening');
  }

  async function stop(): Promise<void> {
    stopped = true;
    listeningUrl = undefined;
    await server.stop();
  }

  return {
    get description() {
      return `push endpoint (${listeningUrl ?? `http://${formatAddress(listen)}${path}`})`;
    },
    read: () => Promise.resolve(reading()),
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    start,
    stop,
    url() {
      if (listeningUrl === undefined) throw new ListingAgentError('not_listening', 'the push endpoint is not listening: await start() first');
      return listeningUrl;
    },
    [Symbol.asyncDispose]() {
      return this.stop();
    },
  };
}
