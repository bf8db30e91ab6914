import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, parseJsonLocated } from '../../../src/config/json-position.js';
import { buildConfig } from '../../../src/config/loader.js';
import { ConfigError } from '../../../src/config/errors.js';
import { formatPath } from '../../../src/config/problems.js';

// Found by the reliability suite's config fuzz (test/reliability/config-fuzz.reliability.ts).
describe('config files nested absurdly deep', () => {
  it('are refused with a located error instead of overflowing the stack, valid JSON or not', () => {
    for (const text of ['['.repeat(50_000), `{"service":${'['.repeat(20_000)}${']'.repeat(20_000)}}`]) {
      const parsed = parseJsonLocated(text);
      expect(parsed).toMatchObject({ error: { line: 1, reason: `nested more than ${MAX_JSON_DEPTH} levels deep` } });
      expect(() => buildConfig({ file: { name: 'agent.json', text }, env: {} })).toThrow(ConfigError);
    }
  });

  it('keeps the depth a config or a command file really has', () => {
    const deep = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    expect(parsedValue(parseJsonLocated(deep))).toBeDefined();
    expect(parseJsonLocated(`[${deep}]`)).toHaveProperty('error');
  });
});

describe('formatPath', () => {
  it('names an empty key', () => {
    expect(formatPath(['', 'x'])).toBe('"".x');
    expect(formatPath(['votes', 'hooks', 1, ''])).toBe('votes.hooks[1].""');
    expect(formatPath(['votes', 'hooks', 1, 'url'])).toBe('votes.hooks[1].url');
  });
});

function parsedValue(result: ReturnType<typeof parseJsonLocated>): unknown {
  return 'value' in result ? result.value : undefined;
}
