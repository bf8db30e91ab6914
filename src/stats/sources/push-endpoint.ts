import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentLogger } from '../../log/agent-logger.js';
import { readBody } from '../../http/read-body.js';
import type { CountReading } from '../source.js';
import { describeIssues, MAX_PUSH_BODY_BYTES, parsePushBody, summarise, type ShardCountReport, type StoredReport } from './push-reports.js';
import { errorMessage } from '../../errors.js';
import type { RefusalLog } from '../../runtime/refusal-log.js';

/**
 * The push source's HTTP side, as module functions over a plain {@link PushState}: who may push,
 * what a body records, and what each request is answered. `push.ts` owns the socket around it.
 */

const ALLOW = 'GET, HEAD, POST';

/** Why a push was refused, as its log line names it. */
type PushRefusal = 'wrong_key' | 'implausible_count' | 'bad_body' | 'too_large' | 'wrong_shard_count';

/**
 * Where a push source shares what it receives, when several agents take pushes (`state.redis`):
 * each push is handed over before the bot is answered, and the reading is everyone's.
 */
export interface PushShare {
  /** Shares the reports of a push just recorded; true when shared, false when only held here (answered 202). Never rejects. */
  share(reports: readonly StoredReport[]): Promise<boolean>;
  /** The counts every agent received, summed (what the leader posts). */
  read(signal?: AbortSignal): Promise<CountReading>;
}

/** What a push source holds: its settings and the reports pushed so far. */
export interface PushState {
  readonly path: string;
  readonly staleAfterMs: number;
  /** Shards expected (`stats.push.shardCount`); undefined: the `shard_count` of the newest report. */
  readonly shardCount: number | undefined;
  readonly now: () => number;
  readonly logger: AgentLogger;
  /** SHA-256 of the shared key. */
  readonly keyDigest: Buffer;
  /** The newest report per shard ID. */
  readonly reports: Map<number, StoredReport>;
  /** `onChange` listeners: told after each recorded report, so the first post need not wait for a poll. */
  readonly listeners: Set<() => void>;
  /** The `shard_count` of the newest push: a bot that reshards says so in its next report. */
  pushedShardCount: number | undefined;
  listeningUrl: string | undefined;
  stopped: boolean;
  /** With several agents: where each push is shared, and the shared reading. */
  readonly share?: PushShare;
  /** The warn lines of refused pushes: the first of each reason per 10 s, then a summary. */
  readonly refusals: RefusalLog<PushRefusal>;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A 4xx for a push, logged (the first of its reason per interval): nothing of it is recorded. */
function refuse(
  state: PushState,
  req: IncomingMessage,
  reason: PushRefusal,
  status: number,
  error: string,
  headers?: Reply['headers'],
): Reply {
  state.refusals.refused(reason, req.socket.remoteAddress, { method: req.method, status }, `push refused: ${error}`);
  return { status, body: { error }, ...(headers ? { headers } : {}) };
}

/** SHA-256 of `text`: the key is compared by digest. */
export const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** The current reading: ready only when every expected shard reported recently, and the endpoint listens. */
export function pushReading(state: PushState): CountReading {
  const { shardCount } = state;
  const summary = summarise(state.reports.values(), {
    now: state.now(),
    staleAfterMs: state.staleAfterMs,
    shardCount: shardCount ?? state.pushedShardCount,
    configured: shardCount !== undefined,
  });
  if (summary.ready || state.listeningUrl !== undefined) return summary;
  return {
    ready: false,
    reason: `the push endpoint is not listening (${state.stopped ? 'stopped' : 'start() not called or failed'}); ${summary.reason}`,
  };
}

/** Constant time: both sides are hashed first, so neither the length nor a prefix leaks. */
function authorised(state: PushState, req: IncomingMessage): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!.trim()), state.keyDigest);
}

/** Stores `reports` (one push, all of one shard count) received at `at`, tells the listeners, and returns them as stored. */
function recordReports(state: PushState, reports: readonly ShardCountReport[], at: number): StoredReport[] {
  const pushed = reports[0]!.shard_count;
  const stored = reports.map((report) => ({ ...report, receivedAt: at }));
  for (const report of stored) state.reports.set(report.shard_id, report);
  state.pushedShardCount = pushed;
  // After a reshard down, shards past the new count will never report again: forget them.
  for (const id of state.reports.keys()) if (id >= pushed) state.reports.delete(id);
  state.logger.debug({ shards: reports.map((r) => r.shard_id), shardCount: pushed }, 'shard counts pushed');
  for (const listener of [...state.listeners]) {
    try {
      listener();
    } catch (error) {
      // A listener's bug must not turn the bot's report into a 500: the report is recorded.
      state.logger.warn({ err: errorMessage(error) }, 'a push listener threw');
    }
  }
  return stored;
}

async function receive(state: PushState, req: IncomingMessage): Promise<Reply> {
  const read = await readBody(req, MAX_PUSH_BODY_BYTES);
  const body = read.kind === 'bytes' ? { kind: 'text' as const, text: read.bytes.toString('utf8') } : read;
  if (body.kind === 'gone') return { status: 400 };
  if (body.kind === 'too_large') {
    const error = `the body is larger than ${MAX_PUSH_BODY_BYTES} bytes: send one report per shard, or {shards: [...]}`;
    return refuse(state, req, 'too_large', 413, error);
  }
  if (body.text.trim() === '') {
    return refuse(state, req, 'bad_body', 400, 'the body is empty: send JSON {shard_id, shard_count, server_count}');
  }
  let json: unknown;
  try {
    json = JSON.parse(body.text);
  } catch (error) {
    return refuse(state, req, 'bad_body', 400, `the body is not JSON (${error instanceof Error ? error.message : 'parse error'})`);
  }
  const parsed = parsePushBody(json, { plausible: true });
  if (!parsed.ok) return refuse(state, req, parsed.implausible ? 'implausible_count' : 'bad_body', 400, describeIssues(parsed.issues));
  const pushed = parsed.reports[0]!.shard_count;
  if (state.shardCount !== undefined && pushed !== state.shardCount) {
    // Refused rather than stored: the bot sees the 400, and a wrong layout never sits in the total.
    const error = `shard_count: is ${pushed} but the agent expects ${state.shardCount} shards (stats.push.shardCount): change one of them`;
    return refuse(state, req, 'wrong_shard_count', 400, error);
  }
  const stored = recordReports(state, parsed.reports, state.now());
  if (state.share === undefined || (await state.share.share(stored))) return { status: 204 };
  // Held here, not shared: a 2xx (the bot has nothing to re-send), but not the 204 of a shared push.
  return {
    status: 202,
    body: { held: true, detail: 'recorded by this agent, which cannot reach Redis: it writes the counts there when Redis returns' },
  };
}

async function route(state: PushState, req: IncomingMessage): Promise<Reply> {
  const { path } = state;
  const requestPath = (req.url ?? '/').split(/[?#]/, 1)[0];
  if (requestPath !== path) return { status: 404, body: { error: `no such path: the push endpoint answers ${path}` } };
  if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'HEAD') {
    return { status: 405, body: { error: `${req.method ?? 'this method'} is not allowed: use ${ALLOW}` }, headers: { allow: ALLOW } };
  }
  if (!authorised(state, req)) {
    const error = 'missing or wrong key: send Authorization: Bearer <the key set as stats.push.key>';
    return refuse(state, req, 'wrong_key', 401, error, { 'www-authenticate': 'Bearer realm="listing-agent push"' });
  }
  if (req.method === 'POST') return receive(state, req);
  const at = state.now();
  const stored = [...state.reports.values()]
    .sort((a, b) => a.shard_id - b.shard_id)
    .map(({ receivedAt, ...r }) => ({ ...r, received_at: new Date(receivedAt).toISOString(), age_ms: at - receivedAt }));
  const reading = state.share ? await state.share.read() : pushReading(state);
  return { status: 200, body: { ...reading, reports: stored } };
}

/** Answers one request to the push endpoint; never throws (a bug is a 500 and a log line). */
export async function handlePush(state: PushState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let reply: Reply;
  try {
    reply = await route(state, req);
  } catch (error) {
    // Nothing above should throw; if it does, the bot gets a 500 and the agent keeps running.
    state.logger.warn({ err: errorMessage(error) }, 'push request failed');
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
