import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/*
 * A listing service gone wrong (issue 34, item 5: a compromised or buggy service), on 127.0.0.1:
 * just enough of v1 for an agent to start (`GET /projects/@me`) and poll its votes cursor, with
 * the pages and the project the test chooses, however hostile. It records every request it gets.
 */

/** A Snowflake-shaped ID (19 digits) numbered `n`. */
export const snowflake = (n: number): string => String(1_300_000_000_000_000_000n + BigInt(n));

/** What the fake service holds. */
export interface HostileService {
  v1: string;
  v0: string;
  /** A project token (JWT-shaped) whose payload names {@link HostileService.platformId}. */
  token: string;
  /** The project's service ID (what `GET /projects/@me` answers). */
  projectId: string;
  /** The project's platform ID (the bot's application Snowflake, in the token). */
  platformId: string;
  /** Every request's method and URL, in order (`GET /v1/projects/@me/votes?cursor=c1`). */
  requests: string[];
  close(): Promise<void>;
}

/** Options of {@link startHostileService}. */
export interface HostileServiceOptions {
  /**
   * The `data` of each page of the votes cursor, in order: the first request (a `startDate`) gets
   * page 0 with cursor `c1`, `?cursor=c1` page 1 with `c2`, ...; past the last, an empty page.
   */
  pages?: unknown[][];
  /** Fields of `GET /projects/@me` over the usual ones (a `name` with control characters). */
  project?: Record<string, unknown>;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((service) => service.close()));
});

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function answer(res: ServerResponse, status: number, body: unknown): void {
  const type = status >= 400 ? 'application/problem+json' : 'application/json';
  res.writeHead(status, { 'content-type': type, date: new Date().toUTCString() }).end(JSON.stringify(body));
}

/** Starts the fake service on 127.0.0.1:0; it closes after the test. */
export async function startHostileService(options: HostileServiceOptions = {}): Promise<HostileService> {
  const projectId = snowflake(1);
  const platformId = snowflake(2);
  const pages = options.pages ?? [];
  const requests: string[] = [];
  const project = {
    id: projectId,
    name: 'Hostile Bot',
    platform: 'discord',
    type: 'bot',
    headline: 'a listing',
    tags: [],
    votes: 0,
    votes_total: 0,
    review_score: 0,
    review_count: 0,
    ...options.project,
  };
  const server = createServer((req: IncomingMessage, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/v1/projects/@me') return answer(res, 200, project);
    if (req.method === 'GET' && url.pathname === '/v1/projects/@me/votes') {
      const cursor = url.searchParams.get('cursor');
      const index = cursor === null ? 0 : Number(cursor.slice(1));
      if (cursor !== null && !/^c\d+$/.test(cursor)) return answer(res, 400, { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'bad cursor' });
      const data = pages[index] ?? [];
      return answer(res, 200, { cursor: data.length === 0 ? `c${index}` : `c${index + 1}`, data });
    }
    return answer(res, 404, { type: 'about:blank', title: 'Not Found', status: 404, detail: `no ${url.pathname} here` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ id: platformId, bot: true, iat: 1_700_000_000 })}.c2lnbmF0dXJl`;
  const service: HostileService = {
    v1: `${origin}/v1`,
    v0: `${origin}/v0`,
    token,
    projectId,
    platformId,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  open.push(service);
  return service;
}

/** One body a reward hook was called with. */
export interface RecordedHookCall {
  type: string;
  key: string;
  vote: Record<string, unknown>;
}

/** An http reward hook on 127.0.0.1:0 that answers 204 and keeps every body. */
export async function startRecordingHook(): Promise<{ url: string; calls: RecordedHookCall[] }> {
  const calls: RecordedHookCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      calls.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as RecordedHookCall);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/reward`, calls };
}
