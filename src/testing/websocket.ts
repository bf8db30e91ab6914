import { createHash } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';

/*
 * The smallest WebSocket server (RFC 6455) the fake Discord gateway needs, on node:net alone so
 * that it runs alike on Node, Bun and Deno, and the package gains no dependency: the HTTP/1.1
 * upgrade, text and binary frames (fragmented ones too), ping/pong and the close handshake. No
 * extension is accepted (a client offering permessage-deflate talks without it), no subprotocol.
 */

const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** A request head larger than this is no WebSocket upgrade of a Discord library. */
const MAX_HEAD_BYTES = 16 * 1024;
/** A message larger than this closes the connection with 1009 (Discord's own limit is 4096 bytes). */
const MAX_MESSAGE_BYTES = 1024 * 1024;
/** How long a close waits for the client's close frame before the socket is destroyed. */
const CLOSE_WAIT_MS = 1_000;

/** The upgrade request of a connection: its path with query, and its headers (lower-case names). */
export interface UpgradeRequest {
  url: string;
  headers: Readonly<Record<string, string>>;
}

/** One frame read off the wire. */
interface Frame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
}

/** Reads one frame at the start of `buffer`: the frame and its length, or undefined when incomplete. */
function readFrame(buffer: Buffer): { frame: Frame; size: number } | 'unmasked' | undefined {
  if (buffer.length < 2) return undefined;
  const first = buffer[0]!;
  const second = buffer[1]!;
  if ((second & 0x80) === 0) return 'unmasked';
  let length = second & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return undefined;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return undefined;
    length = Number(buffer.readBigUInt64BE(2));
    offset = 10;
  }
  if (buffer.length < offset + 4 + length) return undefined;
  const mask = buffer.subarray(offset, offset + 4);
  const payload = Buffer.from(buffer.subarray(offset + 4, offset + 4 + length));
  for (let i = 0; i < payload.length; i += 1) payload[i] = payload[i]! ^ mask[i % 4]!;
  return { frame: { fin: (first & 0x80) !== 0, opcode: first & 0x0f, payload }, size: offset + 4 + length };
}

/** A frame from the server: never masked. */
function frameBytes(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const head = length < 126 ? Buffer.alloc(2) : length < 65_536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode;
  if (length < 126) head[1] = length;
  else if (length < 65_536) {
    head[1] = 126;
    head.writeUInt16BE(length, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([head, payload]);
}

/** One accepted WebSocket connection. */
export class LocalWebSocket {
  /** Called with each whole message. */
  onMessage: ((data: Buffer, isBinary: boolean) => void) | undefined;
  /** Called once when the connection ended, with the close code (1006 when no close frame came). */
  onClose: ((code: number) => void) | undefined;
  readonly #socket: Socket;
  #buffer: Buffer = Buffer.alloc(0);
  #fragments: Buffer[] = [];
  #fragmentsBinary = false;
  #state: 'open' | 'closing' | 'closed' = 'open';
  #closeCode = 1006;
  #closeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(socket: Socket, head: Buffer) {
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('close', () => this.#ended());
    // A reset by the client ends the connection ('close' follows); nothing to report.
    socket.on('error', () => undefined);
    if (head.length > 0) this.#receive(head);
  }

  /** Whether messages can still be sent. */
  get isOpen(): boolean {
    return this.#state === 'open';
  }

  /** Sends a text message (a string) or a binary one (a Buffer); nothing once closing. */
  send(data: string | Buffer): void {
    if (this.#state !== 'open') return;
    this.#socket.write(typeof data === 'string' ? frameBytes(0x1, Buffer.from(data, 'utf8')) : frameBytes(0x2, data));
  }

  /** Starts the close handshake with `code` and `reason` (cut to the 123 bytes a close frame holds). */
  close(code = 1000, reason = ''): void {
    if (this.#state !== 'open') return;
    this.#state = 'closing';
    this.#closeCode = code;
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code, 0);
    this.#socket.write(frameBytes(0x8, Buffer.concat([payload, Buffer.from(reason, 'utf8').subarray(0, 123)])));
    this.#closeTimer = setTimeout(() => this.#socket.destroy(), CLOSE_WAIT_MS);
    this.#closeTimer.unref?.();
  }

  /** Drops the connection without a close frame. */
  terminate(): void {
    this.#socket.destroy();
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const read = readFrame(this.#buffer);
      if (read === undefined) return;
      // RFC 6455 5.1: a client's frames are masked; an unmasked one is a protocol error.
      if (read === 'unmasked') return this.#fail(1002, 'A client frame must be masked.');
      this.#buffer = this.#buffer.subarray(read.size);
      this.#frame(read.frame);
      if (this.#state === 'closed') return;
    }
  }

  #frame({ fin, opcode, payload }: Frame): void {
    if (opcode === 0x8) return this.#peerClosed(payload);
    if (opcode === 0x9) return void this.#socket.write(frameBytes(0xa, payload));
    if (opcode === 0xa) return;
    if (opcode !== 0x0 && opcode !== 0x1 && opcode !== 0x2) return this.#fail(1002, `Unknown WebSocket opcode ${opcode}.`);
    if (opcode !== 0x0) {
      this.#fragments = [];
      this.#fragmentsBinary = opcode === 0x2;
    }
    this.#fragments.push(payload);
    if (this.#fragments.reduce((sum, part) => sum + part.length, 0) > MAX_MESSAGE_BYTES) return this.#fail(1009, 'Message too big.');
    if (!fin) return;
    const message = Buffer.concat(this.#fragments.splice(0));
    if (this.#state === 'open') this.onMessage?.(message, this.#fragmentsBinary);
  }

  #peerClosed(payload: Buffer): void {
    const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
    if (this.#state === 'open') {
      this.#state = 'closing';
      this.#closeCode = code;
      this.#socket.write(frameBytes(0x8, payload.subarray(0, 2)));
    }
    this.#socket.end();
  }

  #fail(code: number, reason: string): void {
    this.close(code, reason);
    this.#socket.end();
  }

  #ended(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    clearTimeout(this.#closeTimer);
    this.onClose?.(this.#closeCode);
  }
}

/** A listening WebSocket server. */
export interface LocalWebSocketServer {
  port: number;
  /** Stops listening and drops every connection. */
  close(): Promise<void>;
}

/** Parses a request head (`GET /path HTTP/1.1` and headers), or undefined when it is no HTTP request. */
function parseHead(text: string): { method: string; url: string; headers: Record<string, string> } | undefined {
  const [requestLine, ...lines] = text.split('\r\n');
  const match = /^(\S+) (\S+) HTTP\/1\.1$/.exec(requestLine ?? '');
  if (!match) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { method: match[1]!, url: match[2]!, headers };
}

/** Answers a request that is no WebSocket upgrade with `status` and a sentence saying why. */
function refuse(socket: Socket, status: string, sentence: string): void {
  const body = `${sentence}\n`;
  const head = `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close`;
  socket.end(`${head}\r\n\r\n${body}`);
}

/** Completes the upgrade of `socket` whose head is `text`; the connection, or undefined when refused. */
function upgrade(socket: Socket, text: string, rest: Buffer): { ws: LocalWebSocket; request: UpgradeRequest } | undefined {
  const head = parseHead(text);
  const key = head?.headers['sec-websocket-key'];
  if (!head || head.method !== 'GET' || head.headers.upgrade?.toLowerCase() !== 'websocket' || !key) {
    refuse(socket, '426 Upgrade Required', 'This is the fake Discord gateway: it speaks WebSocket only (GET with Upgrade: websocket).');
    return undefined;
  }
  if (head.headers['sec-websocket-version'] !== '13') {
    socket.end('HTTP/1.1 426 Upgrade Required\r\nsec-websocket-version: 13\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    return undefined;
  }
  const accept = createHash('sha1').update(`${key}${ACCEPT_GUID}`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`);
  return { ws: new LocalWebSocket(socket, rest), request: { url: head.url, headers: head.headers } };
}

/** Reads the request head off `socket`, then hands the upgraded connection to `onConnection`. */
function acceptConnection(socket: Socket, onConnection: (ws: LocalWebSocket, request: UpgradeRequest) => void): void {
  let received = Buffer.alloc(0);
  socket.on('error', () => undefined);
  const onData = (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    const end = received.indexOf('\r\n\r\n');
    if (end === -1) {
      if (received.length > MAX_HEAD_BYTES) refuse(socket, '431 Request Header Fields Too Large', 'The request head is too large.');
      return;
    }
    socket.off('data', onData);
    const accepted = upgrade(socket, received.subarray(0, end).toString('latin1'), received.subarray(end + 4));
    if (accepted) onConnection(accepted.ws, accepted.request);
  };
  socket.on('data', onData);
}

/** Starts a WebSocket server on `host` (default 127.0.0.1) and `port` (default 0, any free one). */
export async function startWebSocketServer(
  onConnection: (ws: LocalWebSocket, request: UpgradeRequest) => void,
  options: { host?: string; port?: number } = {},
): Promise<LocalWebSocketServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    acceptConnection(socket, onConnection);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
