import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createListingAgent, type AgentConfigInput, type AgentLogger, type ListingAgent, type Vote } from '../../../src/index.js';
import { createManualScheduler, type ManualScheduler } from '../../helpers/manual-scheduler.js';
import { spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';

/*
 * A first start (no checkpoint in the state directory) rewards only the votes cast from that start
 * on, unless votes.lookback asks for a backfill: a bot moving from its own reward code, or from
 * another state directory, must not pay its voters twice. One line says what was skipped and how
 * to backfill. A restart with a checkpoint goes on from it, as before. Through the package entry,
 * against the emulator, with the poll schedule driven by hand (the first poll runs at the start).
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface Line {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

function recordingLogger(lines: Line[]): AgentLogger {
  const at = (level: string) => (obj: object | string, msg?: string) =>
    void lines.push(typeof obj === 'string' ? { level, msg: obj, fields: {} } : { level, msg: msg ?? '', fields: obj as Record<string, unknown> });
  const logger: AgentLogger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: () => logger };
  return logger;
}

const agents: ListingAgent[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 3_000 })));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

interface World {
  emu: TestEmulator;
  fx: BotFixture;
  directory: string;
  /** Casts a vote by a new voter `agoMs` before now. */
  cast(agoMs: number): { user_id: string; created_at: string };
}

async function world(): Promise<World> {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const directory = await mkdtemp(join(tmpdir(), 'la-first-start-'));
  dirs.push(directory);
  let voters = 0;
  const cast = (agoMs: number) => {
    const voter = emu.admin.createUser({ username: `voter${(voters += 1)}` });
    return emu.admin.castVote({ project_id: fx.projectId, user_id: voter.id, created_at: new Date(Date.now() - agoMs).toISOString() });
  };
  return { emu, fx, directory, cast };
}

/** An agent on `w`'s state directory, a `vote` listener attached before it starts; resolves once its first poll is done. */
async function startAgent(w: World, votes: AgentConfigInput['votes'] = {}) {
  const lines: Line[] = [];
  const rewarded: Vote[] = [];
  const schedules: ManualScheduler = createManualScheduler();
  const agent = createListingAgent({
    token: w.fx.projectToken,
    config: { service: { v1: w.emu.urls.v1, v0: w.emu.urls.v0 }, health: { enabled: false }, state: { directory: w.directory }, votes: { enabled: true, pollInterval: '5s', ...votes } },
    logger: recordingLogger(lines),
    transport: { retry: { maxAttempts: 1 } },
    votes: { schedules: schedules.factory },
  });
  agents.push(agent);
  agent.on('vote', (vote) => void rewarded.push(vote));
  await agent.start();
  await vi.waitFor(() => expect(lines.some((l) => l.msg === 'votes poll done' || l.msg === 'new votes from the cursor')).toBe(true), { timeout: 10_000, interval: 20 });
  /** Polls once more (what the next tick of the schedule does) and waits until `count` votes are rewarded. */
  const pollAgain = async (count: number) => {
    await schedules.get('votes-poll')!.tick();
    await vi.waitFor(() => expect(rewarded).toHaveLength(count), { timeout: 10_000, interval: 20 });
  };
  const firstStartLines = () => lines.filter((l) => l.msg.startsWith('votes: first start'));
  return { agent, lines, rewarded, pollAgain, firstStartLines };
}

describe('the first start of the votes cursor', () => {
  it('rewards no vote cast before it, says so in one warn line naming votes.lookback, and rewards the votes cast after it', async () => {
    const w = await world();
    const before = [w.cast(2 * HOUR), w.cast(10 * MINUTE), w.cast(1_000)];
    const started = Date.now();
    const a = await startAgent(w);
    expect(a.rewarded).toEqual([]);

    const [line, ...more] = a.firstStartLines();
    expect(more).toEqual([]);
    expect(line!.level).toBe('warn');
    expect(line!.msg).toMatch(
      /^votes: first start \(no checkpoint in .+\): rewarding votes cast from (\S+) on; earlier votes are not rewarded \(set votes\.lookback, e\.g\. 12h, before a first start to reward the votes the service still lists\)$/,
    );
    expect(line!.msg).toContain(`no checkpoint in ${w.directory})`);
    const from = Date.parse(/cast from (\S+) on/.exec(line!.msg)![1]!);
    expect(from).toBeGreaterThanOrEqual(started);
    expect(from).toBeGreaterThan(Date.parse(before[2]!.created_at));
    expect(line!.fields).toMatchObject({ project: w.fx.projectId, lookback: 0 });

    const after = w.cast(0);
    await a.pollAgain(1);
    expect(a.rewarded.map((vote) => vote.userId)).toEqual([after.user_id]);
    // Said once: the later polls are not first polls.
    expect(a.firstStartLines()).toHaveLength(1);
  });

  it('rewards the votes the service lists within votes.lookback when it is set: the explicit backfill, logged at info', async () => {
    const w = await world();
    const old = w.cast(13 * HOUR);
    const inside = [w.cast(11 * HOUR), w.cast(10 * MINUTE)];
    const a = await startAgent(w, { lookback: '12h' });
    await vi.waitFor(() => expect(a.rewarded).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(a.rewarded.map((vote) => vote.userId).sort()).toEqual(inside.map((vote) => vote.user_id).sort());
    expect(a.rewarded.map((vote) => vote.userId)).not.toContain(old.user_id);
    const [line, ...more] = a.firstStartLines();
    expect(more).toEqual([]);
    expect(line!.level).toBe('info');
    expect(line!.msg).toMatch(/^votes: first start \(no checkpoint in .+\): rewarding votes cast from \S+ on \(votes\.lookback: 12h before the start\)$/);
    expect(a.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('goes on from the checkpoint at a restart, as before: the votes cast while it was stopped are rewarded, and no first-start line', async () => {
    const w = await world();
    const first = await startAgent(w);
    const during = w.cast(0);
    await first.pollAgain(1);
    await first.agent.stop();
    agents.splice(agents.indexOf(first.agent), 1);

    const whileStopped = [w.cast(0), w.cast(0)];
    const second = await startAgent(w);
    await vi.waitFor(() => expect(second.rewarded).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(second.rewarded.map((vote) => vote.userId).sort()).toEqual(whileStopped.map((vote) => vote.user_id).sort());
    expect(second.rewarded.map((vote) => vote.userId)).not.toContain(during.user_id);
    expect(second.firstStartLines()).toEqual([]);
  });

  it('says the same as the daemon, naming the variable too: a vote cast before is not sent to the hook, one cast after is', { timeout: 30_000 }, async () => {
    const w = await world();
    const hook = await startVoteHookServer();
    w.cast(5 * MINUTE);
    await writeFile(
      join(w.directory, 'config.json'),
      JSON.stringify({
        service: { token: w.fx.projectToken, v1: w.emu.urls.v1, v0: w.emu.urls.v0 },
        health: { enabled: false },
        state: { directory: './state' },
        log: { format: 'json' },
        votes: { enabled: true, pollInterval: '5s', hooks: [{ name: 'reward', url: hook.url }] },
      }),
    );
    const cli = spawnCli(['run', '--config', 'config.json'], { cwd: w.directory, env: {} });
    const line = JSON.parse(await cli.lineContaining('votes: first start', 15_000)) as { level: string; msg: string };
    expect(line.level).toBe('warn');
    expect(line.msg).toMatch(
      /^votes: first start \(no checkpoint in \.\/state\): rewarding votes cast from \S+ on; earlier votes are not rewarded \(set votes\.lookback \(LISTING_AGENT_VOTES_LOOKBACK\), e\.g\. 12h, before a first start to reward the votes the service still lists\)$/,
    );
    const after = w.cast(0);
    await vi.waitFor(() => expect(hook.calls).toHaveLength(1), { timeout: 15_000, interval: 50 });
    expect(hook.calls[0]!.userId).toBe(after.user_id);
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
    expect(hook.calls).toHaveLength(1);
  });
});
