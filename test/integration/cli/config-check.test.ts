import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../helpers/cli.js';

const TOKEN = 'proj.SECRET-PROJECT-TOKEN.sig';

async function folder(files: Record<string, unknown> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'la-config-'));
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

describe('listing-agent config check', () => {
  it('prints the effective config with secrets masked and its sources, exit 0', async () => {
    const cwd = await folder({
      'agent.json': {
        service: { token: '${LISTING_PROJECT_TOKEN}', v1: 'http://127.0.0.1:4545/api/v1' },
        webhooks: { enabled: true, secrets: ['whs_SECRET-ONE'] },
        votes: { hooks: [{ url: 'http://127.0.0.1:8080/rewards' }] },
      },
      '.env': 'LISTING_AGENT_VOTES_POLL_INTERVAL=90s\n',
    });
    const res = await runCliInProcess(['config', 'check', '--config', 'agent.json'], { cwd, env: { LISTING_PROJECT_TOKEN: TOKEN } });
    expect(res.code).toBe(0);
    const effective = JSON.parse(res.stdout);
    expect(effective.service).toEqual({ v1: 'http://127.0.0.1:4545/api/v1', v0: 'https://top.gg/api', token: '********' });
    expect(effective.webhooks).toMatchObject({ enabled: true, secrets: ['********'], listen: '127.0.0.1:9465' });
    expect(effective.votes.pollInterval).toBe('1m30s');
    expect(res.stdout + res.stderr).not.toContain('SECRET');
    expect(res.stderr).toContain('the configuration is valid');
    expect(res.stderr).toContain(`config file: ${join(cwd, 'agent.json')}`);
    expect(res.stderr).toContain(`.env: ${join(cwd, '.env')}`);
    expect(res.stderr).toContain('environment: LISTING_AGENT_VOTES_POLL_INTERVAL, LISTING_PROJECT_TOKEN');
  });

  it('works from environment variables alone, and finds the file through LISTING_AGENT_CONFIG', async () => {
    const cwd = await folder({ 'c.json': { service: { token: TOKEN } } });
    const envOnly = await runCliInProcess(['config', 'check'], { cwd, env: { LISTING_AGENT_SERVICE_TOKEN: TOKEN, LISTING_AGENT_LOG_LEVEL: 'debug' } });
    expect(envOnly.code).toBe(0);
    expect(JSON.parse(envOnly.stdout).log.level).toBe('debug');
    expect(envOnly.stderr).toContain('config file: none');
    const viaVariable = await runCliInProcess(['config', 'check'], { cwd, env: { LISTING_AGENT_CONFIG: 'c.json' } });
    expect(viaVariable.code).toBe(0);
    expect(viaVariable.stderr).toContain(`config file: ${join(cwd, 'c.json')}`);
  });

  it('prints every problem, one per line with its path, exit 1', async () => {
    const cwd = await folder({
      'c.json': { service: { tokn: TOKEN }, votes: { hooks: [{ url: 'http://127.0.0.1:1/ok' }, { url: 'ftp://x', authorization: 'SECRET-HOOK' }] }, log: { level: 'loud' } },
    });
    const res = await runCliInProcess(['config', 'check', '-c', 'c.json'], { cwd });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr.split('\n')).toEqual([
      'listing-agent config check: 4 problems:',
      'service.token: missing (required): set it in the config file or with LISTING_AGENT_SERVICE_TOKEN',
      'service.tokn: unknown field (did you mean token?)',
      'votes.hooks[1].url: must be an absolute URL (http or https)',
      'log.level: must be one of fatal, error, warn, info, debug, trace, silent',
      '',
    ]);
    expect(res.stderr).not.toContain('SECRET');
  });

  it('names a missing file, invalid JSON and a malformed .env in one line each, exit 1', async () => {
    const cwd = await folder({ 'bad.json': '{ "service": { "token": "x.y.z", } }' });
    const missing = await runCliInProcess(['config', 'check', '--config', './x.json'], { cwd });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      'listing-agent config check: cannot read config file ./x.json: no such file — pass --config with the path of your config, or configure with LISTING_AGENT_* variables\n',
    );
    const invalid = await runCliInProcess(['config', 'check', '--config', 'bad.json'], { cwd });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('config file bad.json is not valid JSON at line 1, column 32: a trailing comma before }');
    const dotenvDir = await folder({ '.env': 'A=1\nnot an assignment\n' });
    const dotenv = await runCliInProcess(['config', 'check'], { cwd: dotenvDir, env: { LISTING_AGENT_SERVICE_TOKEN: TOKEN } });
    expect(dotenv.code).toBe(1);
    expect(dotenv.stderr).toContain(`malformed .env file ${join(dotenvDir, '.env')}: line 2 is not KEY=value`);
    for (const res of [missing, invalid, dotenv]) expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('has help, and refuses unknown subcommands and flags with exit 2', async () => {
    const help = await runCliInProcess(['config', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: listing-agent config <subcommand>');
    expect((await runCliInProcess(['help', 'config'])).stdout).toBe(help.stdout);
    expect((await runCliInProcess(['--help'])).stdout).toMatch(/\n {2}config +check the configuration/);
    const checkHelp = await runCliInProcess(['config', 'check', '--help']);
    expect(checkHelp.code).toBe(0);
    expect(checkHelp.stdout).toContain('--config FILE');
    const none = await runCliInProcess(['config']);
    expect(none.code).toBe(2);
    const unknown = await runCliInProcess(['config', 'lint']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("listing-agent: unknown subcommand 'lint'; subcommands: check\nSee 'listing-agent config --help'.\n");
    const flag = await runCliInProcess(['config', 'check', '--confg', 'x.json']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("See 'listing-agent config check --help'.");
    const extra = await runCliInProcess(['config', 'check', 'x.json']);
    expect(extra.code).toBe(2);
  });
});
