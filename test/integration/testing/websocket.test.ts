import { once } from 'node:events';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startWebSocketServer, type LocalWebSocket, type LocalWebSocketServer } from '../../../src/testing/websocket.js';

/*
 * The fake gateway's own WebSocket server (src/testing/websocket.ts, RFC 6455 on node:net), with
 * the `ws` client the Discord libraries use and with raw sockets for what no client sends.
 */

const servers: LocalWebSocketServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A server that echoes each message back, as text or binary as it came. */
async function echoServer(): Promise<{ url: string; closes: number[] }> {
  const closes: number[] = [];
  const server = await startWebSocketServer((socket: LocalWebSocket) => {
    socket.onMessage = (data, isBinary) => socket.send(isBinary ? data : data.toString('utf8'));
    socket.onClose = (code) => void closes.push(code);
  });
  servers.push(server);
  return { url: `ws://127.0.0.1:${server.port}/`, closes };
}

describe('the WebSocket server of the testing kit', () => {
  it('echoes text, binary, a large and a fragmented message; answers a ping; ends with the close code', async () => {
    const { url, closes } = await echoServer();
    const socket = new WebSocket(url);
    await once(socket, 'open');
    const next = () => once(socket, 'message') as Promise<[Buffer, boolean]>;
    socket.send('hello');
    expect((await next()).map(String)).toEqual(['hello', 'false']);
    socket.send(Buffer.from([1, 2, 3]));
    const [binary, isBinary] = await next();
    expect([...binary, isBinary]).toEqual([1, 2, 3, true]);
    const large = 'x'.repeat(70_000);
    socket.send(large);
    expect(String((await next())[0])).toBe(large);
    socket.send('frag', { fin: false });
    socket.send('mented', { fin: true });
    expect(String((await next())[0])).toBe('fragmented');
    socket.ping('p');
    expect(String((await once(socket, 'pong'))[0])).toBe('p');
    socket.close(4321, 'bye');
    expect((await once(socket, 'close'))[0]).toBe(4321);
    await expect.poll(() => closes).toEqual([4321]);
  });

  it('refuses a plain HTTP request with 426, and closes a connection that sends an unmasked frame with 1002', async () => {
    const { url } = await echoServer();
    const port = Number(new URL(url).port);
    const plain = await fetch(url.replace('ws:', 'http:'));
    expect(plain.status).toBe(426);
    expect(await plain.text()).toContain('it speaks WebSocket only');

    const raw = connect({ host: '127.0.0.1', port });
    await once(raw, 'connect');
    let received = Buffer.alloc(0);
    raw.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    raw.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    // An unmasked text frame "hi".
    raw.write(Buffer.from([0x81, 0x02, 0x68, 0x69]));
    await once(raw, 'close');
    const text = received.toString('latin1');
    expect(text).toContain('HTTP/1.1 101 Switching Protocols');
    expect(text).toContain('sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
    const frame = received.subarray(received.indexOf('\r\n\r\n') + 4);
    expect([frame[0], frame.readUInt16BE(2)]).toEqual([0x88, 1002]);
  });
});
