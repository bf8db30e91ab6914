import { connect } from 'node:net';
import { Gauge, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/agent-logger.js';
import { createReadiness, type Readiness } from '../../../src/runtime/readiness.js';
import { createAgentMetrics } from '../../../src/runtime/metrics.js';
import { ListenError } from '../../../src/http/listen-error.js';
import { createHealthServer, type HealthServer, type HealthServerOptions } from '../../../src/health/server.js';
import { call } from '../../helpers/http.js';
import { openSockets, sendOnFreshConnection, until } from '../../helpers/sockets.js';

const servers: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

interface Started {
  url: string;
  server: HealthServer;
  readiness: Readiness;
  registry: Registry;
}

/** A health server on 127.0.0.1:0 with a fresh readiness and registry, stopped after the test. */
async function startHealth(overrides: Partial<Omit<HealthServerOptions, 'registry'>> & { registry?: Registry } = {}): Promise<Started> {
  const readiness = overrides.readiness ?? createReadiness(() => 1_700_000_000_000);
  const registry = overrides.registry ?? new Registry();
  const server = createHealthServer({ listen: { host: '127.0.0.1', port: 0 }, readiness, registry, logger: silentLogger, ...overrides });
  servers.push(server);
  const url = await server.start();
  return { url, server, readiness, registry };
}

/** Writes `bytes` on a raw socket and resolves with everything the server sent before closing. */
function rawExchange(url: string, bytes: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

describe('health server: routes', () => {
  it('reports the real port for port 0', async () => {
    const { url } = await startHealth();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url.endsWith(':0')).toBe(false);
  });

  it('answers /healthz with 200 {"status":"ok"} whatever the readiness', async () => {
    const { url } = await startHealth();
    const res = await call(`${url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"status":"ok"}');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('answers /readyz with 200 and the snapshot when every component is ready', async () => {
    const { url, readiness } = await startHealth();
    readiness.set('service', true, 'project Test Bot (1)');
    readiness.set('store', true, 'memory');
    const res = await call(`${url}/readyz`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(readiness.snapshot());
    expect(res.body.ready).toBe(true);
  });

  it('answers /readyz with 503 naming each component that is not ready and why', async () => {
    const { url, readiness } = await startHealth();
    readiness.set('store', true, 'memory');
    readiness.set('service', false, 'GET /projects/@me failed with 401: invalid token');
    const res = await call(`${url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      ready: false,
      components: {
        store: { ready: true, detail: 'memory', since: 1_700_000_000_000 },
        service: { ready: false, detail: 'GET /projects/@me failed with 401: invalid token', since: 1_700_000_000_000 },
      },
    });
  });

  it('answers /readyz with 503 before any component registered', async () => {
    const { url } = await startHealth();
    const res = await call(`${url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ ready: false, components: {} });
  });

  it('serves /metrics in Prometheus text format from its own registry', async () => {
    const { url, registry, readiness } = await startHealth();
    const metrics = createAgentMetrics(registry, readiness);
    metrics.posts.inc({ target: 'v1', result: 'ok' });
    metrics.posts.inc({ target: 'v1', result: 'ok' });
    const res = await call(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(registry.contentType);
    expect(res.text).toContain('# TYPE listing_agent_posts_total counter');
    expect(res.text).toContain('listing_agent_posts_total{target="v1",result="ok"} 2');
  });

  it('asks a registry given as a function for it only when /metrics is scraped (an agent loads prom-client then)', async () => {
    const registry = new Registry();
    let made = 0;
    const lazy = createHealthServer({ listen: { host: '127.0.0.1', port: 0 }, readiness: createReadiness(Date.now), registry: () => (made++, registry), logger: silentLogger });
    servers.push(lazy);
    const lazyUrl = await lazy.start();
    expect((await call(`${lazyUrl}/healthz`)).status).toBe(200);
    expect((await call(`${lazyUrl}/readyz`)).status).toBe(503);
    expect(made).toBe(0);
    createAgentMetrics(registry).posts.inc({ target: 'v0', result: 'ok' });
    expect((await call(`${lazyUrl}/metrics`)).text).toContain('listing_agent_posts_total{target="v0",result="ok"} 1');
    expect(made).toBe(1);
  });

  it('ignores the query string', async () => {
    const { url } = await startHealth();
    expect((await call(`${url}/healthz?verbose=1`)).status).toBe(200);
  });

  it('answers HEAD on each path with the GET status and headers and no body', async () => {
    const { url, readiness } = await startHealth();
    readiness.set('service', false, 'not reached yet');
    for (const [path, status] of [['/healthz', 200], ['/readyz', 503], ['/metrics', 200]] as const) {
      const get = await call(`${url}${path}`);
      const head = await call(`${url}${path}`, { method: 'HEAD' });
      expect(head.status, path).toBe(status);
      expect(head.text, path).toBe('');
      expect(head.headers.get('content-type'), path).toBe(get.headers.get('content-type'));
      expect(head.headers.get('content-length'), path).toBe(String(Buffer.byteLength(get.text)));
    }
  });

  it('answers 404 for other paths, naming the ones it has', async () => {
    const { url } = await startHealth();
    for (const path of ['/', '/health', '/healthz/', '/metrics.json', '/%zz']) {
      const res = await call(`${url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.body.error, path).toContain('/healthz, /readyz, /metrics');
    }
  });

  it('answers 405 with Allow for other methods', async () => {
    const { url } = await startHealth();
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
      const res = await call(`${url}/metrics`, { method, ...(method === 'OPTIONS' ? {} : { body: 'x' }) });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow'), method).toBe('GET, HEAD');
    }
  });

  it('answers 500 when a metric cannot be collected, and keeps serving', async () => {
    const { url, registry } = await startHealth();
    new Gauge({
      name: 'broken',
      help: 'throws at scrape',
      registers: [registry],
      collect() {
        throw new Error('boom');
      },
    });
    const res = await call(`${url}/metrics`);
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('boom');
    expect((await call(`${url}/healthz`)).status).toBe(200);
  });
});

describe('health server: bad input', () => {
  it('answers garbage bytes with 400 and keeps serving', async () => {
    const { url } = await startHealth();
    const garbage = [
      Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), // a TLS hello
      'NOT HTTP AT ALL\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      '\0\0\0\0\r\n\r\n',
    ];
    for (const bytes of garbage) {
      const reply = await rawExchange(url, bytes);
      expect(reply).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    }
    expect((await call(`${url}/healthz`)).status).toBe(200);
  });

  it('answers oversized headers with 431 and keeps serving', async () => {
    const { url } = await startHealth();
    const reply = await rawExchange(url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 431 /);
    expect((await call(`${url}/healthz`)).status).toBe(200);
  });

  it('survives a client that connects and hangs up at once', async () => {
    const { url } = await startHealth();
    const { port } = new URL(url);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write('GET /hea');
        socket.destroy();
        resolve();
      });
    });
    expect((await call(`${url}/healthz`)).status).toBe(200);
  });
});

describe('health server: connections (issue 34)', () => {
  it('holds at most 64 connections, 32 from one address, and serves another address meanwhile', async () => {
    const { url } = await startHealth();
    const port = Number(new URL(url).port);
    // Each begins a request and stalls: no timeout of silence closes them, only the caps.
    const one = await openSockets(port, '127.0.0.2', 36, 'G');
    await until(() => one.filter((socket) => socket.isClosed()).length >= 4, 'the address cap to close 4 sockets');
    expect((await sendOnFreshConnection(`${url}/healthz`, { from: '127.0.0.1' })).status).toBe(200);
    const more = (await Promise.all([3, 4].map((n) => openSockets(port, `127.0.0.${n}`, 24, 'G')))).flat();
    const all = [...one, ...more];
    await until(() => all.filter((socket) => socket.isClosed()).length >= all.length - 64, 'the total cap to close the sockets past 64');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(all.filter((socket) => !socket.isClosed())).toHaveLength(64);
  });
});

describe('health server: the Host it answers (issue 34)', () => {
  const get = (url: string, path: string, host: string) => sendOnFreshConnection(`${url}${path}`, { headers: { host } });

  it('answers its listen address, localhost, any IP address and the listed names, on any port', async () => {
    const { url } = await startHealth({ allowedHosts: ['listing-agent', 'Status.Example.com'] });
    const port = new URL(url).port;
    const hosts = [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost', `[::1]:${port}`, 'LOCALHOST.:8080', '10.1.2.3:9464'];
    hosts.push(`listing-agent:${port}`, 'status.example.com');
    for (const host of hosts) expect({ host, status: (await get(url, '/healthz', host)).status }).toEqual({ host, status: 200 });
  });

  it('refuses any other host with 421 and a line naming health.allowedHosts on every path: no page reads it by DNS rebinding', async () => {
    const { url } = await startHealth({ allowedHosts: ['listing-agent'] });
    for (const path of ['/healthz', '/readyz', '/metrics', '/status.json', '/nope']) {
      const refused = await get(url, path, 'rebind.attacker.example:9464');
      expect(refused.status).toBe(421);
      expect(refused.text).toBe(
        '421 Misdirected Request: this server does not answer for rebind.attacker.example; to reach it by that name, ' +
          'add the name to health.allowedHosts (LISTING_AGENT_HEALTH_ALLOWED_HOSTS)\n',
      );
    }
    for (const host of ['listing-agent.attacker.example', 'attacker-listing-agent', '127.0.0.1.nip.io', 'bad host', '[not-v6]:1']) {
      expect({ host, status: (await get(url, '/healthz', host)).status }).toEqual({ host, status: 421 });
    }
  });

  it('logs the first refusal of each 10 s and counts the rest in one summary line, written at stop', async () => {
    const lines: [string, Record<string, unknown>][] = [];
    const logger = { ...silentLogger, warn: (fields: Record<string, unknown>, message: string) => void lines.push([message, fields]) };
    const { url, server } = await startHealth({ logger, allowedHostsSetting: 'health.allowedHosts' });
    for (let i = 0; i < 5; i += 1) expect((await get(url, '/readyz', `rebind-${i}.example`)).status).toBe(421);
    expect(lines.map(([message]) => message)).toEqual([
      'health server request refused: the Host rebind-0.example is not its listen address, localhost, an IP address or in ' +
        'health.allowedHosts',
    ]);
    expect(lines[0]![1]).toMatchObject({ reason: 'wrong_host', host: 'rebind-0.example', path: '/readyz', remote: '127.0.0.1' });
    await server.stop();
    const summary = 'health server requests refused in the last 10 s: 5 wrong_host (the first of each reason was logged)';
    expect(lines.map(([message]) => message).at(-1)).toBe(summary);
  });
});

describe('health server: lifecycle', () => {
  it('refuses a port in use with a one-line ListenError naming the address and the fix', async () => {
    const first = await startHealth();
    const port = Number(new URL(first.url).port);
    const second = createHealthServer({ listen: { host: '127.0.0.1', port }, readiness: first.readiness, registry: new Registry(), logger: silentLogger });
    servers.push(second);
    const error = await second.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ListenError);
    const listenError = error as ListenError;
    expect(listenError.code).toBe('listen');
    expect(listenError.problem).toBe('in_use');
    expect(listenError.message).toBe(
      `health server: 127.0.0.1:${port} is in use: set health.listen to a free port (LISTING_AGENT_HEALTH_LISTEN) or stop the other process`,
    );
    expect(listenError.message).not.toContain('\n');
    expect((listenError.cause as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
    // The first one is untouched, and stopping the failed one is harmless.
    await second.stop();
    expect((await call(`${first.url}/healthz`)).status).toBe(200);
  });

  it('refuses an address that is not on this machine with a ListenError', async () => {
    const server = createHealthServer({ listen: { host: '203.0.113.7', port: 9464 }, readiness: createReadiness(Date.now), registry: new Registry(), logger: silentLogger });
    servers.push(server);
    await expect(server.start()).rejects.toThrow(
      new ListenError('health server', { host: '203.0.113.7', port: 9464 }, Object.assign(new Error('x'), { code: 'EADDRNOTAVAIL' }), {
        path: 'health.listen',
        env: 'LISTING_AGENT_HEALTH_LISTEN',
      }).message,
    );
  });

  it('returns the same URL when start() is called twice', async () => {
    const { url, server } = await startHealth();
    expect(await server.start()).toBe(url);
  });

  it('stop() closes the port and open connections, and is idempotent', async () => {
    const { url, server } = await startHealth();
    expect((await call(`${url}/healthz`)).status).toBe(200); // leaves a keep-alive connection open
    const { port } = new URL(url);
    const hanging = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => hanging.once('connect', resolve));
    hanging.write('GET /healthz HTTP/1.1\r\n'); // headers never finished
    const closed = new Promise((resolve) => hanging.once('close', resolve));
    hanging.on('error', () => undefined);

    const started = performance.now();
    await Promise.all([server.stop(), server.stop()]);
    await server.stop();
    await closed;
    // Well under the keep-alive and headers timeouts: connections were closed, not waited for.
    expect(performance.now() - started).toBeLessThan(2_000);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('stop() before start() resolves', async () => {
    const server = createHealthServer({ listen: { host: '127.0.0.1', port: 0 }, readiness: createReadiness(Date.now), registry: new Registry(), logger: silentLogger });
    await server.stop();
    await server[Symbol.asyncDispose]();
  });

  it('two servers with their own registries in one process do not clash', async () => {
    const a = await startHealth();
    const b = await startHealth();
    const metricsA = createAgentMetrics(a.registry, a.readiness);
    createAgentMetrics(b.registry, b.readiness);
    metricsA.votesReceived.inc({ road: 'webhook' }, 3);
    const textA = (await call(`${a.url}/metrics`)).text;
    const textB = (await call(`${b.url}/metrics`)).text;
    expect(textA).toContain('listing_agent_votes_received_total{road="webhook"} 3');
    expect(textB).toContain('listing_agent_votes_received_total{road="webhook"} 0');
  });
});
