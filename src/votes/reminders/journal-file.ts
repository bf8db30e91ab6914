import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode, fsReason, StoreError } from '../../store/errors.js';
import type { ReminderJournal } from './reminders.js';

/*
 * The reminder schedule on disk: `<state.directory>/reminders.journal`, one record a line, `+<TAB>`
 * a line scheduled, `-<TAB>` a line removed (sent, skipped, superseded). Appended and fsynced once
 * per batch, replayed at open, rewritten (temporary file and rename) when removed lines pile up.
 * A torn last line (a crash mid-append) is not a whole record and is ignored.
 */

/** The journal's file name in the state directory. */
const REMINDERS_JOURNAL = 'reminders.journal';

/** A {@link ReminderJournal} in `directory` (the agent's state directory, whose lock the file store holds). */
export function createFileReminderJournal(directory: string): ReminderJournal & { readonly path: string } {
  const path = join(directory, REMINDERS_JOURNAL);
  let handle: FileHandle | undefined;
  const fail = (what: string, error: unknown) => new StoreError(`cannot ${what} ${path}: ${fsReason(error)}`, path, { cause: error });
  const openForAppend = async () => {
    handle = await open(path, 'a', 0o600);
  };
  return {
    path,
    async open() {
      let text = '';
      try {
        await mkdir(directory, { recursive: true, mode: 0o700 });
        text = await readFile(path, 'utf8');
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT') throw fail('read', error);
      }
      const live = replayReminderJournal(text);
      try {
        await writeWhole(path, live);
        await openForAppend();
      } catch (error) {
        throw fail('write', error);
      }
      return live;
    },
    async record(added, removed) {
      if (handle === undefined) throw fail('write', new Error('the reminder journal is not open'));
      let text = '';
      for (const line of removed) text += `-\t${line}\n`;
      for (const line of added) text += `+\t${line}\n`;
      try {
        await handle.appendFile(text);
        await handle.datasync();
      } catch (error) {
        throw fail('append to', error);
      }
    },
    async compact(lines) {
      try {
        await handle?.close();
        handle = undefined;
        await writeWhole(path, lines);
        await openForAppend();
      } catch (error) {
        throw fail('rewrite', error);
      }
    },
    async close() {
      await handle?.close();
      handle = undefined;
    },
    describe: () => `file ${path}`,
  };
}

/** The lines a journal's text leaves scheduled, in the order they were first added. */
export function replayReminderJournal(text: string): string[] {
  const live = new Set<string>();
  const records = text.split('\n');
  // The last piece has no newline: a torn append (or the empty rest after the last newline).
  records.pop();
  for (const record of records) {
    if (record.startsWith('+\t')) live.add(record.slice(2));
    else if (record.startsWith('-\t')) live.delete(record.slice(2));
  }
  return [...live];
}

async function writeWhole(path: string, lines: readonly string[]): Promise<void> {
  const temporary = `${path}.tmp`;
  const file = await open(temporary, 'w', 0o600);
  try {
    await file.writeFile(lines.map((line) => `+\t${line}\n`).join(''));
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
}
