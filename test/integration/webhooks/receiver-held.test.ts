import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createListingAgent, type Vote } from '../../../src/index.js';
import { createWebhookReceiver, signDelivery } from '../../../src/public/webhooks.js';
import type { IngestResult, VoteSink } from '../../../src/runtime/votes.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { sendOnFreshConnection } from '../../helpers/sockets.js';

/*
 * Issue 34, "what held, and must keep holding": the receiver probed as an attacker would, over
 * real sockets (its unit internals are being rewritten): replays after 300 s refused, 50 parallel
 * copies of one vote rewarded once, 413 past 64 KiB, 431 past 8 KiB of headers, every
 * request-smuggling shape 400 with nothing reaching a hook.
 */

const SECRET = 'whs_held_properties_secret';
const PATH = '/webhooks/listing';
const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

let seq = 0;
/** The receiver's project. */
const PROJECT = { id: '1100000000000000001', type: 'bot', platform: 'discord', platform_id: '100000000000000001' };
/** The vote ID of vote `n`: a Snowflake. */
const heldVoteId = (n: number) => String(1_600_000_000_000_000_000n + BigInt(n));
/** A vote.create body for a new vote (or `padTo` bytes long, padded with JSON whitespace). */
function voteBody(padTo?: number, project = PROJECT): string {
  seq += 1;
  const createdAt = new Date(Date.now() - seq * 1_000).toISOString();
  const body = JSON.stringify({
    type: 'vote.create',
    data: {
      id: heldVoteId(seq),
      weight: 1,
      created_at: createdAt,
      expires_at: new Date(Date.parse(createdAt) + 43_200_000).toISOString(),
      project,
      user: { id: String(400_000_000_000_000_000n + BigInt(seq)), platform_id: '200000000000000002', name: 'voter', avatar_url: null },
    },
  });
  return padTo === undefined ? body : body + ' '.repeat(padTo - Buffer.byteLength(body));
}

const signed = (body: string, seconds: number) => signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: seconds });

/** The receiver on 127.0.0.1:0 with a clock the test sets, in front of a sink that records every vote handed to it. */
async function startReceiver() {
  const clock = { ms: Date.now() };
  const recorded: Vote[] = [];
  const pipeline: VoteSink = {
    ingest: (votes): Promise<IngestResult> => {
      recorded.push(...votes);
      return Promise.resolve({ accepted: [...votes], duplicates: 0 });
    },
  };
  const receiver = createWebhookReceiver({ listen: { host: '127.0.0.1', port: 0 }, secrets: [SECRET], pipeline, now: () => clock.ms });
  const url = await receiver.start();
  stops.push(() => receiver.stop());
  const deliver = (body: string, headers: Record<string, string>) =>
    sendOnFreshConnection(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  return { url, port: Number(new URL(url).port), clock, recorded, deliver };
}

/** Writes raw bytes and resolves with everything the receiver sent before it closed the connection. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let reply = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (reply += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(reply));
    // A shape the receiver waited on (it should not): ended from this side, so the test ends.
    setTimeout(() => socket.end(), 2_000).unref();
  });
}

describe('the webhook receiver keeps refusing what it refused (issue 34)', () => {
  it('refuses a recorded delivery replayed once its timestamp is more than 300 s old, either way', async () => {
    const { clock, recorded, deliver } = await startReceiver();
    const body = voteBody();
    const t = Math.floor(clock.ms / 1000);
    const headers = signed(body, t);
    expect((await deliver(body, headers)).status).toBe(204);
    clock.ms += 299_000;
    expect((await deliver(body, headers)).status).toBe(204);
    clock.ms += 2_000;
    expect((await deliver(body, headers)).status).toBe(401);
    clock.ms -= 602_000;
    expect((await deliver(body, headers)).status).toBe(401);
    expect(recorded.map((vote) => vote.voteId)).toEqual([heldVoteId(seq), heldVoteId(seq)]);
  });

  it('takes a body of exactly 64 KiB and refuses one byte more with 413, unread', async () => {
    const { clock, recorded, deliver } = await startReceiver();
    const t = Math.floor(clock.ms / 1000);
    const fits = voteBody(64 * 1024);
    expect((await deliver(fits, signed(fits, t))).status).toBe(204);
    const over = voteBody(64 * 1024 + 1);
    expect((await deliver(over, signed(over, t))).status).toBe(413);
    expect(recorded).toHaveLength(1);
  });

  it('takes a signed delivery with 6 KiB of other headers and refuses headers past 8 KiB with 431', async () => {
    const { clock, recorded, deliver } = await startReceiver();
    const t = Math.floor(clock.ms / 1000);
    const body = voteBody();
    expect((await deliver(body, { ...signed(body, t), 'x-padding': 'p'.repeat(6 * 1024) })).status).toBe(204);
    const next = voteBody();
    const over = await deliver(next, { ...signed(next, t), 'x-padding': 'p'.repeat(8 * 1024 + 1) });
    expect(over.status === 431 || over.status === 'ECONNRESET' || over.status === 'EPIPE').toBe(true);
    expect(recorded).toHaveLength(1);
  });

  it('answers every request-smuggling shape 400 and closes: the signed vote hidden behind it never reaches a hook', async () => {
    const { port, clock, recorded, deliver } = await startReceiver();
    const body = voteBody();
    const headers = signed(body, Math.floor(clock.ms / 1000));
    const hiddenHeaders = `host: x\r\ncontent-type: application/json\r\nx-topgg-signature: ${headers['x-topgg-signature']}`;
    const hidden = `POST ${PATH} HTTP/1.1\r\n${hiddenHeaders}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const start = `POST ${PATH} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n`;
    const shapes: Record<string, string> = {
      'content-length and transfer-encoding': `${start}content-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n${hidden}`,
      'transfer-encoding and content-length': `${start}transfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n0\r\n\r\n${hidden}`,
      'two content-lengths': `${start}content-length: 0\r\ncontent-length: ${hidden.length}\r\n\r\n${hidden}`,
      'a content-length list': `${start}content-length: 0, ${hidden.length}\r\n\r\n${hidden}`,
      'transfer-encoding identity': `${start}transfer-encoding: identity\r\n\r\n${hidden}`,
      'chunked, then identity': `${start}transfer-encoding: chunked, identity\r\n\r\n0\r\n\r\n${hidden}`,
      'xchunked': `${start}transfer-encoding: xchunked\r\n\r\n0\r\n\r\n${hidden}`,
      'a space before the colon': `${start}transfer-encoding : chunked\r\ncontent-length: 0\r\n\r\n${hidden}`,
      'a folded transfer-encoding': `${start}transfer-encoding:\r\n chunked\r\n\r\n0\r\n\r\n${hidden}`,
      'bare LF line ends': `${start.replaceAll('\r\n', '\n')}content-length: 0\n\n${hidden}`,
      'a chunk size that is not hex': `${start}transfer-encoding: chunked\r\n\r\nzz\r\n${hidden}\r\n0\r\n\r\n`,
      'a chunk extension ended by LF': `${start}transfer-encoding: chunked\r\n\r\n1;x\n{\r\n0\r\n\r\n${hidden}`,
      'a negative content-length': `${start}content-length: -1\r\n\r\n${hidden}`,
      'a signed content-length': `${start}content-length: +0\r\n\r\n${hidden}`,
      'a NUL in a header': `${start}x-a: a\u0000b\r\ncontent-length: 0\r\n\r\n${hidden}`,
    };
    for (const [shape, bytes] of Object.entries(shapes)) {
      const reply = await raw(port, bytes);
      expect({ shape, answer: reply.split('\r\n', 1)[0] }).toEqual({ shape, answer: 'HTTP/1.1 400 Bad Request' });
      const answers = reply.match(/HTTP\/1\.1 \d{3}/g)?.length;
      expect({ shape, answers, recorded: recorded.length }).toEqual({ shape, answers: 1, recorded: 0 });
    }
    expect(recorded).toHaveLength(0);
    // The same delivery, sent plainly, is taken: the shapes failed for their framing alone.
    expect((await deliver(body, headers)).status).toBe(204);
    expect(recorded).toHaveLength(1);
  });
});

describe('an agent receiving webhooks', () => {
  it('rewards 50 parallel copies of one signed vote once, answering each 204', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        health: { enabled: false },
        state: { directory: await mkdtemp(join(tmpdir(), 'la-held-')) },
        webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [SECRET] },
      },
      logger: false,
    });
    const rewarded: Vote[] = [];
    agent.on('vote', async (vote) => void rewarded.push(vote));
    await agent.start();
    stops.push(() => agent.stop());
    const body = voteBody(undefined, { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId });
    const headers = { 'content-type': 'application/json', ...signed(body, Math.floor(Date.now() / 1000)) };
    const copy = () => sendOnFreshConnection(agent.webhookReceiverUrl!, { method: 'POST', body, headers });
    const answers = await Promise.all(Array.from({ length: 50 }, copy));
    expect(answers.map((answer) => answer.status)).toEqual(new Array(50).fill(204));
    await agent.stop();
    expect(rewarded.map((vote) => vote.voteId)).toEqual([heldVoteId(seq)]);
  });
});
