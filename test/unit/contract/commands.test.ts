import { describe, expect, it } from 'vitest';
import { commandNameProblem, validateCommands } from '../../../src/contract/commands.js';

const ping = { name: 'ping', description: 'Replies with pong' };
const problemsOf = (body: unknown) => {
  const result = validateCommands(body);
  return result.ok ? [] : result.problems;
};
const option = (i: number) => ({ type: 3, name: `opt${i}`, description: 'an option' });

describe('validateCommands', () => {
  it('accepts a valid set and an empty array', () => {
    const commands = [
      ping,
      { type: 1, name: "what's-up_2", description: 'd', options: [option(1)] },
      { type: 2, name: 'Show Profile' },
      { type: 3, name: 'Report Message', description: '' },
      { name: 'café', description: 'Unicode letters are fine', name_localizations: { de: 'kaffee' } },
      { name_localizations: { 'en-GB': 'colour' }, description: 'English through a localization' },
    ];
    expect(validateCommands(commands)).toEqual({ ok: true, value: commands });
    expect(validateCommands([])).toEqual({ ok: true, value: [] });
  });

  it('rejects a non-array and more than 100 commands', () => {
    expect(problemsOf({})[0]?.path).toBe('');
    const many = Array.from({ length: 101 }, (_, i) => ({ name: `c${i}`, description: 'd' }));
    expect(problemsOf(many)).toEqual([{ path: '', message: 'must hold at most 100 commands (got 101)' }]);
    expect(validateCommands(many.slice(0, 100)).ok).toBe(true);
  });

  it('checks chat-input names: lowercase, pattern, 1 to 32 characters', () => {
    expect(problemsOf([ping, { name: 'Ping', description: 'd' }])).toEqual([
      { path: '[1].name', message: 'must be lowercase (command "Ping")' },
    ]);
    expect(problemsOf([{ name: 'a'.repeat(33), description: 'd' }])[0]?.message).toContain('1 to 32 characters (got 33)');
    expect(validateCommands([{ name: 'a'.repeat(32), description: 'd' }]).ok).toBe(true);
    expect(problemsOf([{ name: 'two words', description: 'd' }])[0]).toMatchObject({ path: '[0].name' });
    expect(problemsOf([{ name: '', description: 'd' }])[0]).toMatchObject({ path: '[0].name' });
  });

  it('checks only the length of user and message command names', () => {
    expect(commandNameProblem('Show Profile', false)).toBeNull();
    expect(commandNameProblem('x'.repeat(33), false)).toContain('got 33');
    expect(problemsOf([{ type: 2, name: 'x'.repeat(33) }])[0]).toMatchObject({ path: '[0].name' });
  });

  it('checks chat-input descriptions: 1 to 100 characters, required', () => {
    expect(problemsOf([{ name: 'a', description: '' }])[0]).toMatchObject({ path: '[0].description' });
    expect(problemsOf([{ name: 'a', description: 'x'.repeat(101) }])[0]?.message).toContain('got 101');
    expect(validateCommands([{ name: 'a', description: 'x'.repeat(100) }]).ok).toBe(true);
    expect(problemsOf([{ name: 'a' }])[0]).toMatchObject({ path: '[0].description' });
  });

  it('allows at most 25 options per level, nested levels included', () => {
    const options = (n: number) => Array.from({ length: n }, (_, i) => option(i));
    expect(validateCommands([{ ...ping, options: options(25) }]).ok).toBe(true);
    expect(problemsOf([{ ...ping, options: options(26) }])).toEqual([
      { path: '[0].options', message: 'must hold at most 25 options (got 26)' + ' (command "ping")' },
    ]);
    const nested = { ...ping, options: [{ type: 1, name: 'sub', description: 'd', options: options(26) }] };
    expect(problemsOf([nested])[0]).toMatchObject({ path: '[0].options[0].options' });
  });

  it('checks option names, descriptions and types like commands', () => {
    const bad = { ...ping, options: [{ type: 3, name: 'Opt', description: '' }, { type: 12, name: 'ok', description: 'd' }] };
    expect(problemsOf([bad]).map((p) => p.path)).toEqual(['[0].options[0].name', '[0].options[0].description', '[0].options[1].type']);
  });

  it('needs at least one English entry', () => {
    expect(problemsOf([{ name_localizations: { de: 'hallo' }, description: 'd' }])[0]).toMatchObject({
      path: '[0].name',
      message: expect.stringContaining('English'),
    });
    expect(validateCommands([{ name_localizations: { 'en-US': 'hello' }, description: 'd' }]).ok).toBe(true);
  });

  it('checks localized names and refuses duplicate names of one type', () => {
    expect(problemsOf([{ ...ping, name_localizations: { de: 'Hallo' } }])[0]).toMatchObject({ path: '[0].name_localizations.de' });
    expect(problemsOf([ping, ping])[0]).toMatchObject({ path: '[1].name', message: expect.stringContaining('duplicates') });
    expect(validateCommands([ping, { type: 2, name: 'ping' }]).ok).toBe(true);
    expect(problemsOf([{ ...ping, type: 9 }])[0]).toMatchObject({ path: '[0].type' });
  });
});
