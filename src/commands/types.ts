/**
 * Where the bot's commands come from: Discord (the bot's registered global commands), a JSON file,
 * or objects and builders passed in code. A source says why it cannot answer rather than
 * answering an empty list: an empty list is a real sync that clears the listing.
 */
export type CommandLoad = { ok: true; commands: unknown[] } | { ok: false; reason: string };

/** One small interface behind every command source. */
export interface CommandSource {
  /** What it is, for logs (`Discord REST (application 3000…)`, `file ./commands.json`). */
  readonly description: string;
  /** Loads the raw command objects; never throws for an expected condition. */
  load(signal?: AbortSignal): Promise<CommandLoad>;
}

/** How one command differs between the last synced set and the current one. */
export interface CommandChange {
  /** `name` (and `type` when not a chat-input command): the command's identity. */
  key: string;
  /** The top-level fields that differ (`description`, `options`, `name_localizations`, ...). */
  fields: string[];
}

/** What a sync would change on the listing. */
export interface CommandDiff {
  added: string[];
  removed: string[];
  changed: CommandChange[];
  /** True when nothing differs. */
  same: boolean;
}

/** What `commandsSynced` carries. */
export interface CommandSyncResult {
  /** Commands in the set. */
  count: number;
  /** True when the hash matched the last successful sync, so nothing was sent. */
  skipped: boolean;
  /** The hash of the normalised set (sha256 hex). */
  hash: string;
  diff: CommandDiff;
  /** Why it ran: `start`, `schedule`, `demand`. */
  reason: 'start' | 'schedule' | 'demand';
}

/** What `commandsSyncFailed` carries. */
export interface CommandSyncFailure {
  error: Error;
  reason: CommandSyncResult['reason'];
}

/**
 * Text per chat-platform locale (`de`, `en-US`), as the listing takes it after normalising: only
 * string entries, sorted by locale, never empty (an empty map is left out instead).
 */
export type ListingLocalizations = Record<string, string>;

/** A choice of a string, integer or number option, in its given order. */
export interface ListingCommandChoice {
  name: string;
  name_localizations?: ListingLocalizations;
  value: string | number;
}

/**
 * An option of a {@link ListingCommand} after normalising: only the fields the listing takes, with
 * Discord's defaults left out (`required: false`, `autocomplete: false`, empty `choices`/`options`).
 */
export interface ListingCommandOption {
  type: number;
  name: string;
  description: string;
  name_localizations?: ListingLocalizations;
  description_localizations?: ListingLocalizations;
  /** Present only when true (false is Discord's default). */
  required?: true;
  choices?: ListingCommandChoice[];
  options?: ListingCommandOption[];
  /** Sorted ascending, without repeats: a set of channel types. */
  channel_types?: number[];
  min_value?: number;
  max_value?: number;
  min_length?: number;
  max_length?: number;
  /** Present only when true. */
  autocomplete?: true;
}

/**
 * One command as `PUT /projects/@me/commands` gets it after `normaliseCommands`: the fields the
 * listing takes (see `src/commands/normalise.ts` for the kept set), `type` always present, keys and
 * localization maps sorted. Fits the client's `commands.set` as is.
 */
export interface ListingCommand {
  /** 1 chat input (the default, always written out), 2 user, 3 message, 4 primary entry point. */
  type: number;
  name: string;
  /** Chat-input commands always carry one; user and message commands none (Discord's `''` is left out). */
  description?: string;
  name_localizations?: ListingLocalizations;
  description_localizations?: ListingLocalizations;
  /** In the given order: Discord shows them so, and required options must come first. */
  options?: ListingCommandOption[];
  /** A permission bitset as a decimal string (`"8"`); absent when anyone may use the command. */
  default_member_permissions?: string;
  /** Present only when true (false is Discord's default). */
  nsfw?: true;
  /** Sorted ascending, without repeats: a set of installation contexts. */
  integration_types?: number[];
  /** Sorted ascending, without repeats: a set of interaction contexts. */
  contexts?: number[];
}

/** The events the commands capability emits, as the agent's (`agent.on('commandsSynced', ...)`). */
export interface CommandsEvents {
  /** The command set was checked: synced, or skipped because it had not changed. */
  commandsSynced: [result: CommandSyncResult];
  /** A command sync failed (the source, local validation, or the service). */
  commandsSyncFailed: [failure: CommandSyncFailure];
}
