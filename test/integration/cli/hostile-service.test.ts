import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signDelivery } from '../../../src/contract/signature.js';
import { spawnCli, type CliChild } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { freePort } from '../../helpers/ports.js';
import { snowflake, startHostileService, startRecordingHook, type RecordedHookCall } from '../../helpers/hostile-service.js';

/*
 * Issue 34, item 5, as the issue found it: a compromised or buggy service sends votes with
 * hostile fields, by the votes cursor and by signed (and legacy v0) deliveries: weight 1e+308 and
 * 0.5, dates in year +275760 (a dedupe key kept for ever) and far from now, 60,000-character IDs,
 * newlines and control characters in IDs, a user ID `reminder`, a vote for another project. The
 * daemon runs as a child process against a fake service on 127.0.0.1; only the valid votes reach
 * the hook, every other one is refused with its reason in the log, a bad record never costs the
 * rest of its page, and the cursor moves past it.
 */

const SECRET = 'whs_hostile_fields_secret_0123456789';
const LEGACY = 'legacy-authorization-0123456789';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FAR = '+275760-09-12T00:00:00.000Z';
const FARTHEST = '+275760-09-13T00:00:00.000Z';

/** A cursor record of user `n`, cast `agoMs` before `now`, lasting 12 h; `extra` overrides fields. */
function record(n: number, now: number, extra: Record<string, unknown> = {}, agoMs = 60_000) {
  const created = now - agoMs;
  return {
    user_id: snowflake(n),
    platform_id: snowflake(n + 1_000),
    weight: 1,
    created_at: new Date(created).toISOString(),
    expires_at: new Date(created + 12 * HOUR).toISOString(),
    ...extra,
  };
}

/** The `data` of a `vote.create` by user `n`; `data` and `user` override fields. */
function voteData(n: number, now: number, project: { id: string; platform_id: string }, over: { data?: object; user?: object } = {}) {
  return {
    id: snowflake(n + 5_000),
    weight: 1,
    created_at: new Date(now - 1_000).toISOString(),
    expires_at: new Date(now - 1_000 + 12 * HOUR).toISOString(),
    project: { ...project, type: 'bot', platform: 'discord' },
    user: { id: snowflake(n), platform_id: snowflake(n + 1_000), name: `voter${n}`, avatar_url: null, ...over.user },
    ...over.data,
  };
}

async function deliver(url: string, data: unknown) {
  const body = JSON.stringify({ type: 'vote.create', data });
  const headers = signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) });
  return call(url, { body, headers: { 'content-type': 'application/json', ...headers } });
}

const deliverLegacy = (url: string, body: unknown) => call(url, { json: body, authorization: LEGACY });

async function until<T>(what: string, daemon: CliChild, check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (daemon.child.exitCode !== null) throw new Error(`the daemon exited (${daemon.child.exitCode}): ${daemon.stderr()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stdout: ${daemon.stdout().slice(-4_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const logLines = (daemon: CliChild) =>
  daemon
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('hostile fields from the service (issue 34, item 5)', () => {
  it('the daemon takes only valid votes from the cursor and from deliveries, logs each refusal, and moves the cursor on', { timeout: 90_000 }, async () => {
    const now = Date.now();
    const pages = [
      [
        record(10, now),
        record(20, now, { weight: 1e308 }),
        record(21, now, { weight: 0.5 }),
        record(22, now, { created_at: FAR, expires_at: FARTHEST }),
        record(23, now, {}, 2 * 365 * DAY),
        record(24, now, { expires_at: '9999-12-31T23:59:59.000Z' }),
        record(25, now, { user_id: '1'.repeat(60_000) }),
        record(26, now, { user_id: 'reminder' }),
        record(27, now, { user_id: `${snowflake(27)}\n{"level":50,"msg":"forged"}` }),
        record(28, now, { platform_id: `${snowflake(28)}\u001b[2J` }),
        record(11, now, { weight: 2 }),
      ],
      // A record of the wrong type: today it cost the whole page, and the cursor stayed before it for ever.
      [record(29, now, { weight: '1' }), record(12, now)],
    ];
    const service = await startHostileService({ pages });
    const hook = await startRecordingHook();
    const webhooksPort = await freePort();
    const dir = await mkdtemp(join(tmpdir(), 'la-hostile-fields-'));
    const config = {
      service: { token: '${PROJECT_TOKEN}', v1: service.v1, v0: service.v0 },
      health: { enabled: false },
      state: { directory: './state' },
      log: { format: 'json', level: 'info' },
      webhooks: { enabled: true, listen: `127.0.0.1:${webhooksPort}`, secrets: [SECRET], legacyAuthorization: LEGACY },
      votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ name: 'reward', url: hook.url, retries: 0 }] },
    };
    await writeFile(join(dir, 'agent.json'), JSON.stringify(config));
    const daemon = spawnCli(['run', '--config', 'agent.json'], { cwd: dir, env: { PROJECT_TOKEN: service.token } });
    await daemon.lineContaining('agent ready', 20_000);

    // The cursor: the valid votes of both pages, and the cursor past both (c2, then the empty page).
    const rewarded = (calls: RecordedHookCall[]) => new Set(calls.map((c) => c.vote.user_id as string));
    await until('the cursor votes', daemon, () => (rewarded(hook.calls).has(snowflake(12)) ? true : undefined));
    await until('the cursor past both pages', daemon, () => (service.requests.some((r) => r.includes('cursor=c2')) ? true : undefined));

    const receiver = `http://127.0.0.1:${webhooksPort}/webhooks/listing`;
    const own = { id: service.projectId, platform_id: service.platformId };
    const refusedDeliveries: [string, unknown][] = [
      ['weight 1e+308', voteData(40, now, own, { data: { weight: 1e308 } })],
      ['weight 0.5', voteData(41, now, own, { data: { weight: 0.5 } })],
      ['created in year +275760', voteData(42, now, own, { data: { created_at: FAR, expires_at: FARTHEST } })],
      ['created two years ago', voteData(43, now, own, { data: { created_at: new Date(now - 730 * DAY).toISOString() } })],
      ['created an hour ahead', voteData(44, now, own, { data: { created_at: new Date(now + HOUR).toISOString() } })],
      ['expiring before it was cast', voteData(45, now, own, { data: { expires_at: new Date(now - HOUR).toISOString() } })],
      ['expiring in a year', voteData(46, now, own, { data: { expires_at: new Date(now + 365 * DAY).toISOString() } })],
      ['a 60,000-character user ID', voteData(47, now, own, { user: { id: '9'.repeat(60_000) } })],
      ['the user ID reminder', voteData(48, now, own, { user: { id: 'reminder' } })],
      ['a newline in the user ID', voteData(49, now, own, { user: { id: `${snowflake(49)}\nforged` } })],
      ['a control character in the platform ID', voteData(50, now, own, { user: { platform_id: `\u001b]0;${snowflake(50)}` } })],
      ['a newline in the vote ID', voteData(51, now, own, { data: { id: `${snowflake(51)}\r\n` } })],
      ['another project', voteData(52, now, { id: snowflake(777), platform_id: snowflake(778) })],
    ];
    for (const [what, data] of refusedDeliveries) {
      const answer = await deliver(receiver, data);
      expect({ what, status: answer.status }).toEqual({ what, status: 400 });
    }
    expect((await deliver(receiver, voteData(60, now, own))).status).toBe(204);
    const legacy = { bot: service.platformId, user: snowflake(70), type: 'upvote', isWeekend: false };
    for (const [what, body] of [
      ['the user ID reminder', { ...legacy, user: 'reminder' }],
      ['a 60,000-character user ID', { ...legacy, user: '7'.repeat(60_000) }],
      ['a newline in the user ID', { ...legacy, user: `${snowflake(71)}\n` }],
      ['another bot', { ...legacy, bot: snowflake(779) }],
    ] as const) {
      expect({ what, status: (await deliverLegacy(receiver, body)).status }).toEqual({ what, status: 400 });
    }
    expect((await deliverLegacy(receiver, legacy)).status).toBe(204);
    await until('the webhook votes', daemon, () => (rewarded(hook.calls).has(snowflake(60)) && rewarded(hook.calls).has(snowflake(70)) ? true : undefined));

    // Every vote that reached the hook is a valid one; each valid one reached it once.
    expect([...rewarded(hook.calls)].sort()).toEqual([10, 11, 12, 60, 70].map(snowflake).sort());
    expect(hook.calls.map((c) => c.type)).toEqual(hook.calls.map(() => 'vote'));
    expect(hook.calls.find((c) => c.vote.user_id === snowflake(11))?.vote.weight).toBe(2);

    // One line for the first refusal of each reason, with the field and why; the rest counted.
    const lines = logLines(daemon);
    const cursorLines = lines.filter((line) => String(line.msg).startsWith('vote from the votes cursor refused'));
    expect(new Set(cursorLines.map((line) => line.reason))).toEqual(new Set(['bad_vote_weight', 'bad_vote_time', 'bad_vote_id', 'bad_vote_shape']));
    expect(cursorLines.find((line) => line.reason === 'bad_vote_weight')?.problem).toBe('weight: must be a whole number from 1 to 10 (got 1e+308)');
    const deliveryLines = lines.filter((line) => line.msg === 'webhook delivery refused');
    expect(deliveryLines.map((line) => line.reason).sort()).toEqual(
      ['bad_vote_id', 'bad_vote_time', 'bad_vote_weight', 'legacy_bad_vote_id', 'legacy_other_project', 'other_project'].sort(),
    );
    expect(deliveryLines.find((line) => line.reason === 'other_project')?.problem).toBe(
      `data.project.id: ${snowflake(777)} is not this agent's project (${service.projectId})`,
    );
    // No line carries a raw newline or escape of a hostile ID, nor the whole of a long one.
    expect(daemon.stdout()).not.toContain('1'.repeat(100));
    expect(daemon.stdout()).not.toContain('forged"}');
    const summary = await daemon.lineContaining('webhook deliveries refused in the last 10 s', 20_000);
    expect(JSON.parse(summary).refused).toMatchObject({ bad_vote_id: 5, bad_vote_time: 5, bad_vote_weight: 2, other_project: 1 });
    await daemon.lineContaining('votes from the cursor refused in the last 10 s', 20_000);

    // No key of a refused vote is kept: the year +275760 one would have been kept for ever.
    const journal = await readFile(join(dir, 'state', 'votes.journal'), 'utf8');
    for (const n of [20, 21, 22, 23, 24, 40, 42]) expect(journal).not.toContain(snowflake(n));
    daemon.child.kill('SIGTERM');
    expect(await daemon.exit()).toBe(0);
  });
});
