import { describe, expect, it, vi } from 'vitest';
import { createListingAgent } from '../../../src/agent/agent.js';
import type { Capability } from '../../../src/runtime/capability.js';
import type { CommandSyncResult } from '../../../src/commands/types.js';
import { createCommandsCapability } from '../../../src/commands/capability.js';
import { createStaticCommandsSource } from '../../../src/commands/sources/static.js';
import type { PostResult } from '../../../src/stats/events.js';
import { createStatsCapability } from '../../../src/stats/capability.js';
import type { CountSource } from '../../../src/stats/source.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createVotesCapability } from '../../../src/votes/capability.js';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';

/*
 * `GET /projects/@me` once per agent start: the agent asks it before starting the capabilities
 * and hands the project over in the context; stats, commands and votes use it instead of asking
 * again (each still asks when its context has no project, as in `post-once` and the CLI).
 */

const ME_PATH = '/api/v1/projects/@me';
const meRequests = (emu: TestEmulator) => emu.admin.requests().filter((r) => r.method === 'GET' && r.path === ME_PATH);
const source: CountSource = { description: 'test counts', read: async () => ({ ready: true, serverCount: 12, shardCount: 1 }) };

async function startAndSettle(emu: TestEmulator, token: string, capabilities: Capability[]) {
  const agent = createListingAgent({
    config: {
      service: { token, v1: emu.urls.v1, v0: emu.urls.v0 },
      health: { enabled: false },
      stats: { enabled: true },
      commands: { enabled: true },
      votes: { enabled: true },
    },
    store: createMemoryStore(),
    transport: { retry: { maxAttempts: 1 } },
    capabilities,
  });
  // The bot's reward: the vote event is the votes' hook.
  agent.on('vote', () => undefined);
  const posted = new Promise<PostResult>((resolve) => agent.once('posted', resolve));
  const synced = new Promise<CommandSyncResult>((resolve) => agent.once('commandsSynced', resolve));
  await agent.start();
  await Promise.all([posted, synced]);
  // The votes poller's first poll has run once the votes component is ready.
  await vi.waitFor(() => expect(agent.readiness.snapshot().components.votes?.ready).toBe(true));
  await agent.stop();
}

describe('GET /projects/@me per agent start', () => {
  it('is sent once with stats, commands and votes on: the agent hands the whole answer to the capabilities', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const capabilities = [
      createStatsCapability(source),
      createCommandsCapability(createStaticCommandsSource([{ name: 'ping', description: 'Replies with pong' }])),
      createVotesCapability({ ledger: 'memory' }),
    ];
    await startAndSettle(emu, fx.projectToken, capabilities);
    expect(meRequests(emu)).toHaveLength(1);
    // The post and the poll still went out, on the project the agent found.
    expect(emu.admin.metrics(fx.projectId)).toHaveLength(1);
    expect(emu.admin.requests().some((r) => r.method === 'GET' && r.path.startsWith(`${ME_PATH}/votes`))).toBe(true);
  });

  it('the votes poller takes the project ID from the context as the agent gives it today', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const agent = createListingAgent({
      config: { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, votes: { enabled: true } },
      store: createMemoryStore(),
      transport: { retry: { maxAttempts: 1 } },
      capabilities: [createVotesCapability({ ledger: 'memory' })],
    });
    agent.on('vote', () => undefined);
    await agent.start();
    await vi.waitFor(() => expect(agent.readiness.snapshot().components.votes?.ready).toBe(true));
    await agent.stop();
    expect(meRequests(emu)).toHaveLength(1);
  });
});
