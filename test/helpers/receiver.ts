import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/** A request the receiver got, with the exact bytes of its body. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  rawBody: Buffer;
  json: any;
}

/** How the receiver answers: a status and an optional JSON body, or 'hang' to never answer. */
export type ReceiverAnswer = { status: number; json?: unknown } | 'hang';

/** A local HTTP server on 127.0.0.1:0 that records every request (a webhook or integration endpoint). */
export interface TestReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

const open: TestReceiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((receiver) => receiver.close()));
});

/** Starts a receiver; `answer` decides each response (default 200 `{}`). */
export async function startReceiver(
  answer: (request: ReceivedRequest, index: number) => ReceiverAnswer = () => ({ status: 200 }),
): Promise<TestReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        json = undefined;
      }
      const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody, json };
      requests.push(request);
      waiters.splice(0).forEach((wake) => wake());
      const reply = answer(request, requests.length - 1);
      if (reply === 'hang') return;
      const body = reply.json === undefined ? '' : JSON.stringify(reply.json);
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: TestReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${requests.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  open.push(receiver);
  return receiver;
}
