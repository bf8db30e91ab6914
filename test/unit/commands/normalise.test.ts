import { createHash } from 'node:crypto';
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ChannelType,
  ContextMenuCommandBuilder,
  PermissionFlagsBits,
  SlashCommandBuilder,
} from 'discord.js';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ApplicationCommandShape } from '../../../src/api/v1/commands.js';
import { canonicalJson, normaliseCommands, type ListingCommand, type NormalisedCommands } from '../../../src/commands/normalise.js';

function ok(result: NormalisedCommands): { commands: ListingCommand[]; hash: string } {
  if (!result.ok) throw new Error(`expected valid commands, got ${JSON.stringify(result.issues)}`);
  return result;
}
const issuesOf = (raw: unknown[]) => {
  const result = normaliseCommands(raw);
  return result.ok ? [] : result.issues;
};

/** The commands as a bot author writes them: no ids, no defaults spelled out. */
const handWritten = [
  {
    name: 'vote',
    description: 'Vote for the bot',
    name_localizations: { de: 'abstimmen', fr: 'voter' },
    options: [
      { type: 3, name: 'site', description: 'Where to vote', required: true, choices: [{ name: 'Top', value: 'top' }, { name: 'Alpha', value: 'alpha' }] },
      { type: 4, name: 'times', description: 'How many times', min_value: 1, max_value: 5 },
    ],
    default_member_permissions: '8',
    contexts: [0, 1],
  },
  { name: 'ping', description: 'Replies with pong' },
  { type: 3, name: 'Report' },
];

/** The same commands as `GET /applications/{id}/commands?with_localizations=true` answers them. */
const fromDiscordApi = [
  {
    id: '1250000000000000001',
    application_id: '300000000000000001',
    version: '1250000000000000099',
    default_permission: true,
    default_member_permissions: null,
    type: 1,
    name: 'ping',
    name_localizations: null,
    description: 'Replies with pong',
    description_localizations: {},
    dm_permission: true,
    contexts: null,
    integration_types: null,
    nsfw: false,
  },
  {
    id: '1250000000000000002',
    application_id: '300000000000000001',
    version: '1250000000000000098',
    type: 3,
    name: 'Report',
    description: '',
    name_localizations: null,
    description_localizations: null,
    default_member_permissions: null,
    nsfw: false,
    handler: null,
  },
  {
    id: '1250000000000000003',
    application_id: '300000000000000001',
    guild_id: undefined,
    version: '1250000000000000097',
    default_permission: true,
    default_member_permissions: '8',
    type: 1,
    name: 'vote',
    name_localizations: { fr: 'voter', de: 'abstimmen' },
    description: 'Vote for the bot',
    description_localizations: { 'es-ES': null },
    dm_permission: false,
    contexts: [1, 0],
    nsfw: false,
    options: [
      {
        type: 3,
        name: 'site',
        description: 'Where to vote',
        required: true,
        name_localizations: null,
        choices: [{ name: 'Top', value: 'top', name_localizations: null }, { name: 'Alpha', value: 'alpha', name_localizations: {} }],
      },
      { type: 4, name: 'times', description: 'How many times', min_value: 1, max_value: 5, required: false, autocomplete: false },
    ],
  },
];

describe('normaliseCommands: canonical form', () => {
  it('makes Discord API objects with ids and versions equal to the same commands written by hand', () => {
    const api = ok(normaliseCommands(fromDiscordApi));
    const hand = ok(normaliseCommands(handWritten));
    expect(api.commands).toEqual(hand.commands);
    expect(api.hash).toBe(hand.hash);
    expect(hand.commands).toEqual([
      { type: 1, name: 'ping', description: 'Replies with pong' },
      {
        type: 1,
        name: 'vote',
        description: 'Vote for the bot',
        name_localizations: { de: 'abstimmen', fr: 'voter' },
        default_member_permissions: '8',
        contexts: [0, 1],
        options: [
          { type: 3, name: 'site', description: 'Where to vote', required: true, choices: [{ name: 'Top', value: 'top' }, { name: 'Alpha', value: 'alpha' }] },
          { type: 4, name: 'times', description: 'How many times', min_value: 1, max_value: 5 },
        ],
      },
      { type: 3, name: 'Report' },
    ]);
  });

  it('sorts commands by type then name, and every key', () => {
    const { commands } = ok(normaliseCommands(handWritten));
    expect(commands.map((c) => `${c.type}:${c.name}`)).toEqual(['1:ping', '1:vote', '3:Report']);
    const vote = commands[1]!;
    expect(Object.keys(vote)).toEqual([...Object.keys(vote)].sort());
    expect(Object.keys(vote.options![0]!)).toEqual(['choices', 'description', 'name', 'required', 'type']);
  });

  it('treats a missing type as type 1', () => {
    const a = ok(normaliseCommands([{ name: 'ping', description: 'Pong' }]));
    const b = ok(normaliseCommands([{ type: 1, name: 'ping', description: 'Pong' }]));
    expect(a.commands).toEqual([{ type: 1, name: 'ping', description: 'Pong' }]);
    expect(a.hash).toBe(b.hash);
  });

  it('gives the same hash whatever the key order and the localization order', () => {
    const a = { name: 'ping', description: 'Pong', name_localizations: { de: 'klingeln', fr: 'sonner' } };
    const b = { name_localizations: { fr: 'sonner', de: 'klingeln' }, description: 'Pong', name: 'ping' };
    expect(ok(normaliseCommands([a])).hash).toBe(ok(normaliseCommands([b])).hash);
    // Command order in the list does not matter either.
    const c = { name: 'zap', description: 'Zap' };
    expect(ok(normaliseCommands([a, c])).hash).toBe(ok(normaliseCommands([c, b])).hash);
  });

  it('changes the hash when option order or choice order changes: users see that order', () => {
    const first = { type: 3, name: 'first', description: 'First' };
    const second = { type: 3, name: 'second', description: 'Second' };
    const one = ok(normaliseCommands([{ name: 'x', description: 'X', options: [first, second] }]));
    const two = ok(normaliseCommands([{ name: 'x', description: 'X', options: [second, first] }]));
    expect(one.hash).not.toBe(two.hash);
    expect(two.commands[0]!.options!.map((o) => o.name)).toEqual(['second', 'first']);

    const choices = (list: string[]) => [{ name: 'x', description: 'X', options: [{ ...first, choices: list.map((v) => ({ name: v, value: v })) }] }];
    expect(ok(normaliseCommands(choices(['a', 'b']))).hash).not.toBe(ok(normaliseCommands(choices(['b', 'a']))).hash);
  });

  it('drops empty and null localizations, null entries, empty options and false defaults', () => {
    const { commands } = ok(normaliseCommands([{
      name: 'ping',
      description: 'Pong',
      name_localizations: {},
      description_localizations: { de: null, fr: null },
      options: [],
      nsfw: false,
      default_member_permissions: null,
    }]));
    expect(commands).toEqual([{ type: 1, name: 'ping', description: 'Pong' }]);
    const nsfw = ok(normaliseCommands([{ name: 'ping', description: 'Pong', nsfw: true }]));
    expect(nsfw.commands[0]!.nsfw).toBe(true);
  });

  it('hashes the canonical JSON of the sorted list with sha256', () => {
    const { commands, hash } = ok(normaliseCommands(handWritten));
    expect(hash).toBe(createHash('sha256').update(canonicalJson(commands)).digest('hex'));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(canonicalJson({ b: 1, a: [{ d: undefined, c: 2 }] })).toBe('{"a":[{"c":2}],"b":1}');
    expect(normaliseCommands([])).toEqual({ ok: true, commands: [], hash: createHash('sha256').update('[]').digest('hex') });
  });

  it('takes the English localization as the base name and description when they are missing', () => {
    const { commands } = ok(normaliseCommands([{ name_localizations: { 'en-US': 'color', de: 'farbe' }, description_localizations: { 'en-GB': 'Pick a colour' } }]));
    expect(commands[0]).toMatchObject({ name: 'color', description: 'Pick a colour' });
  });

  it('reads discord.js camelCase data (ApplicationCommandData, received options)', () => {
    const camel = {
      name: 'vote',
      description: 'Vote for the bot',
      nameLocalizations: { fr: 'voter', de: 'abstimmen' },
      defaultMemberPermissions: 8n,
      contexts: [1, 0],
      options: [
        { type: 3, name: 'site', description: 'Where to vote', required: true, choices: [{ name: 'Top', value: 'top', nameLocalizations: null }, { name: 'Alpha', value: 'alpha' }] },
        { type: 4, name: 'times', description: 'How many times', minValue: 1, maxValue: 5, required: false },
      ],
    };
    const result = ok(normaliseCommands([camel, ...handWritten.slice(1)]));
    expect(result.hash).toBe(ok(normaliseCommands(handWritten)).hash);
  });

  it('normalises a real discord.js SlashCommandBuilder and ContextMenuCommandBuilder to the hand-written objects', () => {
    const vote = new SlashCommandBuilder()
      .setName('vote')
      .setDescription('Vote for the bot')
      .setNameLocalizations({ fr: 'voter', de: 'abstimmen' })
      .setDefaultMemberPermissions(PermissionFlagsBits.Administrator)
      .setContexts(1, 0)
      .addStringOption((o) => o.setName('site').setDescription('Where to vote').setRequired(true).addChoices({ name: 'Top', value: 'top' }, { name: 'Alpha', value: 'alpha' }))
      .addIntegerOption((o) => o.setName('times').setDescription('How many times').setMinValue(1).setMaxValue(5));
    const ping = new SlashCommandBuilder().setName('ping').setDescription('Replies with pong');
    const report = new ContextMenuCommandBuilder().setName('Report').setType(ApplicationCommandType.Message);
    const built = ok(normaliseCommands([report, vote, ping]));
    const hand = ok(normaliseCommands(handWritten));
    expect(built.commands).toEqual(hand.commands);
    expect(built.hash).toBe(hand.hash);
  });

  it('keeps option details: channel types as a set, lengths, autocomplete, nested sub-commands', () => {
    const { commands } = ok(normaliseCommands([{
      name: 'admin',
      description: 'Admin tools',
      options: [{
        type: ApplicationCommandOptionType.Subcommand,
        name: 'announce',
        description: 'Announce something',
        options: [
          { type: ApplicationCommandOptionType.Channel, name: 'where', description: 'Channel', channel_types: [ChannelType.GuildAnnouncement, ChannelType.GuildText, ChannelType.GuildText], required: true },
          { type: ApplicationCommandOptionType.String, name: 'text', description: 'Text', min_length: 1, max_length: 200, autocomplete: true, unknown_field: 'dropped' },
        ],
      }],
    }]));
    expect(commands[0]!.options![0]!.options).toEqual([
      { type: 7, name: 'where', description: 'Channel', channel_types: [0, 5], required: true },
      { type: 3, name: 'text', description: 'Text', min_length: 1, max_length: 200, autocomplete: true },
    ]);
  });

  it('fits the client\'s commands.set as is', () => {
    expectTypeOf<ListingCommand>().toExtend<ApplicationCommandShape>();
  });
});

describe('normaliseCommands: validation', () => {
  it('refuses 101 commands', () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ name: `c${i}`, description: 'd' }));
    expect(issuesOf(many)).toEqual([{ path: '', message: 'must hold at most 100 commands (got 101)' }]);
    expect(normaliseCommands(many.slice(0, 100)).ok).toBe(true);
  });

  it('names the command and the field of a bad name, a 101-character description and 26 options', () => {
    const options = Array.from({ length: 26 }, (_, i) => ({ type: 3, name: `o${i}`, description: 'd' }));
    const issues = issuesOf([
      { name: 'ok', description: 'fine' },
      { name: 'Ping Pong', description: 'Pong' },
      { name: 'long', description: 'x'.repeat(101) },
      { name: 'wide', description: 'Wide', options },
    ]);
    expect(issues).toEqual([
      { path: '[1].name', message: expect.stringContaining('(command "Ping Pong")') },
      { path: '[2].description', message: 'must be a string of 1 to 100 characters (got 101) (command "long")' },
      { path: '[3].options', message: 'must hold at most 25 options (got 26) (command "wide")' },
    ]);
  });

  it('refuses a command without an English entry, and a bad option deep down', () => {
    expect(issuesOf([{ name_localizations: { de: 'hallo' }, description: 'Hi' }])).toEqual([
      { path: '[0].name', message: expect.stringContaining('at least one English entry') },
    ]);
    expect(issuesOf([{ name: 'x', description: 'X', options: [{ type: 3, name: 'Bad', description: 'd' }] }])).toEqual([
      { path: '[0].options[0].name', message: 'must be lowercase (command "x")' },
    ]);
  });

  it('refuses duplicates that only normalising reveals (type 1 spelled out or not)', () => {
    expect(issuesOf([{ name: 'ping', description: 'a' }, { type: 1, name: 'ping', description: 'b' }])).toEqual([
      { path: '[1].name', message: 'duplicates the name of command [0] of the same type (command "ping")' },
    ]);
  });

  it('reports a builder whose toJSON() throws, and values that are not commands', () => {
    const broken = { toJSON: () => { throw new Error('Expected a string primitive'); } };
    expect(issuesOf([broken, 'ping'])).toEqual([
      { path: '[0]', message: 'its toJSON() failed: Expected a string primitive' },
      { path: '[1]', message: 'must be a command object (got string)' },
    ]);
  });

  it('refuses default_member_permissions that is not a permission bitset', () => {
    expect(issuesOf([{ name: 'x', description: 'X', default_member_permissions: ['Administrator'] }])).toEqual([
      { path: '[0].default_member_permissions', message: expect.stringContaining('(command "x")') },
    ]);
  });
});
