import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:http';
import type { EmulatorContext } from './context.js';
import type { ApiFamily, Reply, RequestContext } from './http.js';
import { iso } from './clock.js';
import { HttpError, errorReply, fail } from './http.js';
import type { Router } from './router.js';

/** The routers of each family; paths inside a family are relative to its base. */
export interface FamilyRouters {
  v1: Router;
  v0: Router;
  oauth: Router;
  authorize: Router;
  admin: Router;
}

interface Placement {
  family: ApiFamily;
  /** The path relative to the family's base. */
  path: string;
}

/** Where a request path belongs (the real service's layout). */
function placeRequest(pathname: string): Placement | undefined {
  const within = (base: string) => pathname === base || pathname.startsWith(`${base}/`);
  if (within('/api/v1/oauth2')) return { family: 'oauth', path: pathname.slice('/api/v1'.length) };
  if (within('/api/v1')) return { family: 'v1', path: pathname.slice('/api/v1'.length) || '/' };
  if (within('/api')) return { family: 'v0', path: pathname.slice('/api'.length) || '/' };
  if (within('/oauth2')) return { family: 'authorize', path: pathname };
  if (within('/_emulator')) return { family: 'admin', path: pathname.slice('/_emulator'.length) || '/' };
  return undefined;
}

/**
 * Writes `reply`. `Date` is the emulator's clock (`nowMs`), not the machine's: the service's own
 * clock is what its `Date` header tells, so advancing the emulator's clock (or starting it with a
 * `now` of its own) shows a client a service whose clock differs from its own.
 */
function writeReply(req: IncomingMessage, res: ServerResponse, reply: Reply, nowMs: number): void {
  if (res.headersSent || res.destroyed) return;
  let payload: string | undefined;
  let contentType = reply.contentType;
  if (typeof reply.body === 'string') {
    payload = reply.body;
    contentType ??= 'text/plain; charset=utf-8';
  } else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body);
    contentType ??= 'application/json; charset=utf-8';
  }
  const headers: Record<string, string> = { date: new Date(nowMs).toUTCString(), ...reply.headers };
  if (contentType && payload !== undefined) headers['content-type'] = contentType;
  headers['content-length'] = String(payload === undefined ? 0 : Buffer.byteLength(payload));
  res.writeHead(reply.status, headers);
  res.end(req.method === 'HEAD' ? undefined : payload);
}

/** Reads the body up to `maxBytes`; throws 413 (and stops reading) past it. */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.reject(new HttpError(413, `the body is larger than ${maxBytes} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners('data');
        req.pause();
        reject(new HttpError(413, `the body is larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Options of {@link createEmulatorServer}. */
export interface EmulatorServerOptions {
  /** Called with errors no route expected (answered 500); default: ignored. */
  onError?: (error: unknown) => void;
  /** Answers `GET /` (an index of the URLs). */
  index: () => Reply;
}

/** Records a request in the admin API's request log (bounded by `requestLogSize`). */
function logRequest(
  emu: EmulatorContext,
  ctx: Pick<RequestContext, 'method' | 'url' | 'credential'>,
  status: number,
  fault: boolean,
): void {
  const { requests } = emu.state;
  requests.push({
    at: iso(emu.clock.now()),
    method: ctx.method,
    path: ctx.url.pathname,
    query: ctx.url.search,
    status,
    credential: ctx.credential,
    fault,
  });
  if (requests.length > emu.settings.requestLogSize) requests.splice(0, requests.length - emu.settings.requestLogSize);
}

/**
 * Plays an injected fault for this request, if one matches: a delay, then a reset or an error
 * status. Returns true when the fault answered (or cut) the request.
 */
async function playFault(emu: EmulatorContext, ctx: RequestContext, res: ServerResponse): Promise<boolean> {
  const { req, method, url, family } = ctx;
  const fault = emu.faults.take(method, url.pathname);
  if (!fault) return false;
  if (fault.delay_ms) await new Promise((resolve) => setTimeout(resolve, fault.delay_ms).unref());
  if (fault.reset) {
    logRequest(emu, ctx, 0, true);
    req.socket.destroy();
    return true;
  }
  if (fault.status === undefined) return false;
  const headers: Record<string, string> = {};
  if (fault.retry_after !== undefined) headers['retry-after'] = String(fault.retry_after);
  const reply = errorReply(family, new HttpError(fault.status, `injected fault: ${fault.status}`, { headers }));
  logRequest(emu, ctx, reply.status, true);
  // Drain what the client sends so the connection stays usable.
  req.resume();
  writeReply(req, res, reply, emu.clock.now());
  return true;
}

/** Routes a request in its family; every error becomes that family's error shape. */
async function route(ctx: RequestContext, routers: FamilyRouters, options: EmulatorServerOptions): Promise<Reply> {
  const { method, url, family } = ctx;
  try {
    if (!placeRequest(url.pathname)) fail(404, `no route for ${method} ${url.pathname}`);
    ctx.rawBody = await readBody(ctx.req, ctx.emu.settings.maxBodyBytes);
    const { handler, params } = routers[family].resolve(method, ctx.path);
    ctx.params = params;
    return await handler(ctx);
  } catch (error) {
    if (error instanceof HttpError) {
      const reply = errorReply(family, error);
      if (error.status === 413) reply.headers = { ...reply.headers, connection: 'close' };
      return reply;
    }
    options.onError?.(error);
    return errorReply(family, new HttpError(500, 'the emulator failed on this request'));
  }
}

async function handle(
  emu: EmulatorContext,
  routers: FamilyRouters,
  options: EmulatorServerOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const url = new URL(req.url ?? '/', 'http://emulator.invalid');
  if (url.pathname === '/' && (method === 'GET' || method === 'HEAD')) {
    writeReply(req, res, options.index(), emu.clock.now());
    return;
  }
  const placement = placeRequest(url.pathname) ?? { family: 'v1' as const, path: url.pathname };
  const ctx: RequestContext = {
    req,
    method,
    url,
    path: placement.path,
    params: {},
    rawBody: Buffer.alloc(0),
    family: placement.family,
    emu,
    credential: null,
  };
  if (placement.family !== 'admin' && (await playFault(emu, ctx, res))) return;
  const reply = await route(ctx, routers, options);
  if (placement.family !== 'admin') logRequest(emu, ctx, reply.status, false);
  writeReply(req, res, reply, emu.clock.now());
}

/** The node:http server of the emulator: placement, faults, body cap, routing, error shapes, request log. */
export function createEmulatorServer(emu: EmulatorContext, routers: FamilyRouters, options: EmulatorServerOptions): Server {
  const server = createServer((req, res) => {
    handle(emu, routers, options, req, res).catch((error: unknown) => {
      options.onError?.(error);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":"internal error"}');
      } else {
        res.destroy();
      }
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  // A client that sends garbage must not take the emulator down.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });
  return server;
}
