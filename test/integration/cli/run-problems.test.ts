import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import type { DoctorReport } from '../../../src/doctor/types.js';
import { spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { startFakeDiscordRest } from '../../helpers/fake-discord/index.js';
import { startVoteHookServer } from '../../helpers/vote-hook-server.js';

/*
 * One voice for configuration (issue 32, items 1, 6 and 7), the daemon's road: `listing-agent run`
 * (dist/cli/main.js as a child process), `config check` and `doctor` refuse the same
 * configurations with the same lines, before anything is sent, and pass the same ones. The
 * shipped config.example.json passes all three.
 */

const EXAMPLE = fileURLToPath(new URL('../../../config.example.json', import.meta.url));

/** What the three commands say of the config file `config` in a fresh directory, with `env`. */
async function threeVerdicts(config: unknown, env: Record<string, string> = {}) {
  const cwd = await mkdtemp(join(tmpdir(), 'la-run-problems-'));
  await writeFile(join(cwd, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  const check = spawnCli(['config', 'check', '-c', 'config.json'], { cwd, env });
  const doctor = spawnCli(['doctor', '--json', '-c', 'config.json'], { cwd, env });
  const run = spawnCli(['run', '-c', 'config.json'], { cwd, env: { LISTING_AGENT_LOG_FORMAT: 'json', ...env } });
  // A run that is not refused keeps running: after a while it is stopped, and says so.
  const refusedOrRunning = Promise.race([run.exit(), new Promise<string>((resolve) => setTimeout(resolve, 8_000, 'still running'))]);
  const [checkCode, doctorCode, runCode] = await Promise.all([check.exit(), doctor.exit(), refusedOrRunning]);
  run.child.kill('SIGTERM');
  const report = JSON.parse(doctor.stdout()) as DoctorReport;
  const configCheck = report.checks.find((c) => c.name === 'config')!;
  return {
    check: { code: checkCode, problems: check.stderr().trim().split('\n').slice(1) },
    doctor: { code: doctorCode, report, problems: (configCheck.details?.problems as string[] | undefined) ?? [] },
    run: { code: runCode, problems: run.stderr().split('\n').filter((line) => line.startsWith('  ')).map((line) => line.slice(2)) },
  };
}

/** The three refuse `config` with exactly `problems`, in the same words. */
async function refusedByAll(config: unknown, problems: string[], env: Record<string, string> = {}) {
  const said = await threeVerdicts(config, env);
  expect(said.check).toEqual({ code: 1, problems });
  expect(said.run).toEqual({ code: 78, problems });
  expect(said.doctor.code).toBe(2);
  expect(said.doctor.problems).toEqual(problems);
  return said;
}

describe('run, config check and doctor refuse the same configurations in the same words', { timeout: 40_000 }, () => {
  it('votes on with no hook: refused by all three, no vote taken; with a hook, run rewards it', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    emu.admin.castVote({ project_id: fx.projectId, user_id: fx.ownerId });
    const base = { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { listen: '127.0.0.1:0' } };
    await refusedByAll({ ...base, votes: { enabled: true, lookback: '1h' } }, [
      'votes.hooks: votes.enabled is on but nothing receives the votes: add a reward hook to votes.hooks (LISTING_AGENT_VOTES_HOOKS), an http url or an exec command, or set votes.stream.enabled (LISTING_AGENT_VOTES_STREAM_ENABLED); without one no vote is rewarded',
    ]);
    await refusedByAll({ ...base, webhooks: { enabled: true, secrets: ['whs_x'], listen: '127.0.0.1:0' } }, [
      'votes.hooks: webhooks.enabled is on but nothing receives the votes: add a reward hook to votes.hooks (LISTING_AGENT_VOTES_HOOKS), an http url or an exec command, or set votes.stream.enabled (LISTING_AGENT_VOTES_STREAM_ENABLED); without one no vote is rewarded',
    ]);
    // Nothing was sent: the vote is still the service's to give.
    expect(emu.admin.requests()).toEqual([]);

    const hook = await startVoteHookServer();
    const cwd = await mkdtemp(join(tmpdir(), 'la-run-problems-'));
    await writeFile(join(cwd, 'config.json'), JSON.stringify({ ...base, votes: { enabled: true, lookback: '1h', hooks: [{ url: hook.url }] } }));
    const run = spawnCli(['run', '-c', 'config.json'], { cwd, env: { LISTING_AGENT_LOG_FORMAT: 'json' } });
    await run.lineContaining('vote rewarded');
    expect(hook.calls).toHaveLength(1);
    run.child.kill('SIGTERM');
    expect(await run.exit()).toBe(0);
  });

  it('a Discord bot token as the project token, or plain http to another machine: refused by all three, nothing sent', async () => {
    const emu = await startTestEmulator();
    const discordToken = `${Buffer.from('1087654321098765432').toString('base64').replace(/=+$/, '')}.GhIjKl.SECRET-discord-hmac-0123456789abcdef`;
    const said = await refusedByAll({ service: { token: '${BOT_TOKEN}', v1: emu.urls.v1, v0: emu.urls.v0 }, health: { listen: '127.0.0.1:0' } }, [
      "service.token: is a Discord bot token (its first part is the bot's user ID), not the project token, so it is not sent to the listing service: copy the project token from the project's Integrations and API settings on the listing (the bot token belongs in discord.token)",
    ], { BOT_TOKEN: discordToken });
    expect(said.doctor.report.checks.find((c) => c.name === 'service.token')).toMatchObject({ status: 'fail' });
    expect(emu.admin.requests()).toEqual([]);
    await refusedByAll({ service: { token: 'a.b.c', v1: 'http://listing.example/api/v1' }, health: { listen: '127.0.0.1:0' } }, [
      'service.v1: is plain http to another machine: the project token would cross the network unencrypted; use https (plain http only on 127.0.0.1, localhost or [::1], for a local emulator)',
    ]);
  });

  it('a secret written as ${VAR} with VAR unset is a problem naming VAR, not a hook called unsigned', async () => {
    const hooks = [{ url: 'http://127.0.0.1:1/rewards', secret: '${REWARD_HOOK_SECRET}' }];
    await refusedByAll({ service: { token: 'a.b.c', v1: 'http://127.0.0.1:1/api/v1' }, health: { listen: '127.0.0.1:0' }, votes: { enabled: true, hooks } }, [
      'votes.hooks[0].secret: ${REWARD_HOOK_SECRET} is empty or not set (set REWARD_HOOK_SECRET in the environment or .env, or remove the field: a secret is not left out silently)',
    ]);
  });

  it("an exec hook that lists one of the agent's own variables (LISTING_*, a ${VAR} the config reads): refused by all three", async () => {
    const base = { service: { token: 'a.b.c', v1: 'http://127.0.0.1:1/api/v1' }, health: { listen: '127.0.0.1:0' } };
    const signed = { url: 'http://127.0.0.1:1/r', secret: '${REWARD_HOOK_SECRET}' };
    const script = (env: string[]) => ({ command: [process.execPath, '-e', ''], env });
    const env = { REWARD_HOOK_SECRET: 'reward-hook-secret' };
    await refusedByAll({ ...base, votes: { enabled: true, hooks: [script(['DATABASE_URL', 'LISTING_OAUTH_ACCESS_TOKEN', 'LISTING_VOTE_KEY']), signed] } }, [
      "votes.hooks[0].env[1]: LISTING_OAUTH_ACCESS_TOKEN is one of the agent's own variables (LISTING_AGENT_*, LISTING_OAUTH_*): an exec hook never gets the agent's settings or credentials; give the hook what it needs under a name of its own",
      "votes.hooks[0].env[2]: LISTING_VOTE_KEY begins with LISTING_, the agent's own names (it sets LISTING_VOTE_*, LISTING_IDEMPOTENCY_KEY and LISTING_HOOK_TYPE for each call): give the variable a name of its own",
    ], env);
    // Which variables the config reads is known where it is loaded: refused there, in the same words.
    await refusedByAll({ ...base, votes: { enabled: true, hooks: [script(['DATABASE_URL', 'REWARD_HOOK_SECRET']), signed] } }, [
      'votes.hooks[0].env[1]: REWARD_HOOK_SECRET is a variable this configuration reads (${REWARD_HOOK_SECRET}): an exec hook never gets what the agent reads, its credentials among them; give the hook what it needs under a name of its own',
    ], env);
  });
});

describe('the shipped config.example.json', { timeout: 40_000 }, () => {
  it('passes config check, doctor and run alike with its ${VAR}s set; without a stats source it fails all three alike', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const discord = await startFakeDiscordRest({ approximateGuildCount: 12, recommendedShards: 1, token: 'example-bot-token' });
    discord.route('GET', `/applications/${fx.platformId}/commands`, () => ({ status: 200, body: [{ id: '1', application_id: fx.platformId, name: 'ping', description: 'Is the bot there?', type: 1 }] }));
    const env = {
      // The ${VAR}s the example names.
      LISTING_AGENT_SERVICE_TOKEN: fx.projectToken,
      DISCORD_BOT_TOKEN: 'example-bot-token',
      REWARD_HOOK_SECRET: 'example-hook-secret',
      REWARD_HOOK_AUTHORIZATION: 'Bearer example-hook-authorization',
      // Where this test's service, Discord and free ports are, as a user would point them.
      LISTING_AGENT_SERVICE_V1: emu.urls.v1,
      LISTING_AGENT_SERVICE_V0: emu.urls.v0,
      LISTING_AGENT_DISCORD_API_BASE_URL: discord.url,
      LISTING_AGENT_HEALTH_LISTEN: '127.0.0.1:0',
    };
    const example = await readFile(EXAMPLE, 'utf8');
    const cwd = await mkdtemp(join(tmpdir(), 'la-example-'));
    await writeFile(join(cwd, 'config.json'), example);

    const check = spawnCli(['config', 'check', '-c', 'config.json'], { cwd, env });
    expect(await check.exit()).toBe(0);
    const doctor = spawnCli(['doctor', '--json', '-c', 'config.json'], { cwd, env });
    expect(await doctor.exit()).toBe(0);
    const report = JSON.parse(doctor.stdout()) as DoctorReport;
    expect(report.checks.filter((c) => c.status !== 'ok' && c.status !== 'skip')).toEqual([]);
    expect(report.checks.find((c) => c.name === 'stats.source')).toMatchObject({ status: 'ok', details: { serverCount: 12 } });
    const run = spawnCli(['run', '-c', 'config.json'], { cwd, env: { ...env, LISTING_AGENT_LOG_FORMAT: 'json' } });
    await run.lineContaining('agent ready', 15_000);
    await vi.waitFor(() => expect(emu.admin.metrics(fx.projectId).map((m) => m.metrics.server_count)).toEqual([12]), { timeout: 10_000, interval: 50 });
    run.child.kill('SIGTERM');
    expect(await run.exit()).toBe(0);

    // The example as it was (stats from an embedded bot the daemon does not have): all three say so.
    const withoutSource = JSON.parse(example) as { stats: Record<string, unknown> };
    delete withoutSource.stats.source;
    await refusedByAll(withoutSource, [
      'stats.source: is embedded (the default), but outside the bot there are no counts to read: set stats.source (LISTING_AGENT_STATS_SOURCE) to discord-rest (with discord.token), push or redis; embedded counts come only from an agent made inside the bot with createListingAgent',
    ], env);
  });
});
