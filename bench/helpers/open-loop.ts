/**
 * An open-loop HTTP/1.1 sender for bench/latency.bench.ts: requests go out on a schedule set by
 * the clock (`rate` per second), whether or not earlier ones were answered, so that a server that
 * falls behind shows it as queueing (growing latency) instead of slowing the sender down, as a
 * closed loop (autocannon's connections, each waiting for its answer) would.
 *
 * Raw `node:net` sockets, keep-alive, no pipelining: one request in flight per connection. A
 * request due while every open connection is busy gets a new connection (up to `maxConnections`;
 * beyond that it waits for the first connection to free up, and its lateness is reported). A
 * number of connections is opened before the clock starts, so that connecting is not measured.
 *
 * Per request: `sentNs` is `process.hrtime.bigint()` just before its bytes (head and body in one
 * write) go to the socket, i.e. its first byte; `answeredNs` when its status line came back. The
 * monotonic clock is one for every process of the machine, so the server can stamp events with
 * the same clock. Timing is read in one place per event; the sender does nothing else in between.
 */
import { connect, type Socket } from 'node:net';

export interface OpenLoopRequest {
  /** The whole request (head and body). */
  bytes: Buffer;
}

export interface OpenLoopResult {
  /** Per request, in the order of the schedule: first byte written (ns), or 0n if never sent. */
  sentNs: BigInt64Array;
  /** Per request: status line received (ns), or 0n if never answered. */
  answeredNs: BigInt64Array;
  /** Per request: the status code, 0 if never answered. */
  status: Uint16Array;
  /** Per request: how late its first byte went out against its slot on the schedule (ns). */
  lateNs: BigInt64Array;
  /** Connections opened over the run (the pre-opened ones included). */
  connections: number;
  /** Connection errors (each fails the requests in flight on it). */
  errors: number;
  /** Seconds from the first slot to the last request sent. */
  sendSeconds: number;
  /** The sender's own CPU over the run, in percent of one core. */
  senderCpuPercent: number;
}

interface Connection {
  socket: Socket;
  /** Index of the request in flight, or -1. */
  inFlight: number;
  buffered: Buffer;
}

/** Status code and total length of the first response in `data`, or undefined when incomplete. */
function parseResponse(data: Buffer): { status: number; length: number } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = data.toString('latin1', 0, end);
  const status = Number(head.slice(9, 12));
  const match = /\r\ncontent-length: *(\d+)/i.exec(head);
  const bodyLength = match ? Number(match[1]) : 0;
  const length = end + 4 + bodyLength;
  return data.length >= length ? { status, length } : undefined;
}

/**
 * Sends `requests` to `host:port` at `rate` per second (slot `i` at `i / rate` s after the start)
 * and resolves once every request is answered or failed, or `drainMs` after the last send.
 */
export async function openLoop(options: {
  host: string;
  port: number;
  requests: readonly OpenLoopRequest[];
  rate: number;
  /** Connections opened before the clock starts. */
  preopen: number;
  maxConnections: number;
  drainMs: number;
}): Promise<OpenLoopResult> {
  const { host, port, requests, rate, maxConnections, drainMs } = options;
  const total = requests.length;
  const sentNs = new BigInt64Array(total);
  const answeredNs = new BigInt64Array(total);
  const status = new Uint16Array(total);
  const lateNs = new BigInt64Array(total);
  const idle: Connection[] = [];
  const all: Connection[] = [];
  const waiting: number[] = [];
  let opened = 0;
  let errors = 0;
  let answered = 0;
  let next = 0;
  let startNs = 0n;
  let lastSendNs = 0n;
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const slotNs = (index: number) => startNs + BigInt(Math.round((index * 1e9) / rate));

  function send(connection: Connection, index: number): void {
    connection.inFlight = index;
    const now = process.hrtime.bigint();
    sentNs[index] = now;
    lastSendNs = now;
    lateNs[index] = now - slotNs(index);
    connection.socket.write((requests[index] as OpenLoopRequest).bytes);
  }

  function settle(): void {
    if (answered === total) finish();
  }

  function release(connection: Connection): void {
    const queued = waiting.shift();
    if (queued !== undefined) send(connection, queued);
    else idle.push(connection);
  }

  function open(): Promise<Connection> {
    opened += 1;
    const socket = connect({ host, port, noDelay: true });
    const connection: Connection = { socket, inFlight: -1, buffered: Buffer.alloc(0) };
    all.push(connection);
    socket.on('data', (chunk: Buffer) => {
      const at = process.hrtime.bigint();
      connection.buffered = connection.buffered.length === 0 ? chunk : Buffer.concat([connection.buffered, chunk]);
      for (;;) {
        const response = parseResponse(connection.buffered);
        if (response === undefined) break;
        connection.buffered = connection.buffered.subarray(response.length);
        const index = connection.inFlight;
        if (index < 0) continue; // not ours: ignored
        connection.inFlight = -1;
        answeredNs[index] = at;
        status[index] = response.status;
        answered += 1;
        release(connection);
      }
      settle();
    });
    const failed = () => {
      const index = connection.inFlight;
      connection.inFlight = -1;
      const at = idle.indexOf(connection);
      if (at >= 0) idle.splice(at, 1);
      if (index >= 0) {
        errors += 1;
        answered += 1; // failed: counted as done, status 0
        settle();
      }
    };
    socket.on('error', failed);
    socket.on('close', failed);
    return new Promise((resolve, reject) => {
      socket.once('connect', () => resolve(connection));
      socket.once('error', reject);
    });
  }

  for (const connection of await Promise.all(Array.from({ length: options.preopen }, () => open()))) idle.push(connection);

  const cpuBefore = process.cpuUsage();
  startNs = process.hrtime.bigint();
  await new Promise<void>((resolve) => {
    // Every millisecond or so (a timer's resolution), send every request whose slot has come.
    const tick = () => {
      const now = process.hrtime.bigint();
      while (next < total && slotNs(next) <= now) {
        const index = next++;
        const connection = idle.pop();
        if (connection) send(connection, index);
        else if (opened < maxConnections) {
          void open().then(
            (fresh) => send(fresh, index),
            () => {
              errors += 1;
              answered += 1; // never sent: status 0
              settle();
            },
          );
        }
        else waiting.push(index);
      }
      if (next < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  const drainTimer = setTimeout(finish, drainMs);
  settle();
  await finished;
  clearTimeout(drainTimer);
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = Number(process.hrtime.bigint() - startNs) / 1e6;
  for (const connection of all) connection.socket.destroy();
  return {
    sentNs,
    answeredNs,
    status,
    lateNs,
    connections: opened,
    errors,
    sendSeconds: Number(lastSendNs - startNs) / 1e9,
    senderCpuPercent: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
  };
}
