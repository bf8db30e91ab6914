import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { silentLogger, type AgentLogger } from '../../log/agent-logger.js';
import { createCommitter, type Committer } from '../../store/committer.js';
import { errnoCode, fsReason, STATE_DIRECTORY_SETTING, StoreError } from '../../store/errors.js';
import { NO_DIRECTORY_SYNC } from '../../store/fs.js';
import {
  makeStateDirectory,
  newerJournalError,
  nodeJournalFs,
  readJournalText,
  replayLines,
  writeNewFile,
  type JournalFormat,
  type JournalFs,
  type ReplayResult,
} from '../journal.js';
import { VERSION_2_ASIDE } from '../ledger-file-disk.js';
import { carryOver } from './carry-over.js';
import type { ReminderStore } from './reminders.js';
import { createReminderSchedule, type ReminderRecord, type ReminderSchedule } from './schedule.js';

/*
 * This agent's own schedule (not Redis's): a Map in memory, and on the file state the vote
 * reminders' own journal, `<state.directory>/reminders.journal`: JSON lines after a header,
 * appended and fdatasynced in group commits (`createCommitter`), rewritten as a snapshot once it
 * has grown well past what it holds.
 *
 * - `{"t":"s","r":<reminder>}`: a reminder scheduled (it replaces an older vote's of the same voter);
 * - `{"t":"e","r":<reminder>,"sent":true|false}`: it ended, handed to its hooks or skipped as late.
 *
 * A snapshot is the last sent (as `e` lines, oldest first), then every reminder scheduled. When the
 * journal does not exist yet, the schedule of the journals an earlier version kept it in is carried
 * over (`carry-over.ts`), and written here as the journal's first snapshot: once.
 */

/** The journal's name in the state directory. */
export const REMINDERS_JOURNAL = 'reminders.journal';

const HEADER = { t: 'journal', format: 'listing-agent reminders', version: 1 } as const;
const HEADER_LINE = `${JSON.stringify(HEADER)}\n`;
const TMP_MARK = '.tmp-';
/** About how many bytes a line of one reminder takes (18-digit IDs), for the snapshot's size. */
const LINE_BYTES = 200;

/** The newest first, at most 10: what a store keeps of the reminders sent. */
const withSent = (lastSent: readonly ReminderRecord[], sent: readonly ReminderRecord[]) =>
  [...[...sent].reverse(), ...lastSent].slice(0, 10);

/** One line of the journal. */
type ReminderLine = { t: 's'; r: ReminderRecord } | { t: 'e'; r: ReminderRecord; sent: boolean };

const isString = (value: unknown): value is string => typeof value === 'string';
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

function isReminder(value: unknown): value is ReminderRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    isString(r.projectId) &&
    isString(r.userId) &&
    (r.platformId === null || isString(r.platformId)) &&
    typeof r.weight === 'number' &&
    isTime(r.createdMs) &&
    isTime(r.expiresMs) &&
    (r.road === 'poll' || r.road === 'webhook')
  );
}

/** How the journal's lines read (for `replayLines`). */
const FORMAT: JournalFormat<ReminderLine> = {
  readHeader(line) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { kind: 'none' };
    }
    const header = value as Partial<Record<keyof typeof HEADER, unknown>> | null;
    if (header?.t !== HEADER.t || header.format !== HEADER.format || typeof header.version !== 'number') return { kind: 'none' };
    return header.version > HEADER.version ? { kind: 'newer', version: header.version } : { kind: 'ours', version: header.version };
  },
  parseRecord(line) {
    let value: { t?: unknown; r?: unknown; sent?: unknown };
    try {
      value = JSON.parse(line) as typeof value;
    } catch {
      return undefined;
    }
    if (!isReminder(value?.r)) return undefined;
    if (value.t === 's') return { t: 's', r: value.r };
    return value.t === 'e' && typeof value.sent === 'boolean' ? { t: 'e', r: value.r, sent: value.sent } : undefined;
  },
};

const lineOf = (line: ReminderLine) => `${JSON.stringify(line)}\n`;

/**
 * Replays a reminders journal's text into `schedule` (pure: the agent at open and the CLI beside
 * it read a journal the same way); resolves with the last sent, newest first, and what the replay found.
 */
export function replayReminders(text: string, schedule: ReminderSchedule): { sent: ReminderRecord[]; replay: ReplayResult } {
  let sent: ReminderRecord[] = [];
  const replay = replayLines(text, FORMAT, (line) => {
    if (line.t === 's') {
      schedule.put(line.r);
      return;
    }
    schedule.remove(line.r.projectId, line.r.userId, line.r.createdMs);
    if (line.sent) sent = withSent(sent, [line.r]);
  });
  return { sent, replay };
}

/** Options of {@link createLocalReminderStore}. */
export interface LocalReminderStoreOptions {
  /**
   * The agent's state directory (its `state.lock` held by the agent's file store): the schedule is
   * kept in `<directory>/reminders.journal`. Default: none, the schedule lives in memory only.
   */
  directory?: string;
  /** `votes.reminders.delay`. Default 0. */
  delayMs?: number;
  /** The file system. Default `node:fs/promises`. */
  fs?: JournalFs;
  /** The journal is rewritten only once it is at least this big. Default 1 048 576 (1 MiB). */
  compactMinBytes?: number;
  /** ... and at least this many times the size of a snapshot. Default 4. */
  compactRatio?: number;
  /** Where a repaired journal and a failed last write are said (`warn`). Default: silent. */
  logger?: AgentLogger;
}

interface FileState {
  readonly directory: string;
  readonly path: string;
  readonly fs: JournalFs;
  readonly schedule: ReminderSchedule;
  readonly logger: AgentLogger;
  readonly compactMinBytes: number;
  readonly compactRatio: number;
  sent: ReminderRecord[];
  /** Lines applied in memory, not yet handed to a write. */
  queued: string[];
  bytes: number;
  /** The next write is a rewrite (a snapshot): after a carry-over, a repair, or a failed rewrite. */
  rewriteWanted: boolean;
  opened: Promise<void> | undefined;
  readonly committer: Committer;
}

/**
 * This agent's own {@link ReminderStore}: the schedule in a Map (`schedule.ts`), kept in
 * `<directory>/reminders.journal` when a directory is given.
 */
export function createLocalReminderStore(options: LocalReminderStoreOptions = {}): ReminderStore & { readonly path: string | undefined } {
  const { directory } = options;
  const s: FileState = {
    directory: directory ?? '',
    path: directory === undefined ? '' : join(directory, REMINDERS_JOURNAL),
    fs: options.fs ?? nodeJournalFs,
    schedule: createReminderSchedule(options.delayMs ?? 0),
    logger: options.logger ?? silentLogger,
    compactMinBytes: options.compactMinBytes ?? 1_048_576,
    compactRatio: options.compactRatio ?? 4,
    sent: [],
    queued: [],
    bytes: 0,
    rewriteWanted: false,
    opened: undefined,
    committer: createCommitter(() => write(s)),
  };
  const record = (lines: ReminderLine[]): Promise<void> => {
    if (directory === undefined) return Promise.resolve();
    if (s.opened === undefined) return Promise.reject(new StoreError(`cannot write ${s.path}: call open() first`, s.path));
    for (const line of lines) s.queued.push(lineOf(line));
    return s.committer.commit(lines.length > 0 ? s.committer.change() : undefined);
  };
  const due = (record: ReminderRecord) => record.expiresMs + s.schedule.delayMs;
  return {
    path: directory === undefined ? undefined : s.path,
    open: () => (s.opened ??= (directory === undefined ? Promise.resolve() : open(s)).catch((error: unknown) => {
      s.opened = undefined;
      throw error;
    })),
    async schedule(records) {
      const kept: ReminderRecord[] = [];
      let replaced = 0;
      let soonest: number | undefined;
      for (const r of records) {
        const result = s.schedule.put(r);
        if (result === 'known') continue;
        if (result === 'replaced') replaced += 1;
        kept.push(r);
        soonest = Math.min(soonest ?? Number.POSITIVE_INFINITY, due(r));
      }
      await record(kept.map((r) => ({ t: 's', r })));
      return { scheduled: kept.length, replaced, soonest };
    },
    due: (now) => Promise.resolve(s.schedule.due(now)),
    end(sent, skipped) {
      for (const r of [...sent, ...skipped]) s.schedule.remove(r.projectId, r.userId, r.createdMs);
      s.sent = withSent(s.sent, sent);
      // Ends are what make the journal outgrow what it holds: the timer's write compacts it, not an ingestion's.
      const held = (s.schedule.size + s.sent.length) * LINE_BYTES;
      if (s.bytes >= s.compactMinBytes && s.bytes >= s.compactRatio * held) s.rewriteWanted = true;
      const ended = (sentToo: boolean) => (r: ReminderRecord): ReminderLine => ({ t: 'e', r, sent: sentToo });
      return record([...sent.map(ended(true)), ...skipped.map(ended(false))]);
    },
    nextDue: () => Promise.resolve(s.schedule.nextDue()),
    list: (limit) => Promise.resolve(s.schedule.list(limit)),
    size: () => Promise.resolve(s.schedule.size),
    lastSent: () => Promise.resolve(s.sent.map((record) => ({ record, due: due(record) }))),
    async close() {
      if (s.opened === undefined) return;
      s.opened = undefined;
      await s.committer.commit().catch((error: unknown) => {
        // Lost: the ends of reminders sent (the reminder pipeline drops them as duplicates at the
        // next start) and schedules whose votes were refused (the service sends those votes again).
        const what =
          'vote reminders: the last records could not be written at stop; ' +
          'reminders sent just before are handed over again (and dropped as duplicates) at the next start';
        s.logger.warn({ journal: s.path, err: fsReason(error) }, what);
      });
    },
    describe: () => (directory === undefined ? 'memory' : s.path),
  };
}

async function open(s: FileState): Promise<void> {
  const { directory } = s;
  await makeStateDirectory(s.fs, directory);
  s.schedule.clear();
  s.queued = [];
  // Snapshots of a rewrite that died before its rename: never part of the journal.
  const names = await s.fs.readdir(directory).catch(() => [] as string[]);
  const prefix = `${REMINDERS_JOURNAL}${TMP_MARK}`;
  for (const name of names.filter((each) => each.startsWith(prefix))) await s.fs.unlink(join(directory, name)).catch(() => undefined);
  const text = await readJournalText(s.fs, s.path);
  if (text === undefined) {
    // The first start of this version: what an earlier version scheduled comes along, once.
    s.sent = (await carryOver(s.fs, directory, s.schedule)).sent;
    s.rewriteWanted = true;
  } else {
    const { sent, replay } = replayReminders(text, s.schedule);
    if (replay.header.kind === 'newer') throw newerJournalError(s.path, 'reminders journal', replay.header.version);
    s.sent = sent;
    s.bytes = replay.goodBytes;
    if (replay.corruptCount > 0 || replay.tornBytes > 0 || replay.header.kind === 'missing') {
      const fields = { journal: s.path, unreadableLines: replay.corruptCount, tornBytes: replay.tornBytes };
      const kept = `kept its ${replay.records} readable records and rewrote it without the damage`;
      s.logger.warn(fields, `vote reminders: ${s.path} had damaged lines: ${kept}`);
      s.rewriteWanted = true;
    }
    // Carried over at an earlier start: the copies of version 2 journals are not needed any more.
    const asides = [join(directory, VERSION_2_ASIDE), join(directory, 'reminders', VERSION_2_ASIDE)];
    for (const aside of asides) await s.fs.unlink(aside).catch(() => undefined);
  }
  if (s.rewriteWanted) await s.committer.commit(s.committer.change());
}

/** The committer's write: the queued lines appended, or a snapshot when one is wanted. */
async function write(s: FileState): Promise<void> {
  const lines = s.queued; // the snapshot of the queue, before any await (the committer's rule)
  s.queued = [];
  if (s.rewriteWanted) {
    await rewrite(s);
    s.rewriteWanted = false;
    return;
  }
  if (lines.length === 0) return;
  const chunk = lines.join('');
  try {
    const handle = await s.fs.open(s.path, 'a', 0o600);
    try {
      await handle.writeFile(chunk);
      await handle.datasync();
    } finally {
      await handle.close().catch(() => undefined);
    }
  } catch (error) {
    // Whatever part of the chunk reached the file must not sit before the retry's lines.
    await s.fs.truncate(s.path, s.bytes).catch(() => undefined);
    s.queued = lines.concat(s.queued);
    throw writeError(s, 'append to', error);
  }
  s.bytes += Buffer.byteLength(chunk);
}

const writeError = (s: FileState, what: string, error: unknown) =>
  new StoreError(
    `cannot ${what} ${s.path}: ${fsReason(error)} — the vote reminders are kept in memory and the next write retries; ` +
      `check the disk, or set ${STATE_DIRECTORY_SETTING} to a writable directory`,
    s.path,
    { cause: error },
  );

/** Writes the snapshot to a temporary file, fsyncs it, renames it over the journal and fsyncs the directory. */
async function rewrite(s: FileState): Promise<void> {
  const { fs, path } = s;
  const ended = [...s.sent].reverse().map((r) => lineOf({ t: 'e', r, sent: true }));
  const text = HEADER_LINE + ended.join('') + s.schedule.records().map((r) => lineOf({ t: 's', r })).join('');
  const tmp = `${path}${TMP_MARK}${randomBytes(6).toString('hex')}`;
  try {
    await writeNewFile(fs, tmp, text);
    await fs.rename(tmp, path);
  } catch (error) {
    await fs.unlink(tmp).catch(() => undefined);
    throw writeError(s, 'write', error);
  }
  s.bytes = Buffer.byteLength(text);
  await syncDirectory(s);
}

async function syncDirectory(s: FileState): Promise<void> {
  let handle;
  try {
    handle = await s.fs.open(s.directory, 'r');
    await handle.sync();
  } catch (error) {
    if (!NO_DIRECTORY_SYNC.has(errnoCode(error) ?? '')) throw writeError(s, 'sync the directory of', error);
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
