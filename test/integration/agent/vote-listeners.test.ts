import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, createListingAgent, type ListingAgent, type Vote } from '../../../src/index.js';
import type { HookRun } from '../../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { capturedLog } from '../../helpers/log-lines.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';
import { voteAt } from '../../helpers/votes.js';

/*
 * Votes nobody receives (issue 32, item 1), the embedded road: the package's entry against the
 * emulator. The `vote` event is a reward hook only when it has a listener as the agent starts; an
 * agent with votes on and nothing to receive them refuses to start, and takes nothing; a vote is
 * never logged `vote rewarded` (nor marked done) without a listener or hook receiving it.
 */

const agents: ListingAgent[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function listing(votes = 0) {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  for (let i = 0; i < votes; i += 1) emu.admin.castVote({ project_id: fx.projectId, user_id: emu.admin.createUser({ username: `voter${i}` }).id });
  const directory = await mkdtemp(join(tmpdir(), 'la-vote-listeners-'));
  dirs.push(directory);
  // lookback set: the votes cast before the first start are the ones to reward.
  const config = (votes: Record<string, unknown> = {}) => ({
    service: { v1: emu.urls.v1, v0: emu.urls.v0 },
    health: { enabled: false },
    state: { directory },
    votes: { enabled: true, lookback: '1h', ...votes },
  });
  return { emu, fx, config };
}

function agentOf(options: Parameters<typeof createListingAgent>[0]): ListingAgent {
  const agent = createListingAgent({ transport: { retry: { maxAttempts: 1 } }, ...options });
  agents.push(agent);
  return agent;
}

const rewardedLines = (lines: Record<string, unknown>[]) => lines.filter((line) => line.msg === 'vote rewarded');

describe('the vote event as the reward hook of an embedded agent', () => {
  it('refuses to start with votes on and no listener nor hook, takes no vote, and a listener attached then gets every vote once', async () => {
    const { emu, fx, config } = await listing(3);
    const log = capturedLog({ level: 'info' });
    const agent = agentOf({ token: fx.projectToken, config: config(), logger: log.logger });

    const refused = await agent.start().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual([
      {
        path: 'votes.hooks',
        message:
          "votes.enabled is on but nothing receives the votes: attach a listener with agent.on('vote', ...) before the agent starts, add a reward hook to votes.hooks, or set votes.stream.enabled; without one no vote is rewarded",
      },
    ]);
    expect(agent.phase).toBe('idle');
    // Nothing started: not a request to the service, not a vote taken.
    expect(emu.admin.requests()).toEqual([]);
    expect(rewardedLines(log.lines)).toEqual([]);

    const got: Vote[] = [];
    agent.on('vote', (vote) => void got.push(vote));
    await agent.start();
    await vi.waitFor(() => expect(got).toHaveLength(3), { timeout: 10_000, interval: 20 });
    expect(new Set(got.map((vote) => vote.key)).size).toBe(3);
    await vi.waitFor(() => expect(rewardedLines(log.lines)).toHaveLength(3), { timeout: 5_000, interval: 20 });
  });

  it('fails the hook when every listener is gone: the vote stays pending, is retried, and is rewarded once a listener is back', async () => {
    const { fx, config } = await listing();
    const log = capturedLog({ level: 'info' });
    const agent = agentOf({ token: fx.projectToken, config: config(), logger: log.logger, votes: { pipeline: { backoff: { baseMs: 20, maxMs: 40 } } } });
    const first = (): void => undefined;
    agent.on('vote', first);
    await agent.start();
    agent.off('vote', first);

    const runs: HookRun[] = [];
    const got: Vote[] = [];
    const back = (vote: Vote) => void got.push(vote);
    agent.on('voteHookRan', (run) => {
      runs.push(run);
      // At the first failure, with nothing rewarded: a listener comes back for the retry.
      if (run.result === 'error' && runs.length === 1) {
        expect(rewardedLines(log.lines)).toEqual([]);
        agent.on('vote', back);
      }
    });
    const vote = voteAt('777', Date.now(), { projectId: fx.projectId });
    await agent.votePipeline!.ingest([vote], 'webhook');

    await vi.waitFor(() => expect(got.map((v) => v.key)).toEqual([vote.key]), { timeout: 5_000, interval: 10 });
    expect(runs[0]).toMatchObject({ key: vote.key, hook: 'vote-event', attempt: 1, result: 'error' });
    expect(runs[0]!.error).toContain('no vote listener is attached');
    await vi.waitFor(() => expect(rewardedLines(log.lines)).toHaveLength(1), { timeout: 5_000, interval: 10 });
    expect(runs.at(-1)).toMatchObject({ key: vote.key, hook: 'vote-event', result: 'ok' });
  });

  it('tells a listener attached after it started without one (error event, warn line), which gets no vote', async () => {
    const { fx, config } = await listing();
    const hook = await startVoteHookServer();
    const log = capturedLog({ level: 'info' });
    const agent = agentOf({ token: fx.projectToken, config: config({ hooks: [{ url: hook.url }] }), logger: log.logger });
    const errors: Error[] = [];
    agent.on('error', (error) => void errors.push(error));
    await agent.start();

    const late: Vote[] = [];
    agent.on('vote', (vote) => void late.push(vote));
    agent.on('vote', (vote) => void late.push(vote));
    const told = errors.filter((error) => (error as { code?: string }).code === 'late_listener');
    expect(told.map((error) => error.message)).toEqual([
      'a vote listener was attached after the agent started without one: it gets no vote; attach it before the agent starts (right after createListingAgent, before start())',
    ]);
    expect(log.lines.filter((line) => line.level === 'warn' && line.msg === told[0]!.message)).toHaveLength(1);

    const vote = voteAt('778', Date.now(), { projectId: fx.projectId });
    await agent.votePipeline!.ingest([vote], 'webhook');
    await vi.waitFor(() => expect(hook.calls.map((call) => call.key)).toEqual([vote.key]), { timeout: 5_000, interval: 10 });
    expect(late).toEqual([]);
  });
});
