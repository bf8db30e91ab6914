import { COMMAND_TYPES } from '../contract/commands.js';
import { canonicalJson, compareCommands } from './normalise.js';
import type { CommandChange, CommandDiff, ListingCommand } from './types.js';

/*
 * What a sync would change, as plain data from two normalised lists (pure). Used for the
 * `commandsSynced` event, the logs and `listing-agent commands diff`.
 */

/** How a non-chat-input type shows in a key (`Report (message)`). */
const TYPE_WORDS: Readonly<Record<number, string>> = {
  [COMMAND_TYPES.user]: 'user',
  [COMMAND_TYPES.message]: 'message',
  [COMMAND_TYPES.primaryEntryPoint]: 'entry point',
};

/**
 * A command's identity for people: its name for a chat-input command (`vote`), its name and type
 * otherwise (`Report (message)`, `Launch (entry point)`, `x (type 9)`), since a user command and a
 * message command may share a name.
 */
export function commandKey(command: Pick<ListingCommand, 'type' | 'name'>): string {
  if (command.type === COMMAND_TYPES.chatInput) return command.name;
  return `${command.name} (${TYPE_WORDS[command.type] ?? `type ${command.type}`})`;
}

/** The identity used to match commands across the two lists: (type, name). */
function identity(command: ListingCommand): string {
  return `${command.type}\u0000${command.name}`;
}

/** The top-level fields whose values differ (deep, key order ignored), sorted by name. */
function changedFields(before: ListingCommand, after: ListingCommand): string[] {
  const a = before as unknown as Record<string, unknown>;
  const b = after as unknown as Record<string, unknown>;
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return names.filter((name) => canonicalJson(a[name]) !== canonicalJson(b[name]));
}

/**
 * Compares the last synced set with the current one, both normalised (`normaliseCommands`).
 * Commands are matched by (type, name); a renamed command is one removed and one added. `changed`
 * lists each command whose fields differ, with the top-level fields that do (`description`,
 * `options`, `name_localizations`, ...). Each list follows the normalised order (type, then name).
 * With no previous set (never synced), every command is added.
 */
export function diffCommands(previous: readonly ListingCommand[] | undefined, next: readonly ListingCommand[]): CommandDiff {
  const before = new Map((previous ?? []).map((command) => [identity(command), command]));
  const after = new Map(next.map((command) => [identity(command), command]));
  const added: ListingCommand[] = [];
  const changed: { command: ListingCommand; fields: string[] }[] = [];
  for (const [id, command] of after) {
    const old = before.get(id);
    if (old === undefined) {
      added.push(command);
      continue;
    }
    const fields = changedFields(old, command);
    if (fields.length > 0) changed.push({ command, fields });
  }
  const removed = [...before].filter(([id]) => !after.has(id)).map(([, command]) => command);
  const keys = (list: ListingCommand[]) => list.sort(compareCommands).map(commandKey);
  const changes: CommandChange[] = changed
    .sort((x, y) => compareCommands(x.command, y.command))
    .map(({ command, fields }) => ({ key: commandKey(command), fields }));
  const diff = { added: keys(added), removed: keys(removed), changed: changes };
  return { ...diff, same: diff.added.length === 0 && diff.removed.length === 0 && changes.length === 0 };
}

/**
 * The diff as lines for the CLI: `+ ping` per added command, `- old` per removed one,
 * `~ vote: description, options` per changed one, in that order. Empty when nothing differs
 * (the caller says "no changes" its own way).
 */
export function formatDiff(diff: CommandDiff): string[] {
  return [
    ...diff.added.map((key) => `+ ${key}`),
    ...diff.removed.map((key) => `- ${key}`),
    ...diff.changed.map((change) => `~ ${change.key}: ${change.fields.join(', ')}`),
  ];
}
