import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { EmulatorContext } from './context.js';
import { errorMessage } from '../errors.js';

/**
 * Which error shape a path answers with: v1 problem+json, v0 `{error}`, OAuth's RFC 6749
 * `{error, error_description}`, the authorize page's HTML, or the admin API's `{error}`.
 */
export type ApiFamily = 'v1' | 'v0' | 'oauth' | 'authorize' | 'admin';

/** What a route handler returns; the server writes it. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** JSON-serialised unless it is a string (then sent as is with `contentType`). */
  body?: unknown;
  contentType?: string;
}

/** The request as a route handler sees it: parsed URL, path parameters and the raw body. */
export interface RequestContext {
  req: IncomingMessage;
  method: string;
  url: URL;
  /** Path relative to the family's base (`/projects/@me` for `/api/v1/projects/@me`). */
  path: string;
  params: Record<string, string>;
  rawBody: Buffer;
  family: ApiFamily;
  emu: EmulatorContext;
  /** Set by the auth helpers, for the request log. */
  credential: 'project' | 'oauth' | 'application' | 'client' | null;
}

/**
 * An error a handler throws to answer with a status. The server renders it in the family's shape
 * (problem+json `detail`, v0 `error`, OAuth `error`/`error_description`).
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    /** Human-readable detail: problem+json `detail`, v0 `error`, OAuth `error_description`. */
    readonly detail: string,
    readonly extra: {
      headers?: Record<string, string>;
      /** OAuth error code (`invalid_grant`, ...), for the oauth family. */
      oauthError?: string;
      /** A body that replaces the family's error shape (v0's 429 `{"retry-after": s}`). */
      body?: unknown;
    } = {},
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

/** Shorthand for a thrown {@link HttpError}. */
export function fail(status: number, detail: string, extra?: HttpError['extra']): never {
  throw new HttpError(status, detail, extra);
}

/** Renders an error in the shape its family uses. */
export function errorReply(family: ApiFamily, error: HttpError): Reply {
  const headers = error.extra.headers ?? {};
  if (error.extra.body !== undefined) return { status: error.status, headers, body: error.extra.body };
  switch (family) {
    case 'v1':
      return {
        status: error.status,
        headers,
        contentType: 'application/problem+json',
        body: JSON.stringify({
          type: 'about:blank',
          title: STATUS_CODES[error.status] ?? 'Error',
          status: error.status,
          detail: error.detail,
        }),
      };
    case 'oauth':
      return {
        status: error.status,
        headers: { 'cache-control': 'no-store', ...headers },
        body: { error: error.extra.oauthError ?? 'invalid_request', error_description: error.detail },
      };
    case 'authorize':
      return {
        status: error.status,
        headers,
        contentType: 'text/html; charset=utf-8',
        body: `<!doctype html><title>${error.status} ${STATUS_CODES[error.status] ?? ''}</title>` +
          `<h1>Authorization failed</h1><p>${escapeHtml(error.detail)}</p>`,
      };
    case 'v0':
    case 'admin':
      return { status: error.status, headers, body: { error: error.detail } };
  }
}

/** Escapes text for HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A JSON reply. */
export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return headers ? { status, body, headers } : { status, body };
}

/** A reply with no body (204, or v0's 200 with an empty body). */
export function empty(status = 204, headers?: Record<string, string>): Reply {
  return headers ? { status, headers } : { status };
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The request body parsed as JSON. 415 when the content type is not JSON, 400 when the bytes are
 * not JSON (the detail says where the parser stopped).
 */
export function readJson(ctx: RequestContext): unknown {
  const type = mediaType(ctx.req);
  if (type !== 'application/json' && !type.endsWith('+json')) {
    fail(415, `the body must be JSON: send 'Content-Type: application/json' (got '${type || 'none'}')`);
  }
  if (ctx.rawBody.length === 0) fail(400, 'the body is empty; send a JSON document');
  try {
    return JSON.parse(ctx.rawBody.toString('utf8'));
  } catch (error) {
    return fail(400, `the body is not valid JSON: ${errorMessage(error)}`);
  }
}

/** The request body as a form (`application/x-www-form-urlencoded`); 400 otherwise. */
export function readForm(ctx: RequestContext): URLSearchParams {
  const type = mediaType(ctx.req);
  if (type !== 'application/x-www-form-urlencoded') {
    fail(400, `the body must be 'application/x-www-form-urlencoded' (got '${type || 'none'}')`, {
      oauthError: 'invalid_request',
    });
  }
  return new URLSearchParams(ctx.rawBody.toString('utf8'));
}

/** A JSON body that must be an object; 422 otherwise. */
export function readJsonObject(ctx: RequestContext): Record<string, unknown> {
  const body = readJson(ctx);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    fail(422, 'the body must be a JSON object');
  }
  return body as Record<string, unknown>;
}
