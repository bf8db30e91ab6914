import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentLogger } from '../log/agent-logger.js';
import { runAction, type StatusActions } from './actions.js';
import { readAsset } from './assets.js';
import type { StatusDocument } from './document.js';
import { renderStatusPage } from './page.js';
import { statusView } from './view-model.js';
import type { AgentMode } from '../config/setting-names.js';
import { createRefusalLog } from '../runtime/refusal-log.js';
import type { ActionRefusal } from './actions.js';
import { errorMessage } from '../errors.js';

/**
 * The status page's routes on the health server: `GET /` and `/status` (the page), `GET
 * /status.json` (its data), `GET /status/assets/<file>`, `POST /status/actions/<name>`. Every
 * answer carries a Content-Security-Policy that allows only this origin's scripts, styles and
 * requests (no inline script or style, no other origin) and forbids framing.
 */

/** The policy of every answer. `data:` images: uPlot's canvas needs none, the page has none; kept out. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; " +
    "frame-ancestors 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** Options of {@link createStatusPages}. */
export interface StatusPagesOptions {
  /** The current document, secrets already removed. */
  document(): Promise<StatusDocument>;
  actions: StatusActions;
  /** `health.adminToken`; undefined: the page is read-only and every action is refused. */
  adminToken: string | undefined;
  logger: AgentLogger;
  /** How the agent runs: a refusal names `health.adminToken` in its voice (with the variable for the daemon). */
  mode: AgentMode;
  /** Epoch ms, for the summaries of refused actions in the log. Default `Date.now`. */
  now?: () => number;
}

/** What the health server calls for the paths it does not answer itself. */
export interface StatusPages {
  /** Answers `req` and returns true when the path is the status page's; false leaves it to the caller. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Writes the summary of the refused actions the log only counted so far (a stop). */
  flush(): void;
}

/** Not `/status/`: the page's relative asset paths would resolve under it. */
const PAGE_PATHS = new Set(['/', '/status']);
const ASSETS = '/status/assets/';
const ACTIONS = '/status/actions/';

interface Answer {
  status: number;
  contentType?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

function send(req: IncomingMessage, res: ServerResponse, answer: Answer): void {
  const body = answer.body ?? '';
  res.writeHead(answer.status, {
    ...SECURITY_HEADERS,
    'cache-control': 'no-store',
    ...(answer.contentType ? { 'content-type': answer.contentType } : {}),
    'content-length': Buffer.byteLength(body),
    ...answer.headers,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

const json = (status: number, value: unknown, headers?: Record<string, string>): Answer => ({
  status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(value),
  ...(headers ? { headers } : {}),
});

/** A weak ETag of the document without its time: the same news, the same tag. */
function documentTag(doc: StatusDocument): string {
  const { generatedAt: _time, agent, ...rest } = doc;
  const { uptimeMs: _uptime, ...steady } = agent;
  return `W/"${createHash('sha256').update(JSON.stringify({ ...rest, agent: steady })).digest('base64url').slice(0, 27)}"`;
}

/** Creates the status page's routes. */
export function createStatusPages(options: StatusPagesOptions): StatusPages {
  const { logger } = options;
  const refusals = createRefusalLog<ActionRefusal>({ logger, what: 'status page actions', now: options.now ?? Date.now });

  async function get(req: IncomingMessage, path: string): Promise<Answer> {
    if (PAGE_PATHS.has(path)) {
      const doc = await options.document();
      return { status: 200, contentType: 'text/html; charset=utf-8', body: renderStatusPage(statusView(doc)) };
    }
    if (path === '/status.json') {
      const doc = await options.document();
      const etag = documentTag(doc);
      if (req.headers['if-none-match'] === etag) return { status: 304, headers: { etag } };
      return json(200, doc, { etag });
    }
    const reading = readAsset(path.slice(ASSETS.length));
    if (reading === undefined) return json(404, { error: `no such file: the status page's assets are under ${ASSETS}` });
    const asset = await reading;
    if (req.headers['if-none-match'] === asset.etag) return { status: 304, headers: { etag: asset.etag } };
    // Revalidated each time (an upgrade changes them); a 304 costs a header.
    return { status: 200, contentType: asset.contentType, body: asset.body, headers: { etag: asset.etag, 'cache-control': 'no-cache' } };
  }

  async function answer(req: IncomingMessage, path: string): Promise<Answer> {
    if (path.startsWith(ACTIONS)) {
      if (req.method !== 'POST') return json(405, { error: 'actions take POST' }, { allow: 'POST' });
      const { adminToken: token, actions, mode } = options;
      const reply = await runAction(req, path.slice(ACTIONS.length), { token, actions, logger, mode, refusals });
      return json(reply.status, reply.body, reply.status === 401 ? { 'www-authenticate': 'Bearer' } : undefined);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return json(405, { error: `${req.method ?? 'this method'} is not allowed: use GET, HEAD` }, { allow: 'GET, HEAD' });
    return get(req, path);
  }

  return {
    flush: () => refusals.flush(),
    handle(req, res) {
      const path = (req.url ?? '/').split(/[?#]/, 1)[0]!;
      // Browsers ask for it beside every page: no icon, and no 404 in their console.
      if (path === '/favicon.ico') {
        send(req, res, { status: 204 });
        return true;
      }
      if (!PAGE_PATHS.has(path) && path !== '/status.json' && !path.startsWith(ASSETS) && !path.startsWith(ACTIONS)) return false;
      answer(req, path).then(
        (reply) => send(req, res, reply),
        (error: unknown) => {
          logger.warn({ err: errorMessage(error), url: path }, 'status page request failed');
          send(req, res, json(500, { error: 'internal error: see the agent log' }));
        },
      );
      return true;
    },
  };
}
