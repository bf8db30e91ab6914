import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createListingAgent } from '../../../src/index.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { createExecHook, createHttpHook, hooksFromConfig, type HookKind, type Vote, type VoteHook } from '../../../src/public/votes.js';
import { parseConfig } from '../../../src/public/config.js';
import { startRecordingHook } from '../../helpers/hostile-service.js';
import { hookContext, voteAt } from '../../helpers/votes.js';

/*
 * Issue 34, item 5: a hook knows what it carries from where it was made (the reminders make theirs
 * with `kind: 'reminder'`), never from a key's text. A voter whose user ID is `reminder` has the
 * vote key `reminder:<ms>`, which the hooks took for a reminder's (`reminder:<vote key>`): the
 * http hook's body said `"type": "reminder"` and the exec hook's LISTING_HOOK_TYPE too. Over a real
 * socket and a real child process.
 */

/** The vote of a voter whose service user ID is `reminder`: its key is `reminder:<ms>`. */
const voteOfReminderUser = (): Vote => voteAt('reminder', Date.parse('2025-01-01T12:00:00.000Z'));

/** An exec hook whose command writes its `LISTING_HOOK_TYPE` and the `type` of its stdin to `file`. */
function recordingCommand(file: string): string[] {
  const script =
    "let s='';process.stdin.on('data',(c)=>s+=c).on('end',()=>require('node:fs').writeFileSync(" +
    `${JSON.stringify(file)},JSON.stringify({env:process.env.LISTING_HOOK_TYPE,stdin:JSON.parse(s).type})))`;
  return [process.execPath, '-e', script];
}

async function execTypes(kind: HookKind | undefined): Promise<{ env: string; stdin: string }> {
  const file = join(await mkdtemp(join(tmpdir(), 'la-hook-kind-')), 'seen.json');
  const hook = createExecHook({ name: 'exec', command: recordingCommand(file), ...(kind ? { kind } : {}) });
  const vote = voteOfReminderUser();
  await hook.run(vote, hookContext(vote));
  return JSON.parse(await readFile(file, 'utf8')) as { env: string; stdin: string };
}

describe('what a hook carries is decided where it is made, never by a key (issue 34, item 5)', () => {
  it('an http hook sends a vote whose voter is called reminder as a vote; made for reminders, as a reminder', async () => {
    const server = await startRecordingHook();
    const vote = voteOfReminderUser();
    expect(vote.key).toBe('reminder:1735732800000');
    await createHttpHook({ name: 'reward', url: server.url }).run(vote, hookContext(vote));
    await createHttpHook({ name: 'dm', url: server.url, kind: 'reminder' }).run(vote, hookContext(vote));
    expect(server.calls.map((call) => [call.type, call.key])).toEqual([
      ['vote', 'reminder:1735732800000'],
      ['reminder', 'reminder:1735732800000'],
    ]);
  });

  it("an exec hook's LISTING_HOOK_TYPE and stdin say vote for it; made for reminders, reminder", async () => {
    expect(await execTypes(undefined)).toEqual({ env: 'vote', stdin: 'vote' });
    expect(await execTypes('reminder')).toEqual({ env: 'reminder', stdin: 'reminder' });
  });

  it('hooksFromConfig makes the hooks of a votes.hooks list for votes, and with kind reminder for reminders', async () => {
    const server = await startRecordingHook();
    const config = parseConfig({ service: { token: 'a.b.c' }, votes: { hooks: [{ name: 'reward', url: server.url }] } });
    const run = async (hooks: VoteHook[]) => {
      const vote = voteOfReminderUser();
      for (const hook of hooks) await hook.run(vote, hookContext(vote));
    };
    await run(hooksFromConfig(config.votes.hooks));
    await run(hooksFromConfig(config.votes.hooks, { kind: 'reminder' }));
    expect(server.calls.map((call) => call.type)).toEqual(['vote', 'reminder']);
  });

  it('an agent gives such a vote to the vote listener and the vote hooks; only its reminder, when due, to the reminders', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const server = await startRecordingHook();
    let offsetMs = 0;
    const agent = createListingAgent({
      config: {
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        health: { enabled: false },
        state: { directory: await mkdtemp(join(tmpdir(), 'la-hook-kind-agent-')) },
        votes: { enabled: true, hooks: [{ name: 'reward', url: server.url }], reminders: { enabled: true, delay: '0s', hooks: [{ name: 'dm', url: server.url }] } },
      },
      now: () => Date.now() + offsetMs,
      transport: { retry: { maxAttempts: 1 } },
      votes: { reminderLookMs: 20 },
    });
    const rewarded: Vote[] = [];
    const reminded: Vote[] = [];
    agent.on('vote', (vote) => void rewarded.push(vote));
    agent.on('reminder', (vote) => void reminded.push(vote));
    await agent.start();
    try {
      const vote = { ...voteAt('reminder', Date.now() - 60_000), projectId: fx.projectId };
      await agent.votePipeline!.ingest([vote], 'poll');
      await vi.waitFor(() => expect(server.calls).toHaveLength(1), { timeout: 5_000 });
      expect([rewarded.map((v) => v.key), reminded, server.calls[0]!.type]).toEqual([[vote.key], [], 'vote']);
      // Past its expiry: its reminder, keyed reminder:<its key>, goes to the reminders alone.
      offsetMs = Date.parse(vote.expiresAt) - Date.now() + 60_000;
      await vi.waitFor(() => expect(reminded).toHaveLength(1), { timeout: 5_000 });
      await vi.waitFor(() => expect(server.calls).toHaveLength(2), { timeout: 5_000 });
      expect(reminded[0]!.key).toBe(`reminder:${vote.key}`);
      expect(server.calls[1]).toMatchObject({ type: 'reminder', key: `reminder:${vote.key}` });
      expect(rewarded).toHaveLength(1);
    } finally {
      await agent.stop();
    }
  });
});
