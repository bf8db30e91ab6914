import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ListingAgentError, ValidationError } from '../../../src/errors.js';
import { loadCommandConfig } from '../../../src/cli/command-config.js';
import { EXIT, UsageError, type CliIo } from '../../../src/cli/io.js';
import { runSubcommand } from '../../../src/cli/subcommands.js';

function io(cwd = '/nowhere'): CliIo & { out: string; err: string } {
  const sink: CliIo & { out: string; err: string } = {
    out: '',
    err: '',
    stdout: (text) => void (sink.out += text),
    stderr: (text) => void (sink.err += text),
    env: {},
    cwd,
    stopRequested: new Promise<never>(() => undefined),
    logStream: new Writable({ write: (_chunk, _encoding, done) => done() }),
    isTTY: false,
    owner: { pid: 1, host: 'test' },
    isProcessAlive: () => true,
  };
  return sink;
}

describe('runSubcommand', () => {
  const table = (run: (argv: string[]) => Promise<number>, oneLineErrors = false) => ({
    command: 'things',
    help: 'Usage: listing-agent things <list>\n',
    subcommands: { list: (argv: string[]) => run(argv) },
    oneLineErrors,
  });

  it('runs the named subcommand with the arguments after it', async () => {
    const seen: string[][] = [];
    const code = await runSubcommand(['list', '--json'], io(), table(async (argv) => (seen.push(argv), 7)));
    expect(code).toBe(7);
    expect(seen).toEqual([['--json']]);
  });

  it('prints the help: exit 0 when asked for, 2 when no subcommand was named', async () => {
    const asked = io();
    expect(await runSubcommand(['--help'], asked, table(async () => 0))).toBe(EXIT.ok);
    expect(asked.out).toContain('Usage: listing-agent things');
    expect(await runSubcommand([], io(), table(async () => 0))).toBe(EXIT.usage);
  });

  it('refuses an unknown subcommand, an option before it, and an inherited name, with the command named', async () => {
    await expect(runSubcommand(['lsit'], io(), table(async () => 0))).rejects.toThrow(new UsageError("unknown subcommand 'lsit'; subcommands: list", 'things'));
    await expect(runSubcommand(['--json', 'list'], io(), table(async () => 0))).rejects.toThrow("unknown option '--json' (options go after the subcommand)");
    await expect(runSubcommand(['constructor'], io(), table(async () => 0))).rejects.toBeInstanceOf(UsageError);
  });

  it('with oneLineErrors, turns an agent error into one line and exit 1 (78 for a configuration problem)', async () => {
    const failing = io();
    const code = await runSubcommand(['list'], failing, table(async () => { throw new ListingAgentError('x', 'the service said no'); }, true));
    expect(code).toBe(EXIT.failure);
    expect(failing.err).toBe('listing-agent things list: the service said no\n');
    const config = await runSubcommand(['list'], io(), table(async () => { throw new ValidationError('config', 'votes.hooks', [{ path: 'votes.hooks[0]', message: 'bad' }]); }, true));
    expect(config).toBe(EXIT.config);
  });

  it('lets a usage error, any other error, and every error without oneLineErrors through', async () => {
    await expect(runSubcommand(['list'], io(), table(async () => { throw new UsageError('bad flag', 'things list'); }, true))).rejects.toBeInstanceOf(UsageError);
    await expect(runSubcommand(['list'], io(), table(async () => { throw new TypeError('a bug'); }, true))).rejects.toBeInstanceOf(TypeError);
    await expect(runSubcommand(['list'], io(), table(async () => { throw new ListingAgentError('x', 'no'); }))).rejects.toBeInstanceOf(ListingAgentError);
  });
});

describe('loadCommandConfig', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('answers 78 with the summary and every problem on stderr, and the advice after them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'command-config-'));
    dirs.push(dir);
    await writeFile(join(dir, 'config.json'), JSON.stringify({ service: { token: 'x' }, stats: { interval: 'soon' } }));
    const sink = io(dir);
    const code = await loadCommandConfig(sink, 'run', join(dir, 'config.json'), { lead: 'refusing to start: ', advice: 'Check it.' });
    expect(code).toBe(EXIT.config);
    expect(sink.err).toMatch(/^listing-agent run: refusing to start: .+\n {2}stats\.interval: .+\nCheck it\.\n$/s);
  });

  it('answers 78 for a file that is not there, naming it', async () => {
    const sink = io('/');
    expect(await loadCommandConfig(sink, 'votes list', '/nowhere/config.json')).toBe(EXIT.config);
    expect(sink.err).toMatch(/^listing-agent votes list: .*\/nowhere\/config\.json/);
  });
});
