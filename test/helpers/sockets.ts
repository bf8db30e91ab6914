import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach } from 'vitest';

/*
 * Raw client sockets for the connection limits of the agent's servers, opened from a chosen source
 * address of 127.0.0.0/8 (every one of them is this machine's on Linux): a second address is a
 * second remote as the server sees it.
 */

/** A raw socket the test opened: whether the server has closed it yet. */
export interface HeldSocket {
  socket: Socket;
  /** Resolves when the socket is closed (by either side). */
  closed: Promise<void>;
  isClosed(): boolean;
}

const opened: Socket[] = [];
const floods: Array<() => void> = [];
afterEach(() => {
  for (const stop of floods.splice(0)) stop();
  for (const socket of opened.splice(0)) socket.destroy();
});

/** Opens a socket to `port` on 127.0.0.1 from `from`, writes `first` (if any) once connected, and resolves when it is connected. */
export function openSocket(port: number, from: string, first?: string): Promise<HeldSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    opened.push(socket);
    let isClosed = false;
    const closed = new Promise<void>((done) =>
      socket.once('close', () => {
        isClosed = true;
        done();
      }),
    );
    socket.on('error', () => undefined);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      if (first !== undefined) socket.write(first);
      resolve({ socket, closed, isClosed: () => isClosed });
    });
  });
}

/** Opens `count` sockets from `from`, one after another, each writing `first` (if any). */
export async function openSockets(port: number, from: string, count: number, first?: string): Promise<HeldSocket[]> {
  const sockets: HeldSocket[] = [];
  for (let i = 0; i < count; i += 1) sockets.push(await openSocket(port, from, first));
  return sockets;
}

/** Waits until `check()` holds, polling every 10 ms; throws after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A client that keeps `count` silent sockets open from `from`, opening a new one whenever one closes. */
export interface Flood {
  /** Sockets opened so far. */
  opened(): number;
  /** Sockets open now. */
  open(): number;
  stop(): void;
}

/**
 * Starts a flood: `count` sockets from `from` that send nothing, each reopened as soon as the
 * server closes it (after `reopenAfterMs`, so that a refusing server is not spun at 100% CPU).
 */
export function flood(port: number, from: string, count: number, reopenAfterMs = 5): Flood {
  let stopped = false;
  let total = 0;
  let live = 0;
  const keepOne = (): void => {
    if (stopped) return;
    total += 1;
    live += 1;
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    opened.push(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => {
      live -= 1;
      const index = opened.indexOf(socket);
      if (index >= 0) opened.splice(index, 1);
      if (!stopped) setTimeout(keepOne, reopenAfterMs);
    });
  };
  for (let i = 0; i < count; i += 1) keepOne();
  const stop = () => {
    stopped = true;
  };
  floods.push(stop);
  return { opened: () => total, open: () => live, stop };
}

/** What {@link sendOnFreshConnection} got. */
export interface FreshAnswer {
  /** The status, or the error's code when the connection was refused or reset. */
  status: number | string;
  /** The body, as text ('' for an error). */
  text: string;
  elapsedMs: number;
}

/**
 * One request on a connection of its own (no pool) from `from`, given up after `timeoutMs`, with
 * any headers (a `host` too, which fetch will not send); never rejects: a refused or reset
 * connection is its error code.
 */
export function sendOnFreshConnection(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; from?: string; timeoutMs?: number } = {},
): Promise<FreshAnswer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
        localAddress: options.from ?? '127.0.0.1',
        signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, text, elapsedMs: Date.now() - started }));
      },
    );
    req.once('error', (error: NodeJS.ErrnoException) => {
      resolve({ status: error.code ?? error.name, text: '', elapsedMs: Date.now() - started });
    });
    req.end(options.body);
  });
}
