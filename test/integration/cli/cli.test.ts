import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call } from '../../helpers/http.js';
import { startReceiver } from '../../helpers/receiver.js';
import { verifySignature } from '../../helpers/verify-signature.js';
import { runCliInProcess, spawnCli } from '../../helpers/cli.js';

describe('listing-agent CLI: usage', () => {
  it('prints help and the version', async () => {
    const help = await runCliInProcess(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: listing-agent <command>');
    expect(help.stdout).toContain('emulator');
    const commandHelp = await runCliInProcess(['emulator', '--help']);
    expect(commandHelp.code).toBe(0);
    expect(commandHelp.stdout).toContain('--allow-http-loopback');
    const viaHelp = await runCliInProcess(['help', 'emulator']);
    expect(viaHelp.stdout).toBe(commandHelp.stdout);
    const version = await runCliInProcess(['--version']);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('refuses unknown commands and flags with exit code 2 and a pointer to --help', async () => {
    const unknown = await runCliInProcess(['launch']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'launch'");
    expect(unknown.stderr).toContain("listing-agent --help");
    const flag = await runCliInProcess(['emulator', '--prot', '5']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("'--prot'");
    expect(flag.stderr).toContain('listing-agent emulator --help');
    const port = await runCliInProcess(['emulator', '--port', 'eighty']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port must be a whole number');
    const none = await runCliInProcess([]);
    expect(none.code).toBe(2);
  });

  it('refuses an invalid seed file with exit code 78 naming each problem', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'la-seed-'));
    const file = join(dir, 'seed.json');
    await writeFile(file, JSON.stringify({ users: [{}], projects: [{ platform: 'roblox', type: 'bot' }] }));
    const res = await runCliInProcess(['emulator', '--port', '0', '--seed', file]);
    expect(res.code).toBe(78);
    expect(res.stderr).toContain('users.0.username');
    expect(res.stderr).toContain('projects.0.type');
    const missing = await runCliInProcess(['emulator', '--port', '0', '--seed', join(dir, 'nope.json')]);
    expect(missing.code).toBe(78);
    expect(missing.stderr).toContain('ENOENT');
  });

  it('loads the example seed file shipped in examples/', async () => {
    const cli = spawnCli(['emulator', '--port', '0', '--json', '--seed', 'examples/emulator-seed.json']);
    const summary = JSON.parse(await cli.firstLine());
    expect(summary.projects.map((p: { name: string }) => p.name)).toEqual(['Example Bot', 'Example Server']);
    expect(summary.users).toHaveLength(2);
    const votes = await call(`${summary.v1}/projects/@me/votes?startDate=2026-01-01T00:00:00Z`, {
      bearer: summary.projects[0].project_token,
    });
    expect(votes.status).toBe(200);
    expect(votes.body.data).toEqual([expect.objectContaining({ user_id: '1000000000000000002', platform_id: '200000000000000002' })]);
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('says which port is in use instead of crashing', async () => {
    const first = spawnCli(['emulator', '--port', '0', '--json']);
    const { v1 } = JSON.parse(await first.firstLine()) as { v1: string };
    const port = new URL(v1).port;
    const second = await runCliInProcess(['emulator', '--port', port]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`port ${port} is in use`);
    first.child.kill('SIGTERM');
    expect(await first.exit()).toBe(0);
  });
});

describe('listing-agent emulator: the walkthrough of docs/emulator.md', () => {
  it('starts, prints URLs and seeded credentials, serves a project, signs a vote delivery, stops on SIGTERM', async () => {
    const cli = spawnCli(['emulator', '--port', '0', '--json', '--allow-http-loopback']);
    const summary = JSON.parse(await cli.firstLine());
    expect(summary.v1).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    expect(summary.v0).toMatch(/\/api$/);
    expect(summary.auth).toMatch(/\/oauth2\/authorize$/);
    const seeded = summary.projects[0];
    expect(seeded.project_token.split('.')).toHaveLength(3);

    // The seeded project answers its token on v1 and v0.
    const me = await call(`${summary.v1}/projects/@me`, { bearer: seeded.project_token });
    expect(me.status).toBe(200);
    expect(me.body.name).toBe('Demo Bot');

    // Create a user, a project, an OAuth grant, a webhook to a local receiver, then a vote.
    const user = await call(`${summary.admin}/users`, { json: { username: 'walkthrough' } });
    const project = await call(`${summary.admin}/projects`, { json: { platform: 'discord', type: 'bot', owner_user_id: user.body.id } });
    const grant = await call(`${summary.admin}/authorizations`, {
      json: {
        client_id: summary.applications[0].client_id,
        user_id: user.body.id,
        project_id: project.body.project.id,
        scopes: ['project.webhooks.write', 'project.votes.read'],
      },
    });
    expect(grant.status).toBe(201);
    const receiver = await startReceiver();
    const webhook = await call(`${summary.v1}/projects/${project.body.project.id}/webhooks`, {
      bearer: grant.body.access_token,
      json: { label: 'local', url: receiver.url },
    });
    expect(webhook.status).toBe(201);
    const vote = await call(`${summary.admin}/votes`, { json: { project_id: project.body.project.id, user_id: user.body.id } });
    expect(vote.status).toBe(201);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery!.json.type).toBe('vote.create');
    expect(delivery!.json.data.id).toBe(vote.body.id);
    expect(verifySignature(delivery!, webhook.body.secret).valid).toBe(true);

    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });
});
