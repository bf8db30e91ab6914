import { createHash } from 'node:crypto';
import { COMMAND_TYPES, ENGLISH_COMMAND_LOCALES, validateCommands } from '../contract/commands.js';
import type { FieldIssue } from '../errors.js';
import type { ListingCommand } from './types.js';

/*
 * Turns whatever a source loaded (Discord's command objects, discord.js builders and structures,
 * hand-written objects) into the one form the listing takes, so that equal command sets hash
 * equal and a restart with unchanged commands sends nothing. Pure: no clock, no I/O.
 */

export type { ListingCommand,    } from './types.js';

/** What {@link normaliseCommands} gives: the sorted, validated set and its hash, or every problem. */
export type NormalisedCommands = { ok: true; commands: ListingCommand[]; hash: string } | { ok: false; issues: FieldIssue[] };

/**
 * The command fields the listing takes. Everything else is dropped: Discord's bookkeeping (`id`,
 * `application_id`, `version`, `guild_id`, timestamps), fields the listing has no use for or that
 * Discord deprecated (`default_permission`, `dm_permission`, replaced by `contexts`), the Activity
 * `handler`, the per-request `name_localized`/`description_localized`, and anything unknown.
 */
const KEPT_COMMAND_FIELDS = [
  'contexts',
  'default_member_permissions',
  'description',
  'description_localizations',
  'integration_types',
  'name',
  'name_localizations',
  'nsfw',
  'options',
  'type',
] as const;

/** The option fields the listing takes, at every level; `choices` keep `name`, `name_localizations`, `value`. */
const KEPT_OPTION_FIELDS = [
  'autocomplete',
  'channel_types',
  'choices',
  'description',
  'description_localizations',
  'max_length',
  'max_value',
  'min_length',
  'min_value',
  'name',
  'name_localizations',
  'options',
  'required',
  'type',
] as const;

/**
 * discord.js's own spellings (`ApplicationCommandData`, `ApplicationCommand` structures and their
 * `toJSON()`), read when the API spelling is absent, so that every discord.js form compares equal
 * to Discord's.
 */
const CAMEL_CASE: Readonly<Record<string, string>> = {
  channel_types: 'channelTypes',
  default_member_permissions: 'defaultMemberPermissions',
  description_localizations: 'descriptionLocalizations',
  integration_types: 'integrationTypes',
  max_length: 'maxLength',
  max_value: 'maxValue',
  min_length: 'minLength',
  min_value: 'minValue',
  name_localizations: 'nameLocalizations',
};

type Fields = Record<string, unknown>;

function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field in the API spelling, else in discord.js's; null counts as absent (Discord sends null for "none"). */
function field(raw: Fields, name: string): unknown {
  const value = raw[name];
  if (value !== undefined && value !== null) return value;
  const camel = CAMEL_CASE[name];
  const alias = camel === undefined ? undefined : raw[camel];
  return alias === null ? undefined : alias;
}

/** Code-unit order: the same everywhere, unlike `localeCompare`. */
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** An object with its keys sorted and undefined values left out. */
function sortedObject(entries: Iterable<[string, unknown]>): Fields {
  const out: Fields = {};
  for (const [key, value] of [...entries].sort(([a], [b]) => byCodeUnit(a, b))) if (value !== undefined) out[key] = value;
  return out;
}

/** A localization map without null entries, sorted by locale; absent when empty. Not a map: as given, for the validator. */
function localizations(value: unknown): unknown {
  if (value === undefined || value === null || !isRecord(value)) return value ?? undefined;
  const map = sortedObject(Object.entries(value).filter(([, text]) => text !== null));
  return Object.keys(map).length > 0 ? map : undefined;
}

/** An array used as a set of enum values (`contexts`): sorted, without repeats. Other values as given. */
function numberSet(value: unknown): unknown {
  if (!Array.isArray(value) || !value.every((n) => typeof n === 'number')) return value ?? undefined;
  return [...new Set(value as number[])].sort((a, b) => a - b);
}

/** A flag whose default is false: only `true` (or a wrong value, for the validator) is kept. */
function flag(value: unknown): unknown {
  return value === false || value === null ? undefined : value;
}

/** A list that means nothing when empty (`options: []` from a builder); items mapped in their order. */
function list(value: unknown, item: (raw: unknown) => unknown): unknown {
  if (!Array.isArray(value)) return value ?? undefined;
  return value.length > 0 ? value.map(item) : undefined;
}

/** `default_member_permissions` as Discord's decimal string, from a string, number, bigint or discord.js `PermissionsBitField`. */
function permissions(value: unknown): unknown {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'bigint' && value >= 0n) return value.toString();
  if (isRecord(value) && (typeof value.bitfield === 'bigint' || typeof value.bitfield === 'number')) return permissions(value.bitfield);
  return value;
}

function choice(raw: unknown): unknown {
  if (!isRecord(raw)) return raw;
  return sortedObject([
    ['name', raw.name],
    ['name_localizations', localizations(field(raw, 'name_localizations'))],
    ['value', raw.value],
  ]);
}

function option(raw: unknown): unknown {
  if (!isRecord(raw)) return raw;
  return sortedObject([
    ['autocomplete', flag(raw.autocomplete)],
    ['channel_types', numberSet(field(raw, 'channel_types'))],
    // Choices keep their order: Discord shows them so.
    ['choices', list(raw.choices, choice)],
    ['description', raw.description ?? undefined],
    ['description_localizations', localizations(field(raw, 'description_localizations'))],
    ['max_length', field(raw, 'max_length')],
    ['max_value', field(raw, 'max_value')],
    ['min_length', field(raw, 'min_length')],
    ['min_value', field(raw, 'min_value')],
    ['name', raw.name ?? undefined],
    ['name_localizations', localizations(field(raw, 'name_localizations'))],
    // Options keep their order: Discord shows them so, and required ones must come first.
    ['options', list(raw.options, option)],
    ['required', flag(raw.required)],
    ['type', raw.type ?? undefined],
  ]);
}

/** The English entry of a localization map (`en-US`, else `en-GB`), if any. */
function english(map: unknown): string | undefined {
  if (!isRecord(map)) return undefined;
  const found = ENGLISH_COMMAND_LOCALES.map((locale) => map[locale]).find((text) => typeof text === 'string');
  return typeof found === 'string' ? found : undefined;
}

function command(raw: Fields): Fields {
  const type = raw.type ?? COMMAND_TYPES.chatInput;
  const chatInput = type === COMMAND_TYPES.chatInput;
  const nameLocalizations = localizations(field(raw, 'name_localizations'));
  const descriptionLocalizations = localizations(field(raw, 'description_localizations'));
  // The contract reads the base name and description as English: without them, the English
  // localization is the base (Discord itself requires a base name).
  const name = raw.name ?? english(nameLocalizations);
  let description = raw.description ?? (chatInput ? english(descriptionLocalizations) : undefined);
  // User and message commands carry `''` from Discord and nothing when written by hand.
  if (!chatInput && description === '') description = undefined;
  return sortedObject([
    ['contexts', numberSet(field(raw, 'contexts'))],
    ['default_member_permissions', permissions(field(raw, 'default_member_permissions'))],
    ['description', description],
    ['description_localizations', descriptionLocalizations],
    ['integration_types', numberSet(field(raw, 'integration_types'))],
    ['name', name],
    ['name_localizations', nameLocalizations],
    ['nsfw', flag(raw.nsfw)],
    ['options', list(raw.options, option)],
    ['type', type],
  ]);
}

/** A builder or structure (anything with `toJSON()`) as its JSON form; a plain object as is. */
function plain(raw: unknown, path: string): { value: unknown } | { issue: FieldIssue } {
  if (!isRecord(raw) || typeof raw.toJSON !== 'function') return { value: raw };
  try {
    return { value: (raw.toJSON as () => unknown).call(raw) };
  } catch (error) {
    // A discord.js builder checks itself in toJSON() (a missing name, a bad option).
    const message = error instanceof Error ? error.message.replace(/\s+/g, ' ').slice(0, 300) : String(error);
    return { issue: { path, message: `its toJSON() failed: ${message}` } };
  }
}

/** Rules the contract leaves out but Discord enforces on the fields normalising rewrites. */
function localIssues(commands: readonly unknown[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  commands.forEach((entry, index) => {
    if (!isRecord(entry)) return;
    const bits = entry.default_member_permissions;
    if (bits !== undefined && (typeof bits !== 'string' || !/^\d{1,20}$/.test(bits))) {
      const label = typeof entry.name === 'string' ? ` (command ${JSON.stringify(entry.name)})` : '';
      issues.push({
        path: `[${index}].default_member_permissions`,
        message: `must be a permission bitset: a decimal string, a number, a bigint or a PermissionsBitField${label}`,
      });
    }
  });
  return issues;
}

/**
 * JSON with every object's keys sorted (arrays keep their order) and undefined values left out:
 * the same text for the same data, whatever order its keys were written in.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (isRecord(value)) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => byCodeUnit(a, b));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The sha256 hex of the {@link canonicalJson} of an already normalised command list. */
export function hashCommands(commands: readonly ListingCommand[]): string {
  return createHash('sha256').update(canonicalJson(commands)).digest('hex');
}

/** Orders commands by type, then name (code units), the order of the normalised list. */
export function compareCommands(a: ListingCommand, b: ListingCommand): number {
  return a.type - b.type || byCodeUnit(a.name, b.name);
}

/**
 * Normalises and validates a loaded command list into the listing's form.
 *
 * - Accepts Discord's command objects (from the API or discord.js `toJSON()`), anything with a
 *   `toJSON()` returning one (discord.js `SlashCommandBuilder`, `ContextMenuCommandBuilder`,
 *   `ApplicationCommand`), discord.js's camelCase `ApplicationCommandData`, and plain objects.
 * - Keeps {@link KEPT_COMMAND_FIELDS} and, in options at every level, {@link KEPT_OPTION_FIELDS};
 *   drops the rest and every null-valued field.
 * - Canonical form: `type` defaults to 1 and is written out; localization maps lose null entries,
 *   are sorted by locale and are left out when empty; `required`, `autocomplete` and `nsfw` are
 *   kept only when true; empty `options` and `choices` are left out; `contexts`,
 *   `integration_types` and `channel_types` are sorted sets; `default_member_permissions` is a
 *   decimal string; a user or message command's empty description is left out; a missing base
 *   name or chat-input description takes the English localization. Keys are sorted; commands are
 *   sorted by (type, name). Options and choices keep their order: that order is what users see.
 * - Validates with the contract's `validateCommands` (the emulator's rules: at most 100 commands,
 *   names, descriptions, 25 options, the English entry, no duplicates) before sorting, so each
 *   issue's path is the command's index in `raw` and its message names the command
 *   (`[2].name: must be lowercase (command "Ping")`).
 * - `hash`: sha256 hex of the canonical JSON of the sorted list ({@link hashCommands}).
 */
export function normaliseCommands(raw: readonly unknown[]): NormalisedCommands {
  const failed: FieldIssue[] = [];
  const normalised = raw.map((item, index) => {
    const converted = plain(item, `[${index}]`);
    if ('issue' in converted) {
      failed.push(converted.issue);
      return undefined;
    }
    return isRecord(converted.value) ? command(converted.value) : converted.value;
  });
  const checked = validateCommands(normalised);
  // A builder whose toJSON() failed is already explained; "must be a command object" would repeat it.
  const contract = checked.ok ? [] : checked.problems.filter((p) => !failed.some((f) => f.path === p.path));
  const issues = [...failed, ...contract, ...localIssues(normalised)];
  if (issues.length > 0) return { ok: false, issues };
  // Validated above: every entry is an object with a string name and a numeric type.
  const commands = (normalised as unknown as ListingCommand[]).sort(compareCommands);
  return { ok: true, commands, hash: hashCommands(commands) };
}
