import { Agent, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { signDelivery } from '../../../src/contract/signature.js';
import { RedisUnavailableError } from '../../../src/redis/connection.js';
import type { Vote } from '../../../src/contract/vote.js';
import type { IngestResult, VoteSink } from '../../../src/runtime/votes.js';
import { StoreError } from '../../../src/store/errors.js';
import { createWebhookReceiver } from '../../../src/webhooks/receiver.js';
import { call } from '../../helpers/http.js';
import { capturedLog } from '../../helpers/log-lines.js';
import { NOW, PROJECT, USER } from '../../unit/webhooks/fixtures.js';

/**
 * A vote the receiver cannot record is answered 503, and the service retries it: during a Redis
 * outage or on a full disk that is every delivery, hundreds a second. The log gets the first at
 * `error` with the cause and the fix, then one summary per 10 s with the count and the causes,
 * and a line when votes are recorded again; never a line per delivery, never a secret. Real
 * sockets, a real receiver, a pipeline that fails the way the ledgers fail, an injected clock.
 */

const SECRET = 'whs_503_log_secret_0123456789';
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A clock the test moves, with the timers due on it. */
function manualClock(start: number) {
  let now = start;
  let timers: { at: number; run: () => void }[] = [];
  return {
    now: () => now,
    schedule: (run: () => void, delayMs: number) => {
      const timer = { at: now + delayMs, run };
      timers.push(timer);
      return () => void (timers = timers.filter((other) => other !== timer));
    },
    pending: () => timers.length,
    /** Moves to `at`, running the timers due on the way. */
    advanceTo(at: number) {
      now = at;
      const due = timers.filter((timer) => timer.at <= at);
      timers = timers.filter((timer) => timer.at > at);
      for (const timer of due) timer.run();
    },
    step(ms: number) {
      now += ms;
    },
  };
}

/** Keep-alive connections for the floods: a new connection per delivery would measure the test, not the receiver. */
const agent = new Agent({ keepAlive: true, maxSockets: 50 });
afterEach(() => agent.destroy());

/** POSTs `body`; resolves with the status. */
function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A signed `vote.create` of voter `i`, at the clock's time. */
function delivery(i: number, at: number) {
  const body = JSON.stringify({
    type: 'vote.create',
    data: { id: String(1_500_000_000_000_000_000n + BigInt(i)), weight: 1, created_at: new Date(NOW - i).toISOString(), expires_at: new Date(NOW + 43_200_000).toISOString(), project: PROJECT, user: { ...USER, id: String(1_400_000_000_000_000_000n + BigInt(i)) } },
  });
  const headers: Record<string, string> = { 'content-type': 'application/json', ...signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(at / 1000), traceId: `trace-${i}` }) };
  return { body, headers };
}

describe('webhook votes answered 503: a summary, not a line each', () => {
  it('1,500 failures in 8 s: one error line with cause and fix, one summary with the count, one line when recording works again', { timeout: 30_000 }, async () => {
    const clock = manualClock(NOW);
    const { logger, lines, text } = capturedLog();
    let failure: Error | undefined = new RedisUnavailableError('Redis: could not record 1 vote ledger change(s): The client is closed');
    const pipeline: VoteSink = {
      ingest: (votes: readonly Vote[]): Promise<IngestResult> => (failure ? Promise.reject(failure) : Promise.resolve({ accepted: [...votes], duplicates: 0 })),
    };
    const receiver = createWebhookReceiver({ listen: { host: '127.0.0.1', port: 0 }, secrets: [SECRET], pipeline, logger, now: clock.now, schedule: clock.schedule });
    const url = await receiver.start();
    cleanup.push(() => receiver.stop());
    const signatures: string[] = [];

    const send = async (i: number) => {
      const { body, headers } = delivery(i, clock.now());
      signatures.push(headers['x-topgg-signature']!.split('v1=')[1]!);
      return post(url, body, headers);
    };
    // 1,500 deliveries over 8 s of the clock, 50 at a time.
    const statuses: number[] = [];
    for (let i = 0; i < 1_500; i += 50) {
      const batch = Array.from({ length: 50 }, (_, j) => i + j);
      statuses.push(...(await Promise.all(batch.map((n) => send(n)))));
      clock.step(8_000 / 30);
    }
    expect(statuses.every((status) => status === 503)).toBe(true);

    const receiverLines = () => lines.filter((line) => line.msg !== 'webhook receiver listening');
    expect(receiverLines()).toHaveLength(1);
    const [first] = receiverLines();
    expect(first).toMatchObject({ level: 'error', status: 503, err: 'Redis: could not record 1 vote ledger change(s): The client is closed', voteId: '1500000000000000000', traceId: 'trace-0' });
    expect(first!.fix).toMatch(/^bring Redis back \(state\.redis\.url\)/);
    expect(first!.msg).toMatch(/^could not record a webhook vote; answered 503 so the service retries/);

    // The end of the interval (10 s after the first): one summary with the count and the cause.
    expect(clock.pending()).toBe(1);
    clock.advanceTo(NOW + 10_000);
    expect(receiverLines()).toHaveLength(2);
    const summary = receiverLines()[1]!;
    expect(summary).toMatchObject({ level: 'warn', answered503: 1_500, loggedOneByOne: 1, failing: true, intervalMs: 10_000 });
    expect(summary.causes).toEqual(['Redis: could not record 1 vote ledger change(s): The client is closed']);
    expect(summary.msg).toContain('answered 503 in the last 10 s: 1500');

    // Redis is back: the next vote is recorded, and the log says so once.
    failure = undefined;
    clock.step(1_000);
    expect(await send(2_000)).toBe(204);
    expect(await send(2_001)).toBe(204);
    expect(receiverLines()).toHaveLength(3);
    expect(receiverLines()[2]).toMatchObject({ level: 'info', msg: expect.stringMatching(/^webhook votes are recorded again: 1500 answered 503/), answered503: 1_500 });

    // A full disk next: a new outage, a new first line naming the disk; the stop writes what was counted.
    failure = new StoreError('cannot append to /var/lib/listing-agent/votes.journal: no space left on device — the change is kept in memory and the next write retries', '/var/lib/listing-agent/votes.journal');
    for (let i = 0; i < 10; i += 1) expect(await send(3_000 + i)).toBe(503);
    await receiver.stop();
    const disk = receiverLines().slice(3);
    expect(disk.map((line) => line.level)).toEqual(['error', 'warn']);
    expect(disk[0]!.fix).toMatch(/^free space on the disk of the state directory/);
    expect(disk[1]).toMatchObject({ answered503: 10, failing: true });

    for (const signature of signatures) expect(text()).not.toContain(signature);
    expect(text()).not.toContain(SECRET);
  });

  it('a recording that fails and works in turn still writes at most three lines per interval', { timeout: 30_000 }, async () => {
    const clock = manualClock(NOW);
    const { logger, lines } = capturedLog();
    let calls = 0;
    const pipeline: VoteSink = {
      ingest: (votes) => (++calls % 2 === 1 ? Promise.reject(new RedisUnavailableError('Redis: could not record 1 vote ledger change(s): timeout')) : Promise.resolve({ accepted: [...votes], duplicates: 0 })),
    };
    const receiver = createWebhookReceiver({ listen: { host: '127.0.0.1', port: 0 }, secrets: [SECRET], pipeline, logger, now: clock.now, schedule: clock.schedule });
    const url = await receiver.start();
    cleanup.push(() => receiver.stop());
    for (let i = 0; i < 400; i += 1) {
      const { body, headers } = delivery(i, clock.now());
      await post(url, body, headers);
      clock.step(20);
    }
    clock.advanceTo(NOW + 10_000);
    const written = lines.filter((line) => line.msg !== 'webhook receiver listening');
    expect(written.map((line) => line.level)).toEqual(['error', 'info', 'warn']);
    expect(written[2]).toMatchObject({ answered503: 200, recoveredTimes: 200 });
  });

  it('votes not recorded within the deadline join the same count, with their own cause', { timeout: 30_000 }, async () => {
    const clock = manualClock(NOW);
    const { logger, lines } = capturedLog();
    const pipeline: VoteSink = { ingest: () => new Promise<IngestResult>(() => undefined) };
    const receiver = createWebhookReceiver({ listen: { host: '127.0.0.1', port: 0 }, secrets: [SECRET], pipeline, logger, now: clock.now, schedule: clock.schedule, answerWithinMs: 50 });
    const url = await receiver.start();
    cleanup.push(() => receiver.stop({ deadline: Date.now() }));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => delivery(i, clock.now())).map(({ body, headers }) => call(url, { method: 'POST', body, headers })));
    expect(answers.map((res) => res.status)).toEqual(Array(20).fill(503));
    clock.advanceTo(NOW + 10_000);
    const written = lines.filter((line) => line.msg !== 'webhook receiver listening');
    expect(written.map((line) => line.level)).toEqual(['error', 'warn']);
    expect(written[0]).toMatchObject({ err: 'not recorded within 50 ms', msg: expect.stringMatching(/^vote not recorded in time/) });
    expect(written[0]!.fix).toMatch(/too slowly/);
    expect(written[1]).toMatchObject({ answered503: 20, causes: ['not recorded within 50 ms'] });
  });

  it('refusals: the first of each reason, then one summary with the count per reason', async () => {
    const clock = manualClock(NOW);
    const { logger, lines } = capturedLog();
    const pipeline: VoteSink = { ingest: (votes) => Promise.resolve({ accepted: [...votes], duplicates: 0 }) };
    const receiver = createWebhookReceiver({ listen: { host: '127.0.0.1', port: 0 }, secrets: [SECRET], pipeline, logger, now: clock.now, schedule: clock.schedule });
    const url = await receiver.start();
    cleanup.push(() => receiver.stop());
    const { body } = delivery(1, clock.now());
    const forged = { 'content-type': 'application/json', 'x-topgg-signature': `t=${Math.floor(NOW / 1000)},v1=${'0'.repeat(64)}` };
    for (let i = 0; i < 100; i += 1) expect((await call(url, { method: 'POST', body, headers: forged })).status).toBe(401);
    for (let i = 0; i < 5; i += 1) expect((await call(url, { method: 'GET' })).status).toBe(405);
    clock.advanceTo(NOW + 10_000);
    const written = lines.filter((line) => line.msg !== 'webhook receiver listening');
    expect(written.map((line) => [line.level, line.reason ?? line.refused])).toEqual([
      ['warn', 'bad_signature'],
      ['warn', 'method'],
      ['warn', { bad_signature: 100, method: 5 }],
    ]);
    expect(written[2]!.msg).toBe('webhook deliveries refused in the last 10 s: 100 bad_signature, 5 method (the first of each reason was logged)');
  });
});
