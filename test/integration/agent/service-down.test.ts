import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createListingAgent, parseConfig, type ListingAgent } from '../../../src/agent/agent.js';
import type { ListingAgentConfigInput } from '../../../src/config/schema.js';
import { votesLedgerFor } from '../../../src/votes/configured.js';
import { voteKey, type Vote } from '../../../src/votes/types.js';
import { signDelivery } from '../../../src/contract/signature.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { tempDir, waitFor } from './redis-fixture.js';

/**
 * The webhook receiver and the vote pipeline need only the secret and the state: they open at the
 * agent's start, whatever the service's state. While `GET /projects/@me` fails, signed v1 votes
 * are recorded and rewarded, votes a crash left pending are rewarded, v0 votes (which need the
 * project ID) are answered 503, and `/readyz` says what waits for the service and why. Once the
 * service answers, the cursor lists the same votes (same key) and nothing is rewarded twice.
 */

const SECRET = 'whs_service_down_secret';
const LEGACY = 'legacy-authorization-secret';
const agents: ListingAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 3_000 })));
});

function delivery(fx: BotFixture, vote: { user_id: string; created_at: string; expires_at: string; id?: string }) {
  const body = JSON.stringify({
    type: 'vote.create',
    data: {
      id: vote.id ?? `delivery-${vote.user_id}`,
      weight: 1,
      created_at: vote.created_at,
      expires_at: vote.expires_at,
      project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
      user: { id: vote.user_id, platform_id: '200000000000000002', name: 'voter', avatar_url: null },
    },
  });
  return { body, headers: { 'content-type': 'application/json', ...signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000), traceId: `trace-${vote.user_id}` }) } };
}

async function agentWithServiceDown(emu: TestEmulator, fx: BotFixture, directory: string) {
  // Every project lookup fails until the faults are cleared: the service is "down" for the agent only.
  emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 503, count: 10_000 });
  await writeFile(join(directory, 'commands.json'), JSON.stringify([{ name: 'ping', description: 'Check that the bot is alive' }]));
  const config: ListingAgentConfigInput = {
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    state: { directory },
    health: { listen: '127.0.0.1:0' },
    commands: { enabled: true, source: 'file', file: join(directory, 'commands.json') },
    votes: { enabled: true, pollInterval: '5s', lookback: '1h' },
    webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [SECRET], legacyAuthorization: LEGACY },
  };
  const agent = createListingAgent({ config, reconnectDelaysMs: [100], transport: { retry: { maxAttempts: 1 } } });
  agent.on('error', () => undefined);
  const rewarded: Vote[] = [];
  agent.on('vote', (vote) => void rewarded.push(vote));
  agents.push(agent);
  return { agent, config, rewarded };
}

describe('the service is down at the start', () => {
  it('records and rewards signed webhook votes at once; the cursor, once the service is up, fires nothing again', { timeout: 30_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const voters = [emu.admin.createUser({ username: 'v1' }), emu.admin.createUser({ username: 'v2' })];
    const cast = voters.map((voter, i) => emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id, created_at: new Date(Date.now() - 60_000 + i).toISOString() }));
    const { agent, rewarded } = await agentWithServiceDown(emu, fx, await tempDir('la-service-down-'));
    await agent.start();
    expect(agent.phase).toBe('connecting');

    const url = agent.webhookReceiverUrl;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks\/listing$/);
    for (const vote of cast) {
      const { body, headers } = delivery(fx, vote);
      expect((await call(url!, { method: 'POST', body, headers })).status).toBe(204);
      // The service's retry of the same delivery: answered 204, no second reward.
      expect((await call(url!, { method: 'POST', body, headers })).status).toBe(204);
    }
    await waitFor('both webhook votes rewarded', () => rewarded.length === 2);
    expect(rewarded.map((v) => v.key).sort()).toEqual(cast.map((v) => voteKey(v.user_id, v.created_at)).sort());

    // A v0 vote needs the project ID, which only the service gives: retryable, not lost.
    const v0 = await call(url!, { method: 'POST', authorization: LEGACY, json: { bot: fx.platformId, user: '300000000000000003', type: 'upvote', isWeekend: false } });
    expect(v0.status).toBe(503);
    expect(v0.headers.get('retry-after')).not.toBeNull();

    const ready = await call(`${agent.healthServerUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.components.service).toMatchObject({ ready: false, detail: expect.stringContaining('503') });
    expect(ready.body.components.votes).toMatchObject({ ready: false, detail: expect.stringMatching(/cursor waits for the service \(.*503.*\); webhook votes are rewarded/) });
    expect(ready.body.components.webhooks.detail).toMatch(/listening at .*; v0 votes wait for the service/);
    expect(ready.body.components.commands).toMatchObject({ ready: false, detail: expect.stringMatching(/^waits for the service \(.*503/) });

    // The service comes back: the cursor lists both votes again, under the same keys.
    emu.admin.clearFaults();
    await waitFor('the agent running', () => agent.phase === 'running', 10_000);
    await waitFor('the first poll', async () => (await agent.metrics.votesReceived.get({ road: 'poll' })) >= 2, 10_000);
    await agent.votePipeline!.idle();
    expect(rewarded).toHaveLength(2);
    const after = await call(`${agent.healthServerUrl}/readyz`);
    expect(after.body.components.webhooks.detail).not.toContain('wait');
    // The commands sync runs beside the poll once the service answers: wait for it, not for the poll.
    await waitFor('the commands sync', () => emu.admin.commands(fx.projectId).length === 1, 10_000);
    expect(emu.admin.commands(fx.projectId)).toHaveLength(1);
  });

  it('rewards the votes a crash left pending in the journal, before the service answers', { timeout: 20_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const directory = await tempDir('la-service-down-pending-');
    const pending: Vote = {
      key: voteKey('crashed-voter', '2026-01-02T03:04:05.000Z'),
      userId: 'crashed-voter',
      platformId: null,
      projectId: fx.projectId,
      weight: 1,
      createdAt: '2026-01-02T03:04:05.000Z',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      road: 'webhook',
    };
    // The journal of a run that died between recording the vote and running its hooks.
    const { agent, config, rewarded } = await agentWithServiceDown(emu, fx, directory);
    const ledger = votesLedgerFor(parseConfig(config), 'file');
    await ledger.open();
    await ledger.recordPending([pending]);
    await ledger.close();

    await agent.start();
    await waitFor('the pending vote rewarded', () => rewarded.length === 1);
    expect(rewarded[0]!.key).toBe(pending.key);
    expect(agent.phase).toBe('connecting');
  });
});
