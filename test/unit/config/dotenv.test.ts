import { describe, expect, it } from 'vitest';
import { parseDotenv } from '../../../src/config/dotenv-file.js';
import { ConfigError } from '../../../src/config/errors.js';
import { loadConfig } from '../../../src/config/loader.js';
import { CWD, TOKEN, json, memoryFiles } from './files.js';

describe('.env', () => {
  it('parses what dotenv parses: comments, export, quotes, multi-line values', () => {
    const text = ['# a comment', '', 'A=1', 'export B=two', 'C: 3', 'D="multi', 'line # not a comment', '"', "E='x # y' # comment", 'F=', 'G=a=b'].join('\n');
    expect(parseDotenv(text)).toEqual({ values: { A: '1', B: 'two', C: '3', D: 'multi\nline # not a comment\n', E: 'x # y', F: '', G: 'a=b' } });
  });

  it('reports every line that is not KEY=value, by number', () => {
    expect(parseDotenv('A=1\nTOKEN abc\n\n# fine\nB=2\njust words\r\nC=3')).toEqual({ badLines: [2, 6] });
    // An unclosed quote is read by dotenv as a plain value; the next line is checked on its own.
    expect(parseDotenv('A="unclosed\nB=2')).toEqual({ values: { A: '"unclosed', B: '2' } });
  });

  it('is loaded from cwd for ${VAR} and LISTING_AGENT_* alike', async () => {
    const files = memoryFiles({
      '.env': `T=${TOKEN}\nLISTING_AGENT_LOG_LEVEL=debug\n`,
      'c.json': json({ service: { token: '${T}' } }),
    });
    const { config, sources } = await loadConfig({ file: 'c.json', env: {}, cwd: CWD, readFile: files.readFile });
    expect(config.service.token).toBe(TOKEN);
    expect(config.log.level).toBe('debug');
    expect(sources).toEqual({ file: `${CWD}/c.json`, dotenv: `${CWD}/.env`, env: ['LISTING_AGENT_LOG_LEVEL', 'T'] });
  });

  it('never overrides a real environment value, but fills an empty one', async () => {
    const files = memoryFiles({ '.env': `LISTING_AGENT_SERVICE_TOKEN=from.dot.env\nLISTING_AGENT_LOG_LEVEL=debug\nLISTING_AGENT_LOG_FORMAT=json\n` });
    const env = { LISTING_AGENT_SERVICE_TOKEN: TOKEN, LISTING_AGENT_LOG_LEVEL: 'warn', LISTING_AGENT_LOG_FORMAT: '' };
    const before = { ...env };
    const { config } = await loadConfig({ env, cwd: CWD, readFile: files.readFile });
    expect(config.service.token).toBe(TOKEN);
    expect(config.log.level).toBe('warn');
    expect(config.log.format).toBe('json');
    expect(env).toEqual(before);
  });

  it('may name the config file with LISTING_AGENT_CONFIG', async () => {
    const files = memoryFiles({ '.env': 'LISTING_AGENT_CONFIG=conf/agent.json\n', 'conf/agent.json': json({ service: { token: TOKEN } }) });
    const { sources } = await loadConfig({ env: {}, cwd: CWD, readFile: files.readFile });
    expect(sources.file).toBe(`${CWD}/conf/agent.json`);
  });

  it('refuses a malformed .env with the file and the line number, quoting nothing of it', async () => {
    const files = memoryFiles({ '.env': `OK=1\nSECRET-TOKEN-WITHOUT-EQUALS\n` });
    const error = await loadConfig({ env: { LISTING_AGENT_SERVICE_TOKEN: TOKEN }, cwd: CWD, readFile: files.readFile }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const { summary, reason, problems } = error as ConfigError;
    expect(reason).toBe('dotenv');
    expect(summary).toBe(`malformed .env file ${CWD}/.env: line 2 is not KEY=value — write KEY=value, or start the line with # to make it a comment`);
    expect(problems).toEqual([{ path: `${CWD}/.env:2`, message: 'not KEY=value' }]);
    expect(summary).not.toContain('SECRET');
  });

  it('refuses an unreadable .env, and is fine without one', async () => {
    const files = memoryFiles({}, { '.env': 'EACCES' });
    const error = (await loadConfig({ env: {}, cwd: CWD, readFile: files.readFile }).catch((e: unknown) => e)) as ConfigError;
    expect(error.summary).toBe(`cannot read .env file ${CWD}/.env: permission denied — make it readable by the user running listing-agent, or remove it`);
    const none = await loadConfig({ env: { LISTING_AGENT_SERVICE_TOKEN: TOKEN }, cwd: CWD, readFile: memoryFiles({}).readFile });
    expect(none.sources.dotenv).toBeUndefined();
  });
});
