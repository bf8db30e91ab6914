import { describe, expect, it } from 'vitest';
import { commandKey, diffCommands, formatDiff } from '../../../src/commands/diff.js';
import { normaliseCommands, type ListingCommand } from '../../../src/commands/normalise.js';

function normal(raw: unknown[]): ListingCommand[] {
  const result = normaliseCommands(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.commands;
}

const ping = { name: 'ping', description: 'Replies with pong' };
const vote = { name: 'vote', description: 'Vote for the bot', options: [{ type: 3, name: 'site', description: 'Where' }] };
const old = { name: 'old', description: 'Going away' };

describe('diffCommands', () => {
  it('is the same for equal sets, whatever their order and spelling', () => {
    const diff = diffCommands(normal([ping, vote]), normal([{ ...vote, type: 1 }, ping]));
    expect(diff).toEqual({ added: [], removed: [], changed: [], same: true });
    expect(formatDiff(diff)).toEqual([]);
  });

  it('lists every command as added when nothing was synced before', () => {
    expect(diffCommands(undefined, normal([vote, ping]))).toEqual({ added: ['ping', 'vote'], removed: [], changed: [], same: false });
    expect(diffCommands(undefined, [])).toMatchObject({ same: true });
  });

  it('finds added, removed and changed commands, with the top-level fields that changed', () => {
    const before = normal([ping, vote, old, { type: 2, name: 'Profile' }]);
    const after = normal([
      { ...ping, name_localizations: { de: 'klingeln' } },
      { ...vote, description: 'Vote for us', options: [{ type: 3, name: 'site', description: 'Where to vote' }] },
      { name: 'help', description: 'Help' },
      { type: 3, name: 'Profile' },
    ]);
    const diff = diffCommands(before, after);
    expect(diff).toEqual({
      added: ['help', 'Profile (message)'],
      removed: ['old', 'Profile (user)'],
      changed: [
        { key: 'ping', fields: ['name_localizations'] },
        { key: 'vote', fields: ['description', 'options'] },
      ],
      same: false,
    });
    expect(formatDiff(diff)).toEqual([
      '+ help',
      '+ Profile (message)',
      '- old',
      '- Profile (user)',
      '~ ping: name_localizations',
      '~ vote: description, options',
    ]);
  });

  it('compares fields deeply, ignoring key order inside them (a stored set read back)', () => {
    const [current] = normal([vote]);
    const stored = JSON.parse(JSON.stringify({ ...current, options: [{ description: 'Where', name: 'site', type: 3 }] })) as ListingCommand;
    expect(diffCommands([stored], [current!]).same).toBe(true);
    const reordered = normal([{ ...vote, options: [...vote.options, { type: 4, name: 'n', description: 'N' }] }]);
    const swapped = normal([{ ...vote, options: [{ type: 4, name: 'n', description: 'N' }, ...vote.options] }]);
    expect(diffCommands(reordered, swapped).changed).toEqual([{ key: 'vote', fields: ['options'] }]);
  });

  it('names non-chat-input commands with their type', () => {
    expect(commandKey({ type: 1, name: 'ping' })).toBe('ping');
    expect(commandKey({ type: 2, name: 'Profile' })).toBe('Profile (user)');
    expect(commandKey({ type: 4, name: 'launch' })).toBe('launch (entry point)');
    expect(commandKey({ type: 9, name: 'x' })).toBe('x (type 9)');
  });
});
