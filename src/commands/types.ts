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
