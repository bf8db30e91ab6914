import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryVoteLedger } from '../../../src/votes/ledger-memory.js';
import { createVotePipeline } from '../../../src/votes/pipeline.js';
import { createWebhookReceiver } from '../../../src/webhooks/receiver.js';
import { signDelivery } from '../../../src/contract/signature.js';
import { call } from '../../helpers/http.js';
import { capturedLog } from '../../helpers/log-lines.js';

/** The lines a signed vote leaves at the daemon's default level, through the real receiver. */

const SECRET = 'whs_receiver_log_secret';
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('webhook receiver log lines at info', () => {
  it('a new vote: received (key, vote ID, trace ID) and rewarded; its retry: nothing at info; never the secret or the signature', async () => {
    const { logger, lines, text } = capturedLog({ level: 'info', secrets: [SECRET] });
    const pipeline = createVotePipeline({ ledger: createMemoryVoteLedger(), hooks: [{ name: 'reward', retries: 0, run: async () => undefined }], logger, now: Date.now });
    await pipeline.start();
    cleanup.push(() => pipeline.stop(Date.now() + 1_000));
    const receiver = createWebhookReceiver({ listen: { host: '127.0.0.1', port: 0 }, secrets: [SECRET], pipeline, logger });
    const url = await receiver.start();
    cleanup.push(() => receiver.stop());

    const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000).toISOString();
    const body = JSON.stringify({
      type: 'vote.create',
      data: {
        id: '1500000000000000077',
        weight: 1,
        created_at: createdAt,
        expires_at: new Date(Date.parse(createdAt) + 43_200_000).toISOString(),
        project: { id: '1100000000000000001', type: 'bot', platform: 'discord', platform_id: '100000000000000001' },
        user: { id: '1400000000000000077', platform_id: '200000000000000002', name: 'voter', avatar_url: null },
      },
    });
    const signed = signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000), traceId: 'trace-77' });
    const headers = { 'content-type': 'application/json', ...signed };
    expect((await call(url, { method: 'POST', body, headers })).status).toBe(204);
    expect((await call(url, { method: 'POST', body, headers })).status).toBe(204);
    await pipeline.idle();

    const key = `1400000000000000077:${Date.parse(createdAt)}`;
    const votes = lines.filter((line) => String(line.msg).startsWith('vote '));
    expect(votes).toEqual([
      expect.objectContaining({ level: 'info', msg: 'vote received', key, road: 'webhook', voteId: '1500000000000000077', traceId: 'trace-77', userId: '1400000000000000077' }),
      expect.objectContaining({ level: 'info', msg: 'vote rewarded', key, hooks: ['reward'] }),
    ]);
    expect(text()).not.toContain(SECRET);
    expect(text()).not.toContain(signed['x-topgg-signature']!.split('v1=')[1]);
  });
});
