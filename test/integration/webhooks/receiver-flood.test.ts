import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookReceiver, signDelivery } from '../../../src/public/webhooks.js';
import type { Vote } from '../../../src/contract/vote.js';
import type { IngestResult, VoteSink } from '../../../src/runtime/votes.js';
import { DECISION_DEFAULTS } from '../../../src/contract/limits.js';
import { flood, sendOnFreshConnection, until } from '../../helpers/sockets.js';

/*
 * Issue 34, item 3: idle sockets must not shut the receiver. 256 sockets that send nothing, from
 * one address and reopened as the receiver closes them, held every connection it had and blocked
 * every valid delivery. Probed over real sockets on 127.0.0.0/8: the flood comes from 127.0.0.2
 * (and 127.0.0.3-9), the service's deliveries from 127.0.0.1, each on a fresh connection.
 */

const SECRET = 'whs_flood_test_secret';
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** The receiver with its defaults (512 connections, half from one address) and a sink that records every vote. */
async function startReceiver(timeouts?: { firstByteMs?: number }) {
  const recorded: Vote[] = [];
  const pipeline: VoteSink = {
    ingest: (votes): Promise<IngestResult> => {
      recorded.push(...votes);
      return Promise.resolve({ accepted: [...votes], duplicates: 0 });
    },
  };
  const listen = { host: '127.0.0.1', port: 0 };
  const receiver = createWebhookReceiver({ listen, secrets: [SECRET], pipeline, ...(timeouts ? { timeouts } : {}) });
  const url = await receiver.start();
  stops.push(() => receiver.stop());
  return { url, port: Number(new URL(url).port), recorded };
}

let seq = 0;
function signedVote(): { body: string; headers: Record<string, string> } {
  seq += 1;
  const createdAt = new Date(Date.now() - seq * 1_000).toISOString();
  const body = JSON.stringify({
    type: 'vote.create',
    data: {
      id: String(1_500_000_000_000_000_000n + BigInt(seq)),
      weight: 1,
      created_at: createdAt,
      expires_at: new Date(Date.parse(createdAt) + 43_200_000).toISOString(),
      project: { id: '1100000000000000001', type: 'bot', platform: 'discord', platform_id: '100000000000000001' },
      user: { id: `${300000000000000000 + seq}`, platform_id: `${200000000000000000 + seq}`, name: 'voter', avatar_url: null },
    },
  });
  const signature = signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) });
  return { body, headers: { 'content-type': 'application/json', ...signature } };
}

/** Delivers `count` signed votes one after another, each on a fresh connection from 127.0.0.1, within the service's deadline. */
async function deliver(url: string, count: number) {
  const answers = [];
  for (let i = 0; i < count; i += 1) {
    const { body, headers } = signedVote();
    answers.push(await sendOnFreshConnection(url, { method: 'POST', body, headers, timeoutMs: DECISION_DEFAULTS.deliveryTimeoutMs }));
  }
  return answers;
}

describe('the webhook receiver under a flood of idle sockets', () => {
  it('answers valid deliveries on fresh connections while one address keeps 300 silent sockets open', async () => {
    const { url, port, recorded } = await startReceiver();
    const attacker = flood(port, '127.0.0.2', 300);
    await until(() => attacker.opened() >= 300, 'the flood to open its sockets');
    // The receiver holds at most half of its 512 connections for one address and closes the rest
    // at once, so the attacker keeps reopening them while the deliveries go on.
    const answers = await deliver(url, 12);
    expect(answers.map((answer) => answer.status)).toEqual(new Array(12).fill(204));
    expect(Math.max(...answers.map((answer) => answer.elapsedMs))).toBeLessThan(DECISION_DEFAULTS.deliveryTimeoutMs);
    expect(recorded).toHaveLength(12);
    expect(attacker.opened()).toBeGreaterThan(300);
    attacker.stop();
  });

  it('answers them too when silent sockets from eight addresses fill every connection (the oldest silent one makes room)', async () => {
    const { url, port, recorded } = await startReceiver();
    const attackers = [2, 3, 4, 5, 6, 7, 8, 9].map((n) => flood(port, `127.0.0.${n}`, 80));
    await until(() => attackers.every((attacker) => attacker.opened() >= 80), 'the flood to open its sockets');
    const answers = await deliver(url, 12);
    expect(answers.map((answer) => answer.status)).toEqual(new Array(12).fill(204));
    expect(recorded).toHaveLength(12);
    for (const attacker of attackers) attacker.stop();
  });

  it('closes a socket that sends nothing within the first-byte timeout (timeouts.firstByteMs)', async () => {
    const { url, port } = await startReceiver({ firstByteMs: 150 });
    const attacker = flood(port, '127.0.0.2', 8, 1_000);
    const started = Date.now();
    await until(() => attacker.open() === 0, 'the receiver to close the silent sockets', 3_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    attacker.stop();
    expect((await deliver(url, 1))[0]!.status).toBe(204);
  });
});
