import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/agent-logger.js';
import { ListenError } from '../../../src/http/listen-error.js';
import { createLocalServer, type LocalServer, type LocalServerOptions } from '../../../src/http/local-server.js';
import { freePort } from '../../helpers/ports.js';
import { openSocket, openSockets, sendOnFreshConnection, until } from '../../helpers/sockets.js';

/**
 * The local server (health, push endpoint, webhook receiver) is started and stopped any number of
 * times: a leader that steps down and leads again starts the same server anew, so each start
 * must listen on a fresh node server with the same guarantees (timeouts, bad bytes answered, the
 * connection cap, a graceful stop that lets requests in flight finish).
 */

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** A server answering `run <n>` (n = how many requests it saw), or holding a request open until `release()`. */
function makeServer(port: number, extra: Partial<LocalServerOptions> = {}) {
  let seen = 0;
  const held: (() => void)[] = [];
  const server = createLocalServer({
    what: 'test server',
    listen: { host: '127.0.0.1', port },
    setting: { path: 'test.listen', env: 'TEST_LISTEN' },
    logger: silentLogger,
    handler: (req, res) => {
      seen += 1;
      const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`seen ${seen}`);
      if (req.url === '/slow') held.push(answer);
      else answer();
    },
    ...extra,
  });
  servers.push(server);
  return { server, release: () => held.splice(0).forEach((answer) => answer()), held };
}

/** GET on a connection of its own (no pool: a pooled socket would outlive a stop). */
function get(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Raw bytes to `port`; resolves with what the server wrote before it closed. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (reply += chunk));
    socket.on('close', () => resolve(reply));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe('createLocalServer: start, stop, start again', () => {
  it('listens again on the same port after a stop, any number of times', async () => {
    const port = await freePort();
    const { server } = makeServer(port);
    for (let round = 1; round <= 3; round += 1) {
      expect(await server.start()).toBe(`http://127.0.0.1:${port}`);
      expect(await get(`http://127.0.0.1:${port}/`)).toMatchObject({ status: 200 });
      await server.stop();
      await expect(get(`http://127.0.0.1:${port}/`)).rejects.toThrow(/ECONNREFUSED/);
    }
  });

  it('with port 0, each start reports the port it really listens on', async () => {
    const { server } = makeServer(0);
    const first = await server.start();
    await server.stop();
    const second = await server.start();
    expect((await get(`${second}/`)).status).toBe(200);
    if (second !== first) await expect(get(`${first}/`)).rejects.toThrow();
  });

  it('a start called while a stop is under way listens once that stop is done', async () => {
    const port = await freePort();
    const { server } = makeServer(port);
    await server.start();
    const stopping = server.stop();
    const again = server.start();
    await stopping;
    expect(await again).toBe(`http://127.0.0.1:${port}`);
    expect((await get(`http://127.0.0.1:${port}/`)).status).toBe(200);
    // A second start meanwhile shares the listening one.
    expect(await server.start()).toBe(`http://127.0.0.1:${port}`);
  });

  it('stop, start, stop: the last call wins, and the start that waited is called off', async () => {
    const port = await freePort();
    const { server } = makeServer(port);
    await server.start();
    const stopping = server.stop();
    const again = server.start();
    const stoppedAgain = server.stop();
    await expect(again).rejects.toThrow('stopped again before it could listen');
    await Promise.all([stopping, stoppedAgain]);
    await expect(get(`http://127.0.0.1:${port}/`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('a stop during a listen waits for it and closes it, and a start after that listens again', async () => {
    const port = await freePort();
    const { server } = makeServer(port);
    const starting = server.start();
    await server.stop();
    expect(await starting).toBe(`http://127.0.0.1:${port}`);
    await expect(get(`http://127.0.0.1:${port}/`)).rejects.toThrow(/ECONNREFUSED/);
    await server.start();
    expect((await get(`http://127.0.0.1:${port}/`)).status).toBe(200);
  });

  it('after a failed listen (port taken), the next start tries again', async () => {
    const port = await freePort();
    const taker = makeServer(port);
    await taker.server.start();
    const { server } = makeServer(port);
    await expect(server.start()).rejects.toBeInstanceOf(ListenError);
    await taker.server.stop();
    expect(await server.start()).toBe(`http://127.0.0.1:${port}`);
    expect((await get(`http://127.0.0.1:${port}/`)).status).toBe(200);
  });

  it('the second run keeps the guarantees: graceful drain, in-flight count, bad bytes, connection cap', async () => {
    const port = await freePort();
    const { server, release, held } = makeServer(port, { maxConnections: 2 });
    await server.start();
    await server.stop();
    await server.start();

    // A request in flight at a graceful stop is answered before the port closes.
    const slow = get(`http://127.0.0.1:${port}/slow`);
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(server.inFlight()).toBe(1);
    const stopping = server.stop({ deadline: Date.now() + 5_000 });
    setTimeout(release, 50);
    expect((await slow).status).toBe(200);
    await stopping;
    expect(server.inFlight()).toBe(0);

    await server.start();
    // Garbage is answered 400, not a crash.
    expect(await raw(port, 'NOT HTTP AT ALL\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
    // The cap: two open connections, a third is closed before a byte is read.
    const open = [connect(port, '127.0.0.1'), connect(port, '127.0.0.1')];
    await Promise.all(open.map((socket) => new Promise((resolve) => socket.once('connect', resolve))));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await raw(port, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n')).toBe('');
    for (const socket of open) socket.destroy();
  });
});

describe('createLocalServer: connection limits (issue 34)', () => {
  it('refuses an address over its cap while another address is served', async () => {
    const { server } = makeServer(0, { maxConnections: 8, maxConnectionsPerAddress: 2 });
    const url = await server.start();
    const port = Number(new URL(url).port);
    // Two connections from 127.0.0.2 that each sent a byte (so no timeout of silence applies to them).
    const held = await openSockets(port, '127.0.0.2', 2, 'G');
    const third = await openSocket(port, '127.0.0.2', 'G');
    await third.closed;
    expect(held.map((socket) => socket.isClosed())).toEqual([false, false]);
    expect(await sendOnFreshConnection(`${url}/`, { from: '127.0.0.2' })).toMatchObject({ status: 'ECONNRESET' });
    expect(await sendOnFreshConnection(`${url}/`, { from: '127.0.0.1' })).toMatchObject({ status: 200 });
    // Once one of its connections closes, the address is served again.
    held[0]!.socket.destroy();
    const served = async () => (await sendOnFreshConnection(`${url}/`, { from: '127.0.0.2' })).status === 200;
    await until(served, 'the address to be served again');
  });

  it('closes a connection that sends no byte within timeouts.firstByteMs, and keeps one that has begun its request', async () => {
    const { server } = makeServer(0, { timeouts: { firstByteMs: 150, headersMs: 5_000 } });
    const port = Number(new URL(await server.start()).port);
    const silent = await openSocket(port, '127.0.0.1');
    const talking = await openSocket(port, '127.0.0.1', 'GET / HT');
    const started = Date.now();
    await silent.closed;
    expect(Date.now() - started).toBeLessThan(2_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(talking.isClosed()).toBe(false);
    let answer = '';
    talking.socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    talking.socket.write('TP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    await talking.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('at the cap, a new connection closes the oldest one that has sent nothing; with none silent, the new one is refused', async () => {
    const { server } = makeServer(0, { maxConnections: 4, maxConnectionsPerAddress: 4 });
    const url = await server.start();
    const port = Number(new URL(url).port);
    const silent = await openSockets(port, '127.0.0.2', 4);
    expect(await sendOnFreshConnection(`${url}/`, { from: '127.0.0.1' })).toMatchObject({ status: 200 });
    await silent[0]!.closed;
    expect(silent.slice(1).map((socket) => socket.isClosed())).toEqual([false, false, false]);

    // Four keep-alive connections that have each had a request answered: none is silent.
    const other = makeServer(0, { maxConnections: 4, maxConnectionsPerAddress: 4 }).server;
    const otherUrl = await other.start();
    const busy = await openSockets(Number(new URL(otherUrl).port), '127.0.0.3', 4, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await Promise.all(busy.map((socket) => new Promise((resolve) => socket.socket.once('data', resolve))));
    expect(await sendOnFreshConnection(`${otherUrl}/`, { from: '127.0.0.1' })).toMatchObject({ status: 'ECONNRESET' });
    expect(busy.map((socket) => socket.isClosed())).toEqual([false, false, false, false]);
  });

  it('caps connections by default: 256 in all, 128 from one address', async () => {
    const { server } = makeServer(0);
    const port = Number(new URL(await server.start()).port);
    const one = await openSockets(port, '127.0.0.2', 134, 'G');
    await until(() => one.filter((socket) => socket.isClosed()).length >= 6, 'the address cap to close 6 sockets');
    const more = (await Promise.all([3, 4].map((n) => openSockets(port, `127.0.0.${n}`, 80, 'G')))).flat();
    const all = [...one, ...more];
    await until(() => all.filter((socket) => socket.isClosed()).length >= all.length - 256, 'the total cap to close the sockets past 256');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(all.filter((socket) => !socket.isClosed())).toHaveLength(256);
  });
});
