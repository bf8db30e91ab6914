import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AgentLogger } from '../log/agent-logger.js';
import { readBodyThen } from '../http/read-body.js';
import { settingName, type AgentMode } from '../config/setting-names.js';
import type { RefusalLog } from '../runtime/refusal-log.js';
import { errorMessage } from '../errors.js';

/**
 * The status page's actions: `POST /status/actions/<name>` with the admin token as
 * `Authorization: Bearer <token>`. Off unless `health.adminToken` is set; refused from another
 * origin (a page elsewhere must not make the agent's browser tab act); each one logged.
 */

/** What the agent does for an action; the status page knows nothing else of it. */
export interface StatusActions {
  /** Runs the hooks of the matching dead letters again (all when the filter is empty). */
  retryDeadLetters(filter: { keys?: string[]; hook?: string }): Promise<{ retried: number }>;
  /** Posts the counts now; resolves with what went where. */
  postStatsNow(): Promise<{
    posted: { target: string; servers: number | null; shards: number | null }[];
    failed: { target: string; error: string }[];
    note?: string;
  }>;
}

/** A refusal the caller should read: its status and the sentence that says what to do. */
export class ActionError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ActionError';
  }
}

/** The action names, as in the URL. */
const ACTION_NAMES = ['retry', 'post-stats'] as const;

/** What an action answered. */
export interface ActionReply {
  status: number;
  body: Record<string, unknown>;
}

/** The largest body an action reads (a retry names a few keys). */
const MAX_BODY_BYTES = 16 * 1024;

const digest = (text: string) => createHash('sha256').update(text).digest();

/** True when the request carries `Bearer <token>`, compared in constant time. */
function hasToken(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

/**
 * Why a request comes from another origin, or undefined when it does not. Browsers send `Origin`
 * (and `Sec-Fetch-Site`) with every POST; the CLI sends neither, and is let through to the token
 * check.
 */
function crossOrigin(req: IncomingMessage): string | undefined {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site is ${site}`;
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  const host = req.headers.host;
  // https: a TLS proxy in front that passes the Host header on.
  if (host === undefined || (origin !== `http://${host}` && origin !== `https://${host}`)) return `Origin ${origin} is not this page's`;
  return undefined;
}

function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    readBodyThen(req, MAX_BODY_BYTES, (result) => {
      if (result.kind === 'too_large') return reject(new ActionError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`));
      if (result.kind === 'gone') return reject(new ActionError(400, 'the body never arrived'));
      const text = result.bytes.toString('utf8').trim();
      if (text === '') return resolve({});
      try {
        const value: unknown = JSON.parse(text);
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
        resolve(value as Record<string, unknown>);
      } catch {
        reject(new ActionError(400, 'the body must be a JSON object'));
      }
    });
  });
}

/** `{ keys?: string[], hook?: string }` from a retry body, or an ActionError saying what is wrong. */
function retryFilter(body: Record<string, unknown>): { keys?: string[]; hook?: string } {
  const { keys, hook } = body;
  if (keys !== undefined && (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'string' && k !== ''))) {
    throw new ActionError(400, 'keys must be a non-empty list of vote keys (or left out: every dead letter)');
  }
  if (hook !== undefined && (typeof hook !== 'string' || hook === ''))
    throw new ActionError(400, 'hook must be a hook name (or left out: every hook)');
  return { ...(keys === undefined ? {} : { keys: keys as string[] }), ...(hook === undefined ? {} : { hook: hook as string }) };
}

/** Why an action was refused, as its log line names it. */
export type ActionRefusal = 'actions_off' | 'cross_origin' | 'wrong_token' | 'unknown_action' | 'not_json' | 'bad_request';

/** Options of {@link runAction}. */
export interface RunActionOptions {
  /** `health.adminToken`; undefined: actions are off. */
  token: string | undefined;
  actions: StatusActions;
  logger: AgentLogger;
  /** How the agent runs (the refusal names `health.adminToken` in its voice). */
  mode: AgentMode;
  /** The warn lines of refusals: the first of each reason per 10 s, then a summary. */
  refusals: RefusalLog<ActionRefusal>;
}

/** Checks a request for action `name` (a POST) and runs it; never throws. */
export async function runAction(req: IncomingMessage, name: string, options: RunActionOptions): Promise<ActionReply> {
  const { token, actions, logger } = options;
  const remote = req.socket.remoteAddress;
  const refuse = (status: number, error: string, reason: ActionRefusal): ActionReply => {
    options.refusals.refused(reason, remote, { action: name, status, error }, `status page action refused: ${error}`);
    return { status, body: { ok: false, error } };
  };
  if (token === undefined) {
    return refuse(403, `actions are off: set ${settingName('health.adminToken', options.mode)} and restart the agent`, 'actions_off');
  }
  const foreign = crossOrigin(req);
  if (foreign !== undefined) return refuse(403, `cross-origin request refused (${foreign})`, 'cross_origin');
  if (!hasToken(req, token)) return refuse(401, 'send the admin token (health.adminToken) as Authorization: Bearer <token>', 'wrong_token');
  if (!(ACTION_NAMES as readonly string[]).includes(name)) {
    return refuse(404, `no such action: the actions are ${ACTION_NAMES.join(', ')}`, 'unknown_action');
  }
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/json\b/i.test(type)) return refuse(415, 'send the body as application/json', 'not_json');
  try {
    const body = await readJson(req);
    if (name === 'retry') {
      const filter = retryFilter(body);
      const { retried } = await actions.retryDeadLetters(filter);
      logger.info({ action: name, remote, ...filter, retried }, 'status page action: dead letters retried');
      return { status: 200, body: { ok: true, retried } };
    }
    const outcome = await actions.postStatsNow();
    logger.info(
      { action: name, remote, posted: outcome.posted.map((p) => p.target), failed: outcome.failed.map((f) => f.target) },
      'status page action: stats posted now',
    );
    return { status: 200, body: { ok: outcome.failed.length === 0, ...outcome } };
  } catch (error) {
    if (error instanceof ActionError) return refuse(error.status, error.message, 'bad_request');
    const message = errorMessage(error);
    logger.warn({ action: name, remote, err: message }, 'status page action failed');
    return { status: 500, body: { ok: false, error: message } };
  }
}
