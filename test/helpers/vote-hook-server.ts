import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { verifySignature } from './verify-signature.js';

/** One successful (2xx) call of a reward hook, in arrival order. */
export interface HookCall {
  /** The path after the host (`/hook/r3`: the tests put a run number in it). */
  path: string;
  /** The `idempotency-key` header (the vote key). */
  key: string;
  /** `vote.user_id` of the body. */
  userId: string;
  road: string;
}

/** Options of {@link startVoteHookServer}. */
export interface VoteHookServerOptions {
  /** The `authorization` header every call must carry. */
  authorization?: string;
  /** The hook secret every call must be signed with (`x-topgg-signature`). */
  secret?: string;
  /** Decides, per call, to fail it instead: 'error' answers 500, 'reset' destroys the socket. */
  fault?: () => 'error' | 'reset' | undefined;
  /** Awaited before a call is answered (and counted): holds the calls while a test sets something up. */
  hold?: () => Promise<void> | undefined;
}

/** A local reward hook that counts what reaches it. */
export interface VoteHookServer {
  url: string;
  /** Calls answered 2xx, in order. */
  calls: HookCall[];
  /** Calls failed on purpose (500 or reset). */
  faults: number;
  /** Calls whose authorization or signature was wrong, or whose body was not a vote (answered 401/400). */
  refused: string[];
  /** Successful calls per key. */
  counts(): Map<string, number>;
  close(): Promise<void>;
}

const open: VoteHookServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

/** Starts a counting reward hook on 127.0.0.1:0. */
export async function startVoteHookServer(options: VoteHookServerOptions = {}): Promise<VoteHookServer> {
  const calls: HookCall[] = [];
  const refused: string[] = [];
  let faults = 0;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      await options.hold?.();
      const rawBody = Buffer.concat(chunks);
      const fault = options.fault?.();
      if (fault === 'reset') {
        faults += 1;
        req.socket.destroy();
        return;
      }
      if (fault === 'error') {
        faults += 1;
        res.writeHead(500).end();
        return;
      }
      const key = String(req.headers['idempotency-key'] ?? '');
      if (options.authorization !== undefined && req.headers.authorization !== options.authorization) {
        refused.push(`${key}: wrong authorization`);
        res.writeHead(401).end();
        return;
      }
      if (options.secret !== undefined && !verifySignature({ headers: req.headers, rawBody }, options.secret).valid) {
        refused.push(`${key}: bad signature`);
        res.writeHead(401).end();
        return;
      }
      let body: { key?: string; vote?: { user_id?: string; road?: string } };
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        refused.push(`${key}: body is not JSON`);
        res.writeHead(400).end();
        return;
      }
      if (body.key !== key || typeof body.vote?.user_id !== 'string') {
        refused.push(`${key}: body is not a vote of that key`);
        res.writeHead(400).end();
        return;
      }
      calls.push({ path: req.url ?? '', key, userId: body.vote.user_id, road: String(body.vote.road) });
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const hook: VoteHookServer = {
    url: `http://127.0.0.1:${port}/hook`,
    calls,
    get faults() {
      return faults;
    },
    refused,
    counts() {
      const counts = new Map<string, number>();
      for (const call of calls) counts.set(call.key, (counts.get(call.key) ?? 0) + 1);
      return counts;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  open.push(hook);
  return hook;
}
