import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileStore } from '../../../src/store/file.js';
import { createFileVoteLedger } from '../../../src/votes/ledger-file.js';
import { voteKey, type Vote } from '../../../src/votes/types.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** An emulator with a bot, and a folder with `agent.json` whose exec hook `reward` appends each key to `rewards.txt` (or fails). */
async function setup(options: { hookFails?: boolean } = {}) {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const cwd = await mkdtemp(join(tmpdir(), 'la-votes-cli-'));
  const rewards = join(cwd, 'rewards.txt');
  const script = options.hookFails
    ? 'console.error("the reward service is down"); process.exit(3)'
    : `require('node:fs').appendFileSync(${JSON.stringify(rewards)}, process.env.LISTING_VOTE_KEY + '\\n')`;
  const config = {
    service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
    state: { directory: './state' },
    votes: { enabled: true, hooks: [{ type: 'exec', name: 'reward', command: [process.execPath, '-e', script], retries: 0 }] },
  };
  await writeFile(join(cwd, 'agent.json'), JSON.stringify(config));
  const cli = (...args: string[]) => runCliInProcess(['votes', ...args, '--config', 'agent.json'], { cwd, env: {} });
  const read = () => readFile(rewards, 'utf8').catch(() => '');
  return { emu, fx, cwd, cli, rewards: read, stateDir: join(cwd, 'state') };
}

function vote(userId: string, createdAt: number, projectId = '1'): Vote {
  return {
    key: voteKey(userId, createdAt),
    userId,
    platformId: null,
    projectId,
    weight: 1,
    createdAt: iso(createdAt),
    expiresAt: iso(createdAt + 12 * HOUR),
    road: 'poll',
  };
}

/** Writes dead letters into the journal of `directory`, as an agent whose hooks gave up would have. */
async function deadLetters(directory: string, letters: { vote: Vote; hook: string }[]) {
  const ledger = createFileVoteLedger({ directory });
  await ledger.open();
  await ledger.recordPending(letters.map((l) => l.vote));
  for (const { vote: v, hook } of letters) {
    await ledger.recordDeadLetter({ key: v.key, hook, vote: v, attempts: 6, error: `${hook} failed: exit 3`, failedAt: iso(Date.now()) });
  }
  await ledger.close();
}

describe('listing-agent votes failed / retry', () => {
  it('lists dead letters without the state lock, beside a running agent, as text or JSON lines', async () => {
    const t = await setup();
    const none = await t.cli('failed');
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('No vote journal at');

    const a = vote('111', Date.now() - HOUR);
    const b = vote('222', Date.now() - HOUR / 2);
    await deadLetters(t.stateDir, [{ vote: a, hook: 'reward' }, { vote: b, hook: 'vote-event' }]);
    // Another agent holds the state directory: `failed` still reads, `retry` refuses.
    const agentStore = createFileStore({ directory: t.stateDir, owner: { pid: 999_999, host: 'test-host' } });
    await agentStore.open();
    try {
      const listed = await t.cli('failed');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain('2 dead letters in');
      expect(listed.stdout).toContain(`${a.key}  hook reward  6 attempts`);
      expect(listed.stdout).toContain(`${b.key}  hook vote-event`);
      const json = await t.cli('failed', '--json');
      const lines = json.stdout.trim().split('\n').map((line) => JSON.parse(line));
      expect(lines.map((l) => [l.key, l.hook])).toEqual([[a.key, 'reward'], [b.key, 'vote-event']]);
      expect(lines[0].vote).toMatchObject({ userId: '111', createdAt: a.createdAt });

      const refused = await t.cli('retry');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/listing-agent votes retry: .*pid 999999/);
    } finally {
      await agentStore.close();
    }
  });

  it('replays the chosen dead letters through the configured hook, leaving the in-process ones alone', async () => {
    const t = await setup();
    const a = vote('111', Date.now() - HOUR);
    const c = vote('333', Date.now() - HOUR / 4);
    const b = vote('222', Date.now() - HOUR / 2);
    await deadLetters(t.stateDir, [{ vote: a, hook: 'reward' }, { vote: c, hook: 'reward' }, { vote: b, hook: 'vote-event' }]);

    const one = await t.cli('retry', '--key', a.key);
    expect(one.stderr).toBe('');
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('Replayed 1 dead letter: 1 succeeded, 0 failed again.');
    expect(await t.rewards()).toBe(`${a.key}\n`);

    const rest = await t.cli('retry');
    expect(rest.code).toBe(0);
    expect(rest.stdout).toContain('Replayed 1 dead letter: 1 succeeded');
    expect(rest.stdout).toContain('1 dead letters of hooks not in the config (vote-event) were left alone');
    expect(await t.rewards()).toBe(`${a.key}\n${c.key}\n`);

    const left = await t.cli('failed', '--json');
    expect(left.stdout.trim().split('\n').map((line) => JSON.parse(line).hook)).toEqual(['vote-event']);
    const again = await t.cli('retry', '--hook', 'reward');
    expect(again.stdout).toContain('No dead letter matches');
    const unknown = await t.cli('retry', '--hook', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no configured vote hook is named "nope"; the hooks are: reward');
  });

  it('reports a hook that fails again (exit 1) and keeps its dead letter', async () => {
    const t = await setup({ hookFails: true });
    const a = vote('111', Date.now() - HOUR);
    await deadLetters(t.stateDir, [{ vote: a, hook: 'reward' }]);
    const res = await t.cli('retry');
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('Replayed 1 dead letter: 0 succeeded, 1 failed again.');
    expect(res.stdout).toContain(`failed  ${a.key}  hook reward`);
    expect(res.stdout).toContain('the reward service is down');
    const listed = await t.cli('failed');
    expect(listed.stdout).toContain('1 dead letter in');
  });
});

describe('listing-agent votes check / list', () => {
  it('checks a user by service ID or Discord ID', async () => {
    const t = await setup();
    const voter = t.emu.admin.createUser({ username: 'voter' });
    const idle = t.emu.admin.createUser({ username: 'idle' });
    const cast = t.emu.admin.castVote({ project_id: t.fx.projectId, user_id: voter.id });

    const yes = await t.cli('check', voter.id);
    expect(yes.code).toBe(0);
    expect(yes.stdout).toBe(`${voter.id} has voted: at ${cast.created_at} (weight ${cast.weight}); may vote again at ${cast.expires_at}.\n`);
    const byDiscord = await t.cli('check', voter.platform_id, '--source', 'discord', '--json');
    expect(JSON.parse(byDiscord.stdout)).toEqual({ user: voter.platform_id, source: 'discord', voted: true, created_at: cast.created_at, expires_at: cast.expires_at, weight: cast.weight });
    const no = await t.cli('check', idle.id);
    expect(no.code).toBe(0);
    expect(no.stdout).toContain(`${idle.id} has no active vote`);

    expect((await t.cli('check')).code).toBe(2);
    const badSource = await t.cli('check', voter.id, '--source', 'steam');
    expect(badSource.code).toBe(2);
    expect(badSource.stderr).toContain('--source must be one of topgg, discord');
  });

  it('lists the votes since a while ago as a table or JSON lines, with progress on stderr for many pages', async () => {
    const t = await setup();
    const voters = Array.from({ length: 5 }, (_, i) => t.emu.admin.createUser({ username: `v${i}` }));
    const now = Date.now();
    t.emu.admin.castVote({ project_id: t.fx.projectId, user_id: voters[0]!.id, created_at: iso(now - 30 * HOUR) });
    const recent = Array.from({ length: 150 }, (_, i) =>
      t.emu.admin.castVote({ project_id: t.fx.projectId, user_id: voters[i % 5]!.id, created_at: iso(now - 2 * HOUR + i * 1000) }),
    );

    const table = await t.cli('list', '--since', '24h');
    expect(table.code).toBe(0);
    const rows = table.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^CREATED_AT +USER_ID +PLATFORM_ID +WEIGHT +EXPIRES_AT$/);
    expect(rows).toHaveLength(151);
    expect(rows[1]!.split(/ +/)).toEqual([recent[0]!.created_at, recent[0]!.user_id, recent[0]!.platform_id, String(recent[0]!.weight), recent[0]!.expires_at]);
    expect(table.stderr).toContain('listing-agent votes list: 150 votes so far');
    expect(table.stderr).toMatch(/150 votes since .* \(3 pages\)/);

    const json = await t.cli('list', '--since', '3h', '--json');
    const lines = json.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(150);
    expect(lines[149]).toEqual({
      key: voteKey(recent[149]!.user_id, recent[149]!.created_at),
      user_id: recent[149]!.user_id,
      platform_id: recent[149]!.platform_id,
      weight: recent[149]!.weight,
      created_at: recent[149]!.created_at,
      expires_at: recent[149]!.expires_at,
    });
    const all = await t.cli('list', '--since', '2d', '--json');
    expect(all.stdout.trim().split('\n')).toHaveLength(151);

    const tooFar = await t.cli('list', '--since', '400d');
    expect(tooFar.code).toBe(2);
    expect(tooFar.stderr).toContain('one year');
    expect((await t.cli('list', '--since', 'soon')).code).toBe(2);
  });
});
