import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseStateDocument } from './document.js';
import type { StateStore } from './types.js';

/**
 * Reads the state directory's `state.json` without its lock and without writing anything: what a
 * running agent wrote last (the file is replaced by a rename, so a read never sees half a write).
 * For the CLI and the doctor beside a running agent. A missing, unreadable or corrupt file reads
 * as no value: recovering it is the file store's job when it opens.
 */
export function createStateFileReader(directory: string): Pick<StateStore, 'get'> {
  return {
    async get<T>(key: string): Promise<T | undefined> {
      let text: string;
      try {
        text = await readFile(join(directory, 'state.json'), 'utf8');
      } catch {
        return undefined;
      }
      const parsed = parseStateDocument(text);
      const raw = parsed.ok ? parsed.entries.get(key) : undefined;
      return raw === undefined ? undefined : (JSON.parse(raw) as T);
    },
  };
}
