import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent } from '../../../src/agent/agent.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import type { Vote } from '../../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

/*
 * A whole agent with votes.reminders on (the file store, or a memory store; the emulator, an
 * injected clock): a vote the cursor brings is rewarded, and its `reminder` event comes once, when
 * the clock passes the vote's expiry plus votes.reminders.delay, not before.
 */

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('an agent with vote reminders', () => {
  it.each(['file', 'memory'])('emits reminder once when the clock passes expiry + delay (%s store)', async (kind) => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const voter = emu.admin.createUser({ username: 'voter' });
    emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id });
    const directory = await mkdtemp(join(tmpdir(), 'reminders-agent-'));
    dirs.push(directory);
    let offsetMs = 0;
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        health: { enabled: false },
        state: { directory },
        // The vote was cast before this first start: the backfill asks for it.
        votes: { enabled: true, lookback: '1h', reminders: { enabled: true, delay: '10m' } },
      },
      now: () => Date.now() + offsetMs,
      ...(kind === 'memory' ? { store: createMemoryStore() } : {}),
      transport: { retry: { maxAttempts: 1 } },
      votes: { reminderLookMs: 20 },
    });
    const rewarded: Vote[] = [];
    const reminded: Vote[] = [];
    agent.on('vote', (vote) => void rewarded.push(vote));
    agent.on('reminder', (vote) => void reminded.push(vote));
    await agent.start();
    try {
      await vi.waitFor(() => expect(rewarded).toHaveLength(1), { timeout: 5_000 });
      const [vote] = rewarded;
      const dueMs = Date.parse(vote!.expiresAt) + 10 * 60_000;

      // Just before it is due: nothing, though the timer looks many times.
      offsetMs = dueMs - Date.now() - 60_000;
      emu.admin.advanceClock(offsetMs / 1000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(reminded).toEqual([]);

      offsetMs += 2 * 60_000;
      emu.admin.advanceClock(120);
      await vi.waitFor(() => expect(reminded).toHaveLength(1), { timeout: 5_000 });
      expect(reminded[0]).toMatchObject({ key: `reminder:${vote!.key}`, userId: voter.id, projectId: fx.projectId, expiresAt: vote!.expiresAt, road: 'poll' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(reminded).toHaveLength(1);
    } finally {
      await agent.stop();
    }
  });
});
