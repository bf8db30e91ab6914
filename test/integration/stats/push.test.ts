import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/errors.js';
import { ListenError } from '../../../src/http/listen-error.js';
import { createPushSource, pushShardCounts, PushRejectedError, type PushSource, type PushSourceOptions } from '../../../src/stats/sources/push.js';
import { call } from '../../helpers/http.js';
import { freePort } from '../../helpers/ports.js';
import { openSockets, sendOnFreshConnection, until } from '../../helpers/sockets.js';

const KEY = 'push-key-0123456789abcdef';
const sources: PushSource[] = [];
afterEach(async () => {
  await Promise.all(sources.splice(0).map((source) => source.stop()));
});

/** A push source on 127.0.0.1:0 with a clock the test moves by hand, stopped after the test. */
async function startPush(overrides: Partial<PushSourceOptions> = {}) {
  const clock = { t: 1_700_000_000_000 };
  const source = createPushSource({ listen: { host: '127.0.0.1', port: 0 }, key: KEY, now: () => clock.t, ...overrides });
  sources.push(source);
  await source.start();
  const url = source.url();
  const post = (json: unknown, auth: { bearer?: string } = { bearer: KEY }) => call(url, { method: 'POST', json, ...auth });
  return { source, url, clock, post };
}

const report = (shard_id: number, server_count: number, shard_count = 3) => ({ shard_id, shard_count, server_count });

/** Sends `bytes` raw and resolves with everything the server wrote before closing. */
function rawExchange(url: string, bytes: string): Promise<string> {
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

describe('push source: reports', () => {
  it('is ready with the sum and the per-shard counts once all 3 shards have reported', async () => {
    const { source, post, url } = await startPush();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/stats$/);
    for (const [id, count] of [[0, 10], [1, 20], [2, 30]] as const) expect((await post(report(id, count))).status).toBe(204);
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 60, shardCount: 3, shards: [10, 20, 30] });
    expect(source.description).toBe(`push endpoint (${url})`);
  });

  it('is not ready before any report, and names the missing shards', async () => {
    const { source, post } = await startPush();
    await expect(source.read()).resolves.toEqual({ ready: false, reason: expect.stringContaining('no shard has reported yet') });
    await post([report(0, 1, 6), report(1, 1, 6), report(3, 1, 6), report(4, 1, 6)]);
    await expect(source.read()).resolves.toEqual({ ready: false, reason: 'no report from shards 2, 5' });
  });

  it('expects the configured shard count even before a report says it', async () => {
    const { source, post } = await startPush({ shardCount: 4 });
    await expect(source.read()).resolves.toEqual({ ready: false, reason: 'no report from shards 0-3' });
    const res = await post(report(0, 5, 3));
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('stats.push.shardCount');
  });

  it('names a stale shard once its report is older than staleAfterMs, and is ready again when it reports', async () => {
    const { source, post, clock } = await startPush({ staleAfterMs: 600_000 });
    await post([report(0, 10), report(1, 20), report(2, 30)]);
    clock.t += 300_000;
    await post([report(0, 11), report(2, 31)]);
    clock.t += 299_999;
    await expect(source.read()).resolves.toMatchObject({ ready: true, serverCount: 62 });
    clock.t += 1;
    await expect(source.read()).resolves.toEqual({ ready: false, reason: 'shard 1 is stale (last report 10m ago)' });
    clock.t += 120_000;
    await expect(source.read()).resolves.toEqual({ ready: false, reason: 'shard 1 is stale (last report 12m ago)' });
    await post(report(1, 21));
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 63, shardCount: 3, shards: [11, 21, 31] });
  });

  it('names missing and stale shards together', async () => {
    const { source, post, clock } = await startPush();
    await post([report(0, 1, 6), report(1, 1, 6), report(3, 1, 6), report(4, 1, 6)]);
    clock.t += 700_000;
    await post([report(0, 1, 6), report(3, 1, 6), report(4, 1, 6)]);
    await expect(source.read()).resolves.toEqual({ ready: false, reason: 'no report from shards 2, 5; shard 1 is stale (last report 11m ago)' });
  });

  it('keeps the freshest report per shard', async () => {
    const { source, post, clock } = await startPush();
    await post({ shards: [5, 6, 7] });
    clock.t += 1_000;
    await post(report(1, 60));
    await expect(source.read()).resolves.toMatchObject({ shards: [5, 60, 7], serverCount: 72 });
  });

  it('accepts the {shards} form: index = shard ID, shard_count = length', async () => {
    const { source, post } = await startPush();
    expect((await post({ shards: [100, 200, 300, 400] })).status).toBe(204);
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 1000, shardCount: 4, shards: [100, 200, 300, 400] });
  });

  it('follows a reshard: the newest shard_count wins and old-layout reports do not count', async () => {
    const { source, post, clock } = await startPush();
    await post({ shards: [10, 10] });
    clock.t += 1_000;
    await post(report(0, 7, 4));
    await expect(source.read()).resolves.toEqual({
      ready: false,
      reason: 'no report from shards 2, 3; shard 1 last reported for 2 shards, not 4 (the bot resharded: they must report again)',
    });
    await post([report(1, 7, 4), report(2, 7, 4), report(3, 7, 4)]);
    await expect(source.read()).resolves.toMatchObject({ ready: true, serverCount: 28, shardCount: 4 });
    // Down again: shards 2 and 3 are forgotten.
    await post({ shards: [9, 9] });
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 18, shardCount: 2, shards: [9, 9] });
  });

  it('answers GET with the key: the current reading and the stored reports', async () => {
    const { url, post, clock } = await startPush();
    await post(report(0, 10, 2));
    clock.t += 5_000;
    const res = await call(url, { bearer: KEY });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ready: false,
      reason: 'no report from shard 1',
      reports: [{ shard_id: 0, shard_count: 2, server_count: 10, received_at: new Date(1_700_000_000_000).toISOString(), age_ms: 5_000 }],
    });
    expect((await call(url)).status).toBe(401);
  });
});

describe('push source: refusals', () => {
  it.each([
    ['no key', undefined],
    ['a wrong key', 'not-the-key'],
    ['the key with a suffix', `${KEY}x`],
  ])('answers 401 for %s and records nothing', async (_name, bearer) => {
    const { source, post } = await startPush();
    const res = await post(report(0, 1, 1), bearer === undefined ? {} : { bearer });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(res.body.error).toContain('stats.push.key');
    await expect(source.read()).resolves.toMatchObject({ ready: false, reason: expect.stringContaining('no shard has reported yet') });
  });

  it.each([
    ['not JSON', '{"shard_id": 0,', /^the body is not JSON/],
    ['empty', '', /^the body is empty/],
    ['a negative count', JSON.stringify(report(0, -1)), /^server_count: must be an integer from 0/],
    ['shard_id >= shard_count', JSON.stringify(report(3, 1)), /^shard_id: must be below shard_count \(3\), not 3$/],
    ['a fractional count', JSON.stringify(report(0, 1.5)), /^server_count: /],
    ['a missing field', JSON.stringify({ shard_id: 0, server_count: 1 }), /^shard_count: is missing$/],
    ['a bad array entry', JSON.stringify([report(0, 1), { shard_id: 1, shard_count: 3, server_count: 'x' }]), /^\[1\]\.server_count: /],
    ['a shard twice', JSON.stringify([report(0, 1), report(0, 2)]), /^\[1\]\.shard_id: shard 0 is reported twice$/],
    ['an empty array', '[]', /empty array/],
    ['a bad {shards} entry', JSON.stringify({ shards: [1, -2] }), /^shards\[1\]: /],
    ['an empty {shards}', JSON.stringify({ shards: [] }), /^shards: must be a non-empty array/],
    ['a number', '42', /^\(root\): must be/],
  ])('answers 400 naming the field for %s, records nothing and keeps serving', async (_name, body, error) => {
    const { source, url, post } = await startPush();
    const res = await call(url, { method: 'POST', body, bearer: KEY, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(error);
    await expect(source.read()).resolves.toMatchObject({ ready: false });
    expect((await post(report(0, 1, 1))).status).toBe(204);
    await expect(source.read()).resolves.toMatchObject({ ready: true, serverCount: 1 });
  });

  it('answers 413 above 64 KiB (declared or streamed) and keeps serving', async () => {
    const { source, url, post } = await startPush();
    const huge = JSON.stringify({ shards: new Array(40_000).fill(1) });
    expect(Buffer.byteLength(huge)).toBeGreaterThan(64 * 1024);
    const declared = await call(url, { method: 'POST', body: huge, bearer: KEY });
    expect(declared.status).toBe(413);

    const streamed = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      for (let i = 0; i < 10; i += 1) req.write('x'.repeat(8 * 1024));
      req.end();
    });
    expect(streamed).toBe(413);

    expect((await post(report(0, 1, 1))).status).toBe(204);
    await expect(source.read()).resolves.toMatchObject({ ready: true });
  });

  it('answers 404 for another path and 405 for another method', async () => {
    const { url } = await startPush();
    const other = await call(url.replace('/stats', '/other'), { method: 'POST', json: report(0, 1), bearer: KEY });
    expect(other.status).toBe(404);
    const put = await call(url, { method: 'PUT', json: report(0, 1), bearer: KEY });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('answers garbage with 400 and keeps serving', async () => {
    const { url, post } = await startPush();
    expect(await rawExchange(url, 'NOT HTTP AT ALL\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    expect((await post(report(0, 1, 1))).status).toBe(204);
  });
});

describe('push source: pushShardCounts', () => {
  it('posts each body form', async () => {
    const { source, url } = await startPush();
    await pushShardCounts({ url, key: KEY, reports: report(0, 5) });
    await pushShardCounts({ url, key: KEY, reports: [report(1, 6), report(2, 7)] });
    await expect(source.read()).resolves.toMatchObject({ ready: true, serverCount: 18, shards: [5, 6, 7] });
    await pushShardCounts({ url, key: KEY, reports: { shards: [1, 2] } });
    await expect(source.read()).resolves.toMatchObject({ ready: true, serverCount: 3 });
  });

  it('throws a ValidationError before sending a bad body, and PushRejectedError without the key for a refusal', async () => {
    const { url } = await startPush();
    await expect(pushShardCounts({ url, key: KEY, reports: report(5, 1) })).rejects.toThrow(ValidationError);
    const wrongKey = 'wrong-key-abcdef';
    const error = await pushShardCounts({ url, key: wrongKey, reports: report(0, 1) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PushRejectedError);
    expect((error as PushRejectedError).status).toBe(401);
    expect((error as Error).message).toContain('stats.push.key');
    expect((error as Error).message).not.toContain(wrongKey);
  });
});

describe('push source: connections (issue 34)', () => {
  it('holds at most 256 connections, 128 from one address, and takes a push from another address meanwhile', async () => {
    const { url } = await startPush({ shardCount: 1 });
    const port = Number(new URL(url).port);
    // Each begins a request and stalls: no timeout of silence closes them, only the caps.
    const one = await openSockets(port, '127.0.0.2', 134, 'P');
    await until(() => one.filter((socket) => socket.isClosed()).length >= 6, 'the address cap to close 6 sockets');
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const push = { method: 'POST', body: JSON.stringify(report(0, 5, 1)), headers };
    expect((await sendOnFreshConnection(url, { ...push, from: '127.0.0.1' })).status).toBe(204);
    const more = (await Promise.all([3, 4].map((n) => openSockets(port, `127.0.0.${n}`, 80, 'P')))).flat();
    const all = [...one, ...more];
    await until(() => all.filter((socket) => socket.isClosed()).length >= all.length - 256, 'the total cap to close the sockets past 256');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(all.filter((socket) => !socket.isClosed())).toHaveLength(256);
  });
});

describe('push source: lifecycle', () => {
  it('closes the port on stop(), and stop() is safe twice', async () => {
    const { source, url } = await startPush();
    await source.stop();
    await source.stop();
    await expect(call(url)).rejects.toThrow();
    expect(() => source.url()).toThrow(/not listening/);
    await expect(source.read()).resolves.toMatchObject({ ready: false, reason: expect.stringContaining('not listening (stopped)') });
  });

  it('listens again after stop() (a leader that leads again), keeping the reports received before', async () => {
    const port = await freePort();
    const { source, post } = await startPush({ listen: { host: '127.0.0.1', port }, shardCount: 1 });
    expect((await post(report(0, 10, 1))).status).toBe(204);
    await source.stop();
    await source.start();
    expect(source.url()).toBe(`http://127.0.0.1:${port}/stats`);
    await expect(source.read()).resolves.toEqual({ ready: true, serverCount: 10, shardCount: 1, shards: [10] });
    expect((await post(report(0, 11, 1))).status).toBe(204);
    await expect(source.read()).resolves.toMatchObject({ ready: true, serverCount: 11 });
    // Stopped and started again without waiting: it listens once the stop is done.
    const stopping = source.stop();
    const starting = source.start();
    await stopping;
    await starting;
    expect((await post(report(0, 12, 1))).status).toBe(204);
    await expect(source.read()).resolves.toMatchObject({ ready: true, serverCount: 12 });
  });

  it('rejects a taken port with a one-line ListenError naming stats.push.listen', async () => {
    const { url } = await startPush();
    const port = Number(new URL(url).port);
    const second = createPushSource({ listen: { host: '127.0.0.1', port }, key: KEY });
    sources.push(second);
    const error = await second.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ListenError);
    expect((error as ListenError).message).toBe(
      `push endpoint: 127.0.0.1:${port} is in use: set stats.push.listen to a free port (LISTING_AGENT_STATS_PUSH_LISTEN) or stop the other process`,
    );
    expect((error as ListenError).problem).toBe('in_use');
  });
});
