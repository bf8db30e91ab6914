import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { AgentLogger } from '../../../src/log/agent-logger.js';
import { createLogger, type LoggerOptions } from '../../../src/log/logger.js';

function capture(options: Omit<LoggerOptions, 'destination'>) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ ...options, destination }), lines };
}

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJpZCI6IjEyMyJ9.c2lnbmF0dXJlLXZhbHVl';

describe('createLogger', () => {
  it('writes JSON lines with level names and ISO times', () => {
    const { logger, lines } = capture({ format: 'json' });
    logger.info({ project: 'Demo' }, 'agent ready');
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: 'info', project: 'Demo', msg: 'agent ready' });
    expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('censors secret-named keys at any depth and scrubs secret values from every line', () => {
    const { logger, lines } = capture({ format: 'json', secrets: [TOKEN, 'whs_abcdef123456'] });
    const typed: AgentLogger = logger;
    typed.warn({ token: 'x', request: { authorization: `Bearer ${TOKEN}` }, cause: `failed with ${TOKEN}` }, `retrying ${TOKEN}`);
    typed.child({ capability: 'webhooks' }).error({ detail: 'bad signature for whs_abcdef123456' }, 'rejected');
    const text = lines.join('\n');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('whs_abcdef123456');
    expect(JSON.parse(lines[0]!)).toMatchObject({ token: '[redacted]', request: { authorization: '[redacted]' }, cause: 'failed with [redacted]' });
  });

  it('prints readable lines when asked, still without secrets', () => {
    const { logger, lines } = capture({ format: 'pretty', secrets: [TOKEN] });
    logger.info({ url: `http://x/?t=${TOKEN}` }, 'posted');
    const text = lines.join('\n');
    expect(text).toMatch(/INFO.*posted/);
    expect(text).not.toContain(TOKEN);
    expect(() => JSON.parse(lines[0]!)).toThrow();
  });

  it('picks pretty for auto on a terminal and JSON otherwise', () => {
    expect(() => JSON.parse(capture({ format: 'auto', isTTY: false }).lines[0] ?? '{}')).not.toThrow();
    const tty = capture({ format: 'auto', isTTY: true });
    tty.logger.info('hello');
    expect(tty.lines.join('')).toContain('hello');
    expect(() => JSON.parse(tty.lines[0]!)).toThrow();
  });

  it('honours the level', () => {
    const { logger, lines } = capture({ format: 'json', level: 'warn' });
    logger.info('hidden');
    logger.warn('shown');
    expect(lines).toHaveLength(1);
  });
});
