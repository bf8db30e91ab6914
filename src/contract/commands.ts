import {
  type FieldProblem,
  type Validated,
  charLength,
  invalid,
  isJsonObject,
  joinPath,
  jsonTypeName,
} from './field-problems.js';
import { DECISION_DEFAULTS } from './limits.js';

/**
 * The rules of `PUT /projects/:id/commands` (decisions.md, "commands validation"): a JSON array of
 * at most 100 chat-platform application commands. Shared by the emulator (422) and clients that
 * check commands before sending. Fields the rules do not mention (`id`, `contexts`,
 * `default_member_permissions`, option `choices`, ...) pass through unchecked and are stored as sent.
 */

/** Application command types of the chat platform; an absent `type` means chat input. */
export const COMMAND_TYPES = { chatInput: 1, user: 2, message: 3, primaryEntryPoint: 4 } as const;
/** Option types of the chat platform run from SUB_COMMAND (1) to ATTACHMENT (11). */
const COMMAND_OPTION_TYPE_RANGE = { min: 1, max: 11 } as const;
/** Names and descriptions are at least one character long. */
const COMMAND_TEXT_MIN_LENGTH = 1;
/** Option arrays nest at most this deep (command > sub-command group > sub-command > option). */
const COMMAND_OPTIONS_MAX_DEPTH = 3;
/** Locales that count as English in `name_localizations` / `description_localizations`. */
export const ENGLISH_COMMAND_LOCALES = ['en-US', 'en-GB'] as const;

/**
 * Chat-input command and option names: 1 to 32 letters, digits, `-`, `_` or `'` (Unicode aware);
 * they must also be lowercase ({@link commandNameProblem}).
 */
const CHAT_INPUT_NAME_PATTERN = new RegExp(
  `^[-_'\\p{L}\\p{N}]{${COMMAND_TEXT_MIN_LENGTH},${DECISION_DEFAULTS.commandNameMaxLength}}$`,
  'u',
);

/** A command option as the rules see it; other fields pass through. */
export interface ApplicationCommandOption {
  type: number;
  name: string;
  description: string;
  name_localizations?: Record<string, string> | null;
  description_localizations?: Record<string, string> | null;
  options?: ApplicationCommandOption[];
  [field: string]: unknown;
}

/** An application command as the rules see it; other fields pass through. */
export interface ApplicationCommand {
  /** Default 1 (chat input). */
  type?: number;
  /** Optional only when `name_localizations` has an English entry. */
  name?: string;
  name_localizations?: Record<string, string> | null;
  description?: string;
  description_localizations?: Record<string, string> | null;
  options?: ApplicationCommandOption[] | null;
  [field: string]: unknown;
}

/**
 * Why `name` is not a valid command or option name, or null when it is. Chat-input names (and
 * every option name) follow {@link CHAT_INPUT_NAME_PATTERN} and must be lowercase; user and message
 * command names may hold spaces and capitals, so only their length (1 to 32) is checked.
 */
export function commandNameProblem(name: unknown, chatInput: boolean): string | null {
  const max = DECISION_DEFAULTS.commandNameMaxLength;
  const wanted = `a string of ${COMMAND_TEXT_MIN_LENGTH} to ${max} characters`;
  if (typeof name !== 'string') return `must be ${wanted} (got ${jsonTypeName(name)})`;
  const length = charLength(name);
  if (length < COMMAND_TEXT_MIN_LENGTH || length > max) return `must be ${wanted} (got ${length})`;
  if (!chatInput) return null;
  if (!CHAT_INPUT_NAME_PATTERN.test(name)) return "may hold only letters, digits, '-', '_' and \"'\" (no spaces)";
  if (name !== name.toLowerCase()) return 'must be lowercase';
  return null;
}

/**
 * Why `description` is not a valid description, or null when it is: 1 to 100 characters, or 0 to
 * 100 with `allowEmpty` (default false; user and message commands carry an empty one).
 */
function commandDescriptionProblem(description: unknown, allowEmpty = false): string | null {
  const min = allowEmpty ? 0 : COMMAND_TEXT_MIN_LENGTH;
  const max = DECISION_DEFAULTS.commandDescriptionMaxLength;
  const wanted = `a string of ${min} to ${max} characters`;
  if (typeof description !== 'string') return `must be ${wanted} (got ${jsonTypeName(description)})`;
  const length = charLength(description);
  return length < min || length > max ? `must be ${wanted} (got ${length})` : null;
}

function hasEnglishEntry(localizations: unknown): boolean {
  return isJsonObject(localizations) && ENGLISH_COMMAND_LOCALES.some((locale) => typeof localizations[locale] === 'string');
}

/** Problems of a `*_localizations` map: an object (or null) whose values each pass `valueProblem`. */
function localizationProblems(path: string, value: unknown, valueProblem: (text: unknown) => string | null): FieldProblem[] {
  if (value === undefined || value === null) return [];
  if (!isJsonObject(value)) {
    return [{ path, message: `must be an object mapping a locale to a string, or null (got ${jsonTypeName(value)})` }];
  }
  const problems: FieldProblem[] = [];
  for (const [locale, text] of Object.entries(value)) {
    const problem = valueProblem(text);
    if (problem) problems.push({ path: joinPath(path, locale), message: problem });
  }
  return problems;
}

/** Problems of an `options` array at `depth` (1 for a command's own options). */
function optionsProblems(path: string, options: unknown, depth: number): FieldProblem[] {
  if (options === undefined || options === null) return [];
  if (!Array.isArray(options)) return [{ path, message: `must be an array of options (got ${jsonTypeName(options)})` }];
  if (depth > COMMAND_OPTIONS_MAX_DEPTH) {
    const message = `options nest at most ${COMMAND_OPTIONS_MAX_DEPTH} levels (command > group > sub-command > option)`;
    return [{ path, message }];
  }
  const max = DECISION_DEFAULTS.commandOptionsMax;
  if (options.length > max) return [{ path, message: `must hold at most ${max} options (got ${options.length})` }];
  return options.flatMap((option: unknown, index) => optionProblems(joinPath(path, index), option, depth));
}

function optionProblems(path: string, option: unknown, depth: number): FieldProblem[] {
  if (!isJsonObject(option)) return [{ path, message: `must be an option object (got ${jsonTypeName(option)})` }];
  const problems: FieldProblem[] = [];
  const { min, max } = COMMAND_OPTION_TYPE_RANGE;
  if (typeof option.type !== 'number' || !Number.isInteger(option.type) || option.type < min || option.type > max) {
    problems.push({ path: joinPath(path, 'type'), message: `must be an option type, an integer ${min} to ${max}` });
  }
  const name = commandNameProblem(option.name, true);
  if (name) problems.push({ path: joinPath(path, 'name'), message: name });
  const description = commandDescriptionProblem(option.description);
  if (description) problems.push({ path: joinPath(path, 'description'), message: description });
  const nameRule = (text: unknown) => commandNameProblem(text, true);
  const descriptionRule = (text: unknown) => commandDescriptionProblem(text);
  problems.push(...localizationProblems(joinPath(path, 'name_localizations'), option.name_localizations, nameRule));
  problems.push(
    ...localizationProblems(joinPath(path, 'description_localizations'), option.description_localizations, descriptionRule),
  );
  problems.push(...optionsProblems(joinPath(path, 'options'), option.options, depth + 1));
  return problems;
}

function isChatInput(type: unknown): boolean {
  return type === undefined || type === null || type === COMMAND_TYPES.chatInput;
}

/** Problems of one command at `path` (`[3]`), before the command label is attached. */
function commandProblems(path: string, command: Record<string, unknown>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const types: readonly unknown[] = Object.values(COMMAND_TYPES);
  if (command.type !== undefined && command.type !== null && !types.includes(command.type)) {
    const message = 'must be 1 (chat input), 2 (user), 3 (message) or 4 (primary entry point)';
    problems.push({ path: joinPath(path, 'type'), message });
  }
  const chatInput = isChatInput(command.type);
  const nameRule = (text: unknown) => commandNameProblem(text, chatInput);
  if (command.name === undefined || command.name === null) {
    if (!hasEnglishEntry(command.name_localizations)) {
      problems.push({
        path: joinPath(path, 'name'),
        message: 'is required: each command needs at least one English entry ' +
          `(a base name, or name_localizations ${ENGLISH_COMMAND_LOCALES.join(' or ')})`,
      });
    }
  } else {
    const name = nameRule(command.name);
    if (name) problems.push({ path: joinPath(path, 'name'), message: name });
  }
  problems.push(...localizationProblems(joinPath(path, 'name_localizations'), command.name_localizations, nameRule));
  // User and message commands carry an empty description on the chat platform.
  const descriptionRule = (text: unknown) => commandDescriptionProblem(text, !chatInput);
  if (command.description === undefined || command.description === null) {
    if (chatInput && !hasEnglishEntry(command.description_localizations)) {
      problems.push({
        path: joinPath(path, 'description'),
        message: 'is required for chat-input commands: a base description, ' +
          `or description_localizations ${ENGLISH_COMMAND_LOCALES.join(' or ')}`,
      });
    }
  } else {
    const description = descriptionRule(command.description);
    if (description) problems.push({ path: joinPath(path, 'description'), message: description });
  }
  const descriptionPath = joinPath(path, 'description_localizations');
  problems.push(...localizationProblems(descriptionPath, command.description_localizations, descriptionRule));
  problems.push(...optionsProblems(joinPath(path, 'options'), command.options, 1));
  return problems;
}

/** The name a problem message shows for a command: its base name, else its English localization. */
function commandLabel(command: Record<string, unknown>): string | undefined {
  if (typeof command.name === 'string') return command.name;
  const localized = isJsonObject(command.name_localizations) ? command.name_localizations : {};
  const english = ENGLISH_COMMAND_LOCALES.map((locale) => localized[locale]).find((n) => typeof n === 'string');
  return typeof english === 'string' ? english : undefined;
}

/**
 * Validates a `PUT /projects/:id/commands` body: a JSON array of at most 100 commands (empty
 * clears). Per command: `type` absent or 1 to 4; a name (1 to 32 characters; for chat-input
 * commands lowercase and matching {@link CHAT_INPUT_NAME_PATTERN}); at least one English entry
 * (the base `name`, or `name_localizations` `en-US`/`en-GB`); a chat-input description of 1 to 100
 * characters; at most 25 options per level, options checked the same way. Two commands of one type
 * may not share a name. Each message names the command (`[3].name: must be lowercase (command "Ping")`).
 */
export function validateCommands(body: unknown): Validated<ApplicationCommand[]> {
  if (!Array.isArray(body)) {
    return invalid('', `must be a JSON array of command objects (got ${jsonTypeName(body)})`);
  }
  const max = DECISION_DEFAULTS.commandsMaxItems;
  if (body.length > max) return invalid('', `must hold at most ${max} commands (got ${body.length})`);
  const problems: FieldProblem[] = [];
  const seen = new Map<string, number>();
  body.forEach((command: unknown, index) => {
    const path = joinPath('', index);
    if (!isJsonObject(command)) {
      problems.push({ path, message: `must be a command object (got ${jsonTypeName(command)})` });
      return;
    }
    const label = commandLabel(command);
    const own = commandProblems(path, command);
    if (label !== undefined) {
      // The platform refuses two commands of one type with one name.
      const key = `${isChatInput(command.type) ? COMMAND_TYPES.chatInput : String(command.type)}:${label}`;
      const first = seen.get(key);
      if (first === undefined) seen.set(key, index);
      else own.push({ path: joinPath(path, 'name'), message: `duplicates the name of command [${first}] of the same type` });
    }
    const suffix = label === undefined ? '' : ` (command ${JSON.stringify(label)})`;
    problems.push(...own.map((p) => ({ path: p.path, message: `${p.message}${suffix}` })));
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: body as ApplicationCommand[] };
}
