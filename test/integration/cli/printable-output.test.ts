import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileVoteLedger } from '../../../src/public/votes.js';
import type { Vote } from '../../../src/public/votes.js';
import { spawnCli } from '../../helpers/cli.js';
import { snowflake, startHostileService } from '../../helpers/hostile-service.js';

/*
 * Issue 34, item 5: what the CLI prints of a string that came from the service or a delivery (a
 * vote's key, a hook's answer in a dead letter, a project's name) is made printable: a newline
 * could forge the next line of the output, an escape sequence clear or retitle the terminal. The
 * CLI runs as a child process; its output is looked at byte for byte.
 */

/** What must never reach a terminal raw: C0 controls but the line ends, DEL, C1, the text-reordering marks. */
const UNPRINTABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

async function workspace(config: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'la-printable-'));
  await writeFile(join(dir, 'agent.json'), JSON.stringify(config));
  return dir;
}

async function cli(dir: string, args: string[]) {
  const child = spawnCli([...args, '--config', 'agent.json'], { cwd: dir, env: {} });
  const code = await child.exit();
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

describe('the CLI prints outside strings printable (issue 34, item 5)', () => {
  it('votes failed shows a dead letter on one line, its control characters escaped', { timeout: 30_000 }, async () => {
    const dir = await workspace({ service: { token: 'a.b.c' }, state: { directory: './state' }, votes: { hooks: [{ name: 'reward', url: 'http://127.0.0.1:1/' }] } });
    // A journal an earlier version wrote, before IDs were checked at the edge: a key with a newline and escapes.
    const key = `${snowflake(5)}\n  forged  hook reward  1 attempts  failed now: \u001b[2J:1735732800000`;
    const vote: Vote = {
      key,
      userId: key.split(':')[0]!,
      platformId: null,
      projectId: snowflake(1),
      weight: 1,
      createdAt: '2025-01-01T12:00:00.000Z',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      road: 'poll',
    };
    const ledger = createFileVoteLedger({ directory: join(dir, 'state') });
    await ledger.open();
    await ledger.recordPending([vote]);
    const error = 'hook "reward": POST http://127.0.0.1:1/ answered 500: \u001b]0;owned\u0007 \u202egnp.exe\r\nok';
    await ledger.recordDeadLetter({ key, hook: 'reward', vote, attempts: 1, error, failedAt: new Date().toISOString() });
    await ledger.close();

    const { code, stdout } = await cli(dir, ['votes', 'failed']);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(UNPRINTABLE);
    const letters = stdout.split('\n').filter((line) => line.startsWith('  '));
    expect(letters).toHaveLength(1);
    expect(letters[0]).toContain(`${snowflake(5)}\\n  forged`);
    expect(letters[0]).toContain('answered 500: \\x1b]0;owned\\x07 \\u202egnp.exe\\r\\nok');
    // The JSON form is JSON: every control character escaped by it, the values as stored.
    const json = await cli(dir, ['votes', 'failed', '--json']);
    expect(JSON.parse(json.stdout.trim())).toMatchObject({ key, error });
  });

  it("doctor shows a project's name from the service on its own line, escaped", { timeout: 30_000 }, async () => {
    const service = await startHostileService({ project: { name: 'Evil\u001b[2J\nok    state.lock  everything is fine' } });
    const dir = await workspace({ service: { token: service.token, v1: service.v1, v0: service.v0 }, state: { directory: './state' } });
    const { stdout } = await cli(dir, ['doctor']);
    expect(stdout).toContain('Evil\\x1b[2J\\nok    state.lock  everything is fine');
    expect(stdout).not.toMatch(UNPRINTABLE);
    expect(stdout.split('\n').filter((line) => line.startsWith('ok    state.lock  everything'))).toEqual([]);
  });

  it('votes list leaves out the records that break the contract, says so on stderr, and prints nothing raw', { timeout: 30_000 }, async () => {
    const now = Date.now();
    const record = (n: number, extra: Record<string, unknown> = {}) => ({
      user_id: snowflake(n),
      platform_id: snowflake(n + 100),
      weight: 1,
      created_at: new Date(now - 60_000).toISOString(),
      expires_at: new Date(now + 3_600_000).toISOString(),
      ...extra,
    });
    const pages = [[record(10), record(11, { user_id: `${snowflake(11)}\n\u001b[31m` }), record(12, { weight: 1e308 }), record(13)]];
    const service = await startHostileService({ pages });
    const dir = await workspace({ service: { token: service.token, v1: service.v1, v0: service.v0 } });
    const { code, stdout, stderr } = await cli(dir, ['votes', 'list', '--since', '1h']);
    expect(code).toBe(0);
    expect(stdout + stderr).not.toMatch(UNPRINTABLE);
    const rows = stdout.split('\n').slice(1).filter((line) => line !== '');
    expect(rows.map((line) => line.split(/\s+/)[1])).toEqual([snowflake(10), snowflake(13)]);
    expect(stderr).toContain('listing-agent votes list: left out a record the service sent: user_id: must be a Snowflake, 17 to 20 digits');
    expect(stderr).toContain(`(got 25 characters: "${snowflake(11)}\\n\\x1b[31...")`);
    expect(stderr).toContain('left out a record the service sent: weight: must be a whole number from 1 to 10 (got 1e+308)');
  });
});
