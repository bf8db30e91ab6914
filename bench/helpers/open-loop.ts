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

/** Options of {@link openLoop}. */
export interface OpenLoopOptions {
  host: string;
  port: number;
  requests: readonly OpenLoopRequest[];
  rate: number;
  /** Connections opened before the clock starts. */
  preopen: number;
  maxConnections: number;
  drainMs: number;
}

/** One run of the sender: the schedule, the connections and what each request met. */
class Sender {
  readonly sentNs: BigInt64Array;
  readonly answeredNs: BigInt64Array;
  readonly status: Uint16Array;
  readonly lateNs: BigInt64Array;
  private readonly idle: Connection[] = [];
  private readonly all: Connection[] = [];
  private readonly waiting: number[] = [];
  opened = 0;
  errors = 0;
  private answered = 0;
  private next = 0;
  startNs = 0n;
  lastSendNs = 0n;
  private finish: () => void = () => {};
  readonly finished = new Promise<void>((resolve) => (this.finish = resolve));

  constructor(private readonly options: OpenLoopOptions) {
    const total = options.requests.length;
    this.sentNs = new BigInt64Array(total);
    this.answeredNs = new BigInt64Array(total);
    this.status = new Uint16Array(total);
    this.lateNs = new BigInt64Array(total);
  }

  private slotNs(index: number): bigint {
    return this.startNs + BigInt(Math.round((index * 1e9) / this.options.rate));
  }

  async preopen(): Promise<void> {
    for (const connection of await Promise.all(Array.from({ length: this.options.preopen }, () => this.open()))) this.idle.push(connection);
  }

  /** Sends every request whose slot has come; false once the last one is out. */
  tick(): boolean {
    const now = process.hrtime.bigint();
    const total = this.options.requests.length;
    while (this.next < total && this.slotNs(this.next) <= now) {
      const index = this.next++;
      const connection = this.idle.pop();
      if (connection) this.send(connection, index);
      else if (this.opened < this.options.maxConnections) {
        void this.open().then(
          (fresh) => this.send(fresh, index),
          () => this.done(0n, 0, true), // never sent: status 0
        );
      } else this.waiting.push(index);
    }
    return this.next < total;
  }

  /** Resolves `finished` once every request is answered or failed. */
  settle(): void {
    if (this.answered === this.options.requests.length) this.finish();
  }

  close(): void {
    this.finish();
    for (const connection of this.all) connection.socket.destroy();
  }

  private send(connection: Connection, index: number): void {
    connection.inFlight = index;
    const now = process.hrtime.bigint();
    this.sentNs[index] = now;
    this.lastSendNs = now;
    this.lateNs[index] = now - this.slotNs(index);
    connection.socket.write((this.options.requests[index] as OpenLoopRequest).bytes);
  }

  private done(at: bigint, index: number, failed: boolean, status = 0): void {
    if (failed) this.errors += 1;
    else {
      this.answeredNs[index] = at;
      this.status[index] = status;
    }
    this.answered += 1;
    this.settle();
  }

  /** A free connection takes the oldest request waiting for one, or waits itself. */
  private release(connection: Connection): void {
    const queued = this.waiting.shift();
    if (queued !== undefined) this.send(connection, queued);
    else this.idle.push(connection);
  }

  private onData(connection: Connection, chunk: Buffer): void {
    const at = process.hrtime.bigint();
    connection.buffered = connection.buffered.length === 0 ? chunk : Buffer.concat([connection.buffered, chunk]);
    for (;;) {
      const response = parseResponse(connection.buffered);
      if (response === undefined) break;
      connection.buffered = connection.buffered.subarray(response.length);
      const index = connection.inFlight;
      if (index < 0) continue; // not ours: ignored
      connection.inFlight = -1;
      this.done(at, index, false, response.status);
      this.release(connection);
    }
  }

  /** The connection failed or closed: the request on it (if any) failed, status 0. */
  private onFailure(connection: Connection): void {
    const index = connection.inFlight;
    connection.inFlight = -1;
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    if (index >= 0) this.done(0n, index, true);
  }

  private open(): Promise<Connection> {
    this.opened += 1;
    const socket = connect({ host: this.options.host, port: this.options.port, noDelay: true });
    const connection: Connection = { socket, inFlight: -1, buffered: Buffer.alloc(0) };
    this.all.push(connection);
    socket.on('data', (chunk: Buffer) => this.onData(connection, chunk));
    socket.on('error', () => this.onFailure(connection));
    socket.on('close', () => this.onFailure(connection));
    return new Promise((resolve, reject) => {
      socket.once('connect', () => resolve(connection));
      socket.once('error', reject);
    });
  }
}

/**
 * Sends `requests` to `host:port` at `rate` per second (slot `i` at `i / rate` s after the start)
 * and resolves once every request is answered or failed, or `drainMs` after the last send.
 */
export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const sender = new Sender(options);
  await sender.preopen();
  const cpuBefore = process.cpuUsage();
  sender.startNs = process.hrtime.bigint();
  // Every millisecond or so (a timer's resolution), send every request whose slot has come.
  await new Promise<void>((resolve) => {
    const tick = () => (sender.tick() ? setTimeout(tick, 1) : resolve());
    tick();
  });
  const drainTimer = setTimeout(() => sender.close(), options.drainMs);
  sender.settle();
  await sender.finished;
  clearTimeout(drainTimer);
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = Number(process.hrtime.bigint() - sender.startNs) / 1e6;
  sender.close();
  return {
    sentNs: sender.sentNs,
    answeredNs: sender.answeredNs,
    status: sender.status,
    lateNs: sender.lateNs,
    connections: sender.opened,
    errors: sender.errors,
    sendSeconds: Number(sender.lastSendNs - sender.startNs) / 1e9,
    senderCpuPercent: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
  };
}
