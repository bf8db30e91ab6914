import { mkdir, mkdtemp, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DOCTOR_CHECK_NAMES } from '../../../src/doctor/doctor.js';
import type { CheckResult, DoctorReport } from '../../../src/doctor/types.js';
import { issueProjectToken } from '../../../src/contract/project-token.js';
import { createWebhookReceiver } from '../../../src/webhooks/receiver.js';
import { runCliInProcess, spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscordRest } from '../../helpers/fake-discord/index.js';
import { freePort } from '../../helpers/ports.js';

/**
 * `listing-agent doctor` against the real emulator on 127.0.0.1: one all-ok run, and one test per
 * failing check, each with the fault the emulator (or the machine) can inject.
 */

// Planted secrets: none of them may appear in any output, text or JSON.
const BOT_TOKEN = 'planted-discord-bot-token-SECRET';
const WEBHOOK_SECRET = 'whs_planted_webhook_SECRET';
const PUSH_KEY = 'planted-push-key-SECRET';

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

type Json = Record<string, unknown>;

function merge(base: Json, extra: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = out[key];
    out[key] =
      value !== null && typeof value === 'object' && !Array.isArray(value) && current !== null && typeof current === 'object' && !Array.isArray(current)
        ? merge(current as Json, value as Json)
        : value;
  }
  return out;
}

/** An emulator with a bot, a work directory, and `doctor()` running the CLI there on `agent.json`. */
async function setup(config: Json = {}, options: { emulator?: TestEmulator; env?: Record<string, string> } = {}) {
  const emu = options.emulator ?? (await startTestEmulator({ settings: { allowHttpLoopback: true } }));
  const fx = setupBot(emu);
  const cwd = await mkdtemp(join(tmpdir(), 'la-doctor-'));
  // A reward hook the doctor never calls: votes need one to receive them, as 'run' does.
  const base = { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false }, votes: { hooks: [{ url: 'http://127.0.0.1:1/rewards' }] } };
  const write = (extra: Json) => writeFile(join(cwd, 'agent.json'), JSON.stringify(merge(base, extra)));
  await write(config);
  const secrets = [fx.projectToken, BOT_TOKEN, WEBHOOK_SECRET, PUSH_KEY, ...Object.values(options.env ?? {})];
  const doctor = async (...flags: string[]) => {
    const res = await runCliInProcess(['doctor', '--config', 'agent.json', ...flags], { cwd, env: options.env ?? {} });
    for (const secret of secrets) expect(res.stdout + res.stderr).not.toContain(secret);
    return res;
  };
  /** The report of `doctor --json`, with a check looked up by name. */
  const report = async (...flags: string[]) => {
    const res = await doctor('--json', ...flags);
    const parsed = JSON.parse(res.stdout) as DoctorReport;
    expect(res.code).toBe(parsed.exitCode);
    const check = (name: string): CheckResult => {
      const found = parsed.checks.find((c) => c.name === name);
      if (!found) throw new Error(`no check ${name}`);
      return found;
    };
    return { ...parsed, code: res.code, check };
  };
  return { emu, fx, cwd, write, doctor, report };
}

async function webhookConfig(extra: Json = {}): Promise<Json> {
  const port = await freePort();
  return { webhooks: { enabled: true, secrets: [WEBHOOK_SECRET], listen: `127.0.0.1:${port}`, publicUrl: `http://127.0.0.1:${port}/webhooks/listing`, ...extra } };
}

describe('listing-agent doctor', () => {
  it('passes every check of a sound setup, exit 0, in the documented --json shape, with no secret shown', async () => {
    const discord = await startFakeDiscordRest({ approximateGuildCount: 1_234, recommendedShards: 2, token: BOT_TOKEN });
    const t = await setup(
      merge(
        {
          discord: { token: BOT_TOKEN, apiBaseUrl: discord.url },
          stats: { enabled: true, source: 'discord-rest' },
          commands: { enabled: true, source: 'file', file: 'commands.json' },
          votes: { enabled: true },
        },
        await webhookConfig(),
      ),
    );
    await writeFile(join(t.cwd, 'commands.json'), JSON.stringify([{ name: 'ping', description: 'Is the bot there?' }]));
    t.emu.admin.castVote({ project_id: t.fx.projectId, user_id: t.fx.ownerId });

    const r = await t.report('--probe');
    expect(r.code).toBe(0);
    expect(r).toMatchObject({ version: 1, status: 'ok', exitCode: 0 });
    expect(r.checks.map((c) => c.name)).toEqual(DOCTOR_CHECK_NAMES);
    for (const check of r.checks) {
      expect(Object.keys(check).sort()).toEqual(expect.arrayContaining(['durationMs', 'name', 'status', 'summary']));
      expect(['ok', 'skip']).toContain(check.status);
      expect(check.fix).toBeUndefined();
    }
    expect(r.check('service.token').summary).toBe(`accepted: project Test Bot (ID ${t.fx.projectId}, discord bot)`);
    expect(r.check('service.clock').status).toBe('ok');
    expect(r.check('stats.source')).toMatchObject({ status: 'ok', details: { serverCount: 1_234, shardCount: 2 } });
    expect(r.check('commands.source').summary).toContain('1 valid command, never synced yet');
    // No checkpoint yet: a first start lists from its start on, so the vote cast before is not on the next page.
    expect(r.check('votes.cursor')).toMatchObject({
      status: 'ok',
      summary:
        'answers, 0 new votes on the next page; no cursor stored yet: a first start rewards votes cast from its start on; earlier votes are not rewarded ' +
        '(set votes.lookback (LISTING_AGENT_VOTES_LOOKBACK), e.g. 12h, before a first start to reward the votes the service still lists)',
      details: { nextPageVotes: 0, cursor: null },
    });
    expect(r.check('webhooks.secret').summary).toBe('1 v1 secret (1 in webhooks.secrets); none is shown');
    expect(r.check('webhooks.port').details).toMatchObject({ holder: 'none' });
    expect(r.check('webhooks.url').status).toBe('skip');
    expect(r.check('webhooks.url').summary).toContain('needs an OAuth access token with project.webhooks.read');
    expect(r.check('webhooks.probe').summary).toContain('came back to a receiver the doctor ran on');
    expect(r.check('state.directory').summary).toContain('does not exist yet: the agent creates it');
    expect(r.check('redis.server').status).toBe('skip');

    const text = await t.doctor('--probe');
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines.slice(0, DOCTOR_CHECK_NAMES.length).map((line) => line.split(/\s+/).slice(0, 2))).toEqual(
      r.checks.map((c) => [c.status, c.name]),
    );
    expect(lines.at(-1)).toMatch(/^17 checks: \d+ ok, 0 warn, 0 fail, \d+ skipped$/);
  });

  it('fails service.token when the service refuses the token (401), exit 2, as a real process too', async () => {
    const emu = await startTestEmulator();
    // Well-formed, but signed with another key than the service's: the service answers 401.
    const forged = issueProjectToken('not-the-service-key', setupBot(emu).platformId, Math.floor(Date.now() / 1000));
    const t = await setup({ service: { token: forged } }, { emulator: emu });
    const r = await t.report();
    expect(r.code).toBe(2);
    expect(r.check('service.token')).toMatchObject({ status: 'fail', summary: expect.stringContaining('refused the token (401') });
    expect(r.check('service.token').fix).toContain('service.token (LISTING_AGENT_SERVICE_TOKEN)');
    // A 401 still carries the service's Date: the clock is compared all the same.
    expect(r.check('service.clock').status).toBe('ok');

    const child = spawnCli(['doctor', '--config', 'agent.json'], { cwd: t.cwd, env: {} });
    expect(await child.exit()).toBe(2);
    expect(child.stdout()).toMatch(/^fail {2}service\.token/m);
    expect(child.stdout()).not.toContain(forged);
  });

  it('fails service.token with the address when the service is down, and skips the clock', async () => {
    const t = await setup({ votes: { enabled: true } });
    await t.emu.close();
    const r = await t.report();
    expect(r.code).toBe(2);
    expect(r.check('service.token')).toMatchObject({ status: 'fail', summary: `cannot reach the service at ${t.emu.urls.v1}/projects/@me: connection refused (nothing listens there)` });
    expect(r.check('service.clock')).toMatchObject({ status: 'skip' });
    expect(r.check('votes.cursor')).toMatchObject({ status: 'skip', summary: 'needs the service to accept the token (see service.token)' });
  });

  it('fails service.token when the connection is reset', async () => {
    const t = await setup();
    expect((await t.emu.adminCall('/faults', { json: { path: '/api/v1/projects/@me', reset: true } })).status).toBe(201);
    const r = await t.report();
    expect(r.check('service.token')).toMatchObject({ status: 'fail', summary: expect.stringContaining('cannot reach the service') });
    expect(r.code).toBe(2);
  });

  it('fails service.token when the service answers 5xx, without retrying', async () => {
    const t = await setup();
    t.emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 503, count: 5 });
    const r = await t.report();
    expect(r.check('service.token')).toMatchObject({ status: 'fail', summary: expect.stringContaining('the service failed to answer (503') });
    expect(r.check('service.token').fix).toContain('try again later');
    expect(t.emu.admin.requests().filter((q) => q.path === '/api/v1/projects/@me')).toHaveLength(1);
  });

  it('ends within its timeout when the service answers too slowly', async () => {
    const t = await setup({ votes: { enabled: true } });
    t.emu.admin.injectFault({ path: '/api/v1/projects/@me', delay_ms: 3_000 });
    const started = Date.now();
    const r = await t.report('--timeout', '400');
    const elapsed = Date.now() - started;
    expect(r.check('service.token')).toMatchObject({ status: 'fail', summary: expect.stringContaining('no answer within') });
    expect(r.check('votes.cursor').status).not.toBe('ok');
    expect(r.code).toBe(2);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('warns of a drifting clock and fails one beyond the signature tolerance', async () => {
    const t = await setup();
    t.emu.admin.advanceClock(90);
    const drifting = await t.report();
    expect(drifting.check('service.clock')).toMatchObject({ status: 'warn', summary: expect.stringMatching(/this machine is (89|90|91) s behind the service/) });
    expect(drifting.code).toBe(1);
    t.emu.admin.advanceClock(400);
    const off = await t.report();
    expect(off.check('service.clock')).toMatchObject({ status: 'fail', summary: expect.stringContaining('signed webhook deliveries are refused as stale') });
    expect(off.check('service.clock').fix).toContain('timedatectl set-ntp true');
    expect(off.code).toBe(2);
  });

  it('fails the config and webhooks.secret when the receiver has no secret, and skips what needs a config', async () => {
    const t = await setup({ webhooks: { enabled: true } });
    const r = await t.report();
    expect(r.code).toBe(2);
    expect(r.check('config')).toMatchObject({ status: 'fail', summary: expect.stringContaining('webhooks.secrets') });
    expect(r.check('webhooks.secret')).toMatchObject({ status: 'fail', summary: expect.stringContaining('has no secret') });
    expect(r.check('service.token').status).toBe('skip');
    expect(r.checks.map((c) => c.name)).toEqual(DOCTOR_CHECK_NAMES);
  });

  it('fails webhooks.port when another program holds webhooks.listen, and the probe skips', async () => {
    const config = await webhookConfig();
    const port = Number(/:(\d+)$/.exec((config.webhooks as { listen: string }).listen)![1]);
    const other = createServer((_req, res) => res.writeHead(404).end('not here'));
    servers.push(other);
    await new Promise<void>((resolve) => other.listen(port, '127.0.0.1', resolve));
    const t = await setup(config);
    const r = await t.report('--probe');
    expect(r.check('webhooks.port')).toMatchObject({ status: 'fail', summary: `127.0.0.1:${port} is taken by another program: it answered 404 to a signed webhook.test on /webhooks/listing` });
    expect(r.check('webhooks.port').fix).toContain('webhooks.listen (LISTING_AGENT_WEBHOOKS_LISTEN)');
    expect(r.check('webhooks.probe').status).toBe('skip');
  });

  it('fails webhooks.probe when the public URL leads nowhere', async () => {
    const nowhere = await freePort();
    const t = await setup(await webhookConfig({ publicUrl: `http://127.0.0.1:${nowhere}/webhooks/listing?token=${WEBHOOK_SECRET}` }));
    const r = await t.report('--probe');
    expect(r.check('webhooks.probe')).toMatchObject({ status: 'fail', summary: expect.stringContaining('did not come back') });
    // Shown as every printout shows a URL: the token redacted.
    expect(r.check('webhooks.probe').summary).toContain(`http://127.0.0.1:${nowhere}/webhooks/listing?token=redacted`);
    expect(r.check('webhooks.probe').summary).not.toContain(WEBHOOK_SECRET);
    expect(r.check('webhooks.probe').fix).toContain('tunnel');
    // Without --probe nothing is sent.
    expect((await t.report()).check('webhooks.probe').status).toBe('skip');
  });

  it('warns of a state.lock left by an agent whose heartbeat stopped', async () => {
    const t = await setup();
    const state = join(t.cwd, 'state');
    await mkdir(state);
    await writeFile(join(state, 'state.lock'), JSON.stringify({ pid: 4242, host: 'another-host', startedAt: '2026-01-01T00:00:00.000Z' }));
    const old = new Date(Date.now() - 60_000);
    await utimes(join(state, 'state.lock'), old, old);
    const r = await t.report();
    expect(r.check('state.lock')).toMatchObject({ status: 'warn', summary: expect.stringContaining('is left over by pid 4242 on host another-host') });
    expect(r.check('state.lock').fix).toContain('takes it over by itself');
    expect(r.code).toBe(1);
  });

  it('fails state.directory when it is a file', async () => {
    const t = await setup({ state: { directory: 'not-a-dir' } });
    await writeFile(join(t.cwd, 'not-a-dir'), 'x');
    const r = await t.report();
    expect(r.check('state.directory')).toMatchObject({ status: 'fail', summary: expect.stringContaining('is a file, not a directory') });
  });

  it('fails commands.source for a commands file that cannot be read, or breaks the rules', async () => {
    const t = await setup({ commands: { enabled: true, source: 'file', file: 'commands.json' } });
    await mkdir(join(t.cwd, 'commands.json'));
    const unreadable = await t.report();
    expect(unreadable.check('commands.source')).toMatchObject({ status: 'fail', summary: expect.stringContaining('is a directory, not a JSON file') });
    expect(unreadable.check('commands.source').fix).toContain('commands.file (LISTING_AGENT_COMMANDS_FILE)');

    await t.write({ commands: { enabled: true, source: 'file', file: 'bad.json' } });
    await writeFile(join(t.cwd, 'bad.json'), JSON.stringify([{ name: 'Has Spaces', description: 'x' }]));
    const invalid = await t.report();
    expect(invalid.check('commands.source')).toMatchObject({ status: 'fail', summary: expect.stringContaining("break the listing's rules") });
    expect(invalid.check('commands.source').details?.problems).toEqual([expect.stringContaining('name')]);
  });

  it('fails stats.source when Discord refuses the bot token', async () => {
    const discord = await startFakeDiscordRest({ token: 'the-real-one' });
    const t = await setup({ discord: { token: BOT_TOKEN, apiBaseUrl: discord.url }, stats: { enabled: true, source: 'discord-rest' } });
    const r = await t.report();
    expect(r.check('stats.source')).toMatchObject({ status: 'fail', summary: expect.stringContaining('discord.token') });
  });

  it('warns when no agent runs the push endpoint, and fails the embedded source as run would refuse it', async () => {
    const port = await freePort();
    const t = await setup({ stats: { enabled: true, source: 'push', push: { key: PUSH_KEY, listen: `127.0.0.1:${port}` } } });
    const push = await t.report();
    expect(push.check('stats.source')).toMatchObject({ status: 'warn', summary: `nothing listens at http://127.0.0.1:${port}/stats: the push endpoint is the running agent's, and the bot's reports go nowhere until it runs` });

    await t.write({ stats: { enabled: true, source: 'embedded' } });
    const embedded = await t.report();
    const refusal =
      'stats.source: is embedded (the default), but outside the bot there are no counts to read: set stats.source (LISTING_AGENT_STATS_SOURCE) to discord-rest (with discord.token), push or redis; embedded counts come only from an agent made inside the bot with createListingAgent';
    expect(embedded.check('config')).toMatchObject({ status: 'fail', details: { problems: [refusal] } });
    expect(embedded.check('stats.source')).toMatchObject({ status: 'fail', summary: refusal });
  });

  it('says how far back a first start lists with votes.lookback set: the vote cast before it is on the next page', async () => {
    const t = await setup({ votes: { enabled: true, lookback: '12h' } });
    t.emu.admin.castVote({ project_id: t.fx.projectId, user_id: t.fx.ownerId });
    const r = await t.report();
    expect(r.check('votes.cursor')).toMatchObject({
      status: 'ok',
      summary: 'answers, 1 new vote on the next page; no cursor stored yet: a first start rewards votes cast from 12h before it on (votes.lookback)',
      details: { nextPageVotes: 1, cursor: null },
    });
  });

  it('warns when the service refuses the stored votes cursor (400)', async () => {
    const t = await setup({ votes: { enabled: true } });
    const state = join(t.cwd, 'state');
    await mkdir(state);
    const cursorState = { cursor: 'not-a-cursor-the-service-issued', newestCreatedAt: '2026-11-25T10:00:00.000Z', newestKey: 'u:1' };
    await writeFile(join(state, 'state.json'), JSON.stringify({ version: 1, data: { [`votes:cursor:${t.fx.projectId}`]: cursorState } }));
    const r = await t.report();
    expect(r.check('votes.cursor')).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('refused the stored cursor (400)'),
      details: { cursor: 'not-a-cursor-the-service-issued', newestVoteAt: '2026-11-25T10:00:00.000Z' },
    });
  });

  it('names the variables that override the file, and warns of a webhook secret that is not one, never printing it', async () => {
    const port = await freePort();
    const pasted = 'pasted-the-project-token-by-mistake-SECRET';
    const t = await setup(
      { webhooks: { enabled: true, listen: `127.0.0.1:${port}` } },
      { env: { LISTING_AGENT_WEBHOOKS_SECRETS: `${WEBHOOK_SECRET},${pasted}`, LISTING_AGENT_LOG_LEVEL: 'debug' } },
    );
    const r = await t.report();
    expect(r.check('config').summary).toContain('overridden by LISTING_AGENT_LOG_LEVEL, LISTING_AGENT_WEBHOOKS_SECRETS');
    expect(r.check('webhooks.secret')).toMatchObject({ status: 'warn', summary: '1 of the 2 secrets in webhooks.secrets do not start with whs_, as the service\'s webhook secrets do' });
    expect(r.code).toBe(1);
  });

  it("recognises a running agent: its receiver answers on webhooks.listen, the probe goes through it, its lock is live", async () => {
    const config = await webhookConfig();
    const port = Number(/:(\d+)$/.exec((config.webhooks as { listen: string }).listen)![1]);
    const tests: string[] = [];
    // The agent's own receiver, as 'listing-agent run' starts it.
    const receiver = createWebhookReceiver({
      listen: { host: '127.0.0.1', port },
      secrets: [WEBHOOK_SECRET],
      pipeline: { ingest: async () => ({ accepted: [], duplicates: 0 }) },
      onDelivery: (d) => void (d.generation === 'v1' && tests.push(d.event.type)),
    });
    await receiver.start();
    servers.push({ close: () => void receiver.stop() });
    const t = await setup(config);
    await mkdir(join(t.cwd, 'state'));
    // The in-process CLI runs as host 'test-host', where every pid counts as running.
    await writeFile(join(t.cwd, 'state', 'state.lock'), JSON.stringify({ pid: 4242, host: 'test-host', startedAt: '2026-01-01T00:00:00.000Z' }));
    const r = await t.report('--probe');
    expect(r.check('webhooks.port')).toMatchObject({ status: 'ok', details: { holder: 'agent' } });
    expect(r.check('webhooks.probe')).toMatchObject({ status: 'ok', summary: expect.stringContaining("was accepted by a receiver with this config's secret (204") });
    expect(tests).toEqual(['webhook.test', 'webhook.test']);
    expect(r.check('state.lock')).toMatchObject({ status: 'ok', summary: expect.stringContaining('held by a running agent: pid 4242 on host test-host') });
    expect(r.code).toBe(0);
  });
});
