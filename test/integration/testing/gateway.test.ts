import { once } from 'node:events';
import { constants as zlibConstants, createInflate, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startFakeGateway, type FakeGateway } from '../../helpers/fake-discord/index.js';

/*
 * The fake gateway's own checks for what the discord.js tests do not reach: discord.js asks for
 * zlib-stream only when zlib-sync is installed (it is not here), and a real Client never sends a
 * bad token, a bad shard or another API version.
 */

interface Payload {
  op: number;
  t?: string | null;
  s?: number | null;
  d: Record<string, unknown> & { guilds?: { id: string }[] };
}

/** A raw gateway connection that decodes plain JSON, identify compression or zlib-stream. */
async function connect(gateway: FakeGateway, query = 'v=10&encoding=json') {
  const socket = new WebSocket(`${gateway.url}?${query}`);
  const received: Payload[] = [];
  const inflate = createInflate();
  let text = '';
  let inflating = Promise.resolve();
  inflate.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  socket.on('message', (data: Buffer, isBinary) => {
    if (!isBinary) return void received.push(JSON.parse(data.toString('utf8')) as Payload);
    if (!query.includes('zlib-stream')) return void received.push(JSON.parse(inflateSync(data).toString('utf8')) as Payload);
    // zlib-stream: one inflate context for the connection; every payload ends in 00 00 ff ff.
    // One frame at a time, so the text inflated so far is exactly this frame's payload.
    expect([...data.subarray(-4)]).toEqual([0, 0, 0xff, 0xff]);
    inflating = inflating.then(
      () =>
        new Promise<void>((resolve) => {
          inflate.write(data);
          inflate.flush(zlibConstants.Z_SYNC_FLUSH, () =>
            setImmediate(() => {
              received.push(JSON.parse(text) as Payload);
              text = '';
              resolve();
            }),
          );
        }),
    );
  });
  await once(socket, 'open');
  const next = async (): Promise<Payload> => {
    while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    return received.shift()!;
  };
  return { socket, next, send: (payload: unknown) => socket.send(JSON.stringify(payload)) };
}

describe('fake Discord gateway', () => {
  it.each(['v=10&encoding=json', 'v=10&encoding=json&compress=zlib-stream'])('speaks HELLO, heartbeat ACK, IDENTIFY -> READY -> GUILD_CREATE, joins and leaves (%s)', async (query) => {
    const gateway = await startFakeGateway({ shardCount: 2, token: 't', guilds: 4, heartbeatIntervalMs: 1000 });
    const conn = await connect(gateway, query);
    expect(await conn.next()).toMatchObject({ op: 10, d: { heartbeat_interval: 1000 } });
    conn.send({ op: 1, d: null });
    expect(await conn.next()).toMatchObject({ op: 11 });

    conn.send({ op: 2, d: { token: 't', intents: 1, properties: {}, shard: [1, 2] } });
    const ready = await conn.next();
    expect(ready).toMatchObject({ op: 0, t: 'READY', s: 1, d: { shard: [1, 2], resume_gateway_url: gateway.url } });
    expect(ready.d.guilds).toEqual(gateway.guildIds(1).map((id) => ({ id, unavailable: true })));
    for (const id of gateway.guildIds(1)) expect(await conn.next()).toMatchObject({ t: 'GUILD_CREATE', d: { id, unavailable: false, channels: [] } });
    expect(gateway.sessions()).toEqual([expect.objectContaining({ shardId: 1, connected: true, ready: true, guildsSent: true })]);

    let id = gateway.addGuild();
    while (gateway.shardOf(id) !== 1) id = gateway.addGuild();
    expect(await conn.next()).toMatchObject({ t: 'GUILD_CREATE', d: { id } });
    gateway.removeGuild(id);
    expect(await conn.next()).toEqual({ op: 0, t: 'GUILD_DELETE', s: 5, d: { id } });
    conn.socket.close();
  });

  it('replays what was missed after RESUME, and answers INVALID_SESSION for a session it forgot', async () => {
    const gateway = await startFakeGateway({ shardCount: 1, token: 't' });
    const first = await connect(gateway);
    await first.next();
    first.send({ op: 2, d: { token: 't', shard: [0, 1] } });
    const ready = await first.next();
    gateway.disconnectShard(0);
    await once(first.socket, 'close');
    const joined = gateway.addGuild();

    const second = await connect(gateway);
    await second.next();
    second.send({ op: 6, d: { token: 't', session_id: ready.d.session_id, seq: ready.s } });
    expect(await second.next()).toMatchObject({ t: 'GUILD_CREATE', d: { id: joined } });
    expect(await second.next()).toMatchObject({ t: 'RESUMED' });

    gateway.disconnectShard(0, { invalidateSession: true });
    const third = await connect(gateway);
    await third.next();
    third.send({ op: 6, d: { token: 't', session_id: ready.d.session_id, seq: 3 } });
    expect(await third.next()).toEqual({ op: 9, d: false });
    third.socket.close();
  });

  it.each([
    ['v=9&encoding=json', null, 4012],
    ['v=10&encoding=etf', null, 4002],
    ['v=10&encoding=json', { op: 2, d: { token: 'wrong', shard: [0, 2] } }, 4004],
    ['v=10&encoding=json', { op: 2, d: { token: 't', shard: [2, 2] } }, 4010],
    ['v=10&encoding=json', { op: 2, d: { token: 't', shard: [0, 3] } }, 4010],
    ['v=10&encoding=json', { op: 3, d: {} }, 4003],
    ['v=10&encoding=json', { op: 42, d: {} }, 4001],
  ])('closes %s / %j with %i, as Discord does', async (query, payload, code) => {
    const gateway = await startFakeGateway({ shardCount: 2, token: 't' });
    const socket = new WebSocket(`${gateway.url}?${query}`);
    const closed = once(socket, 'close');
    if (payload) {
      await once(socket, 'message');
      socket.send(JSON.stringify(payload));
    }
    expect((await closed)[0]).toBe(code);
  });
});
