import { join } from 'node:path';

/** The working directory of the in-memory files. */
export const CWD = '/srv/bot';

/** A project token of the right shape (three parts). */
export const TOKEN = 'proj.SECRET-PROJECT-TOKEN.sig';

/**
 * A `readFile` over an in-memory folder (paths relative to {@link CWD}); a missing path fails
 * with ENOENT like the real one, and `errors` makes a path fail with another code.
 */
export function memoryFiles(files: Record<string, string>, errors: Record<string, string> = {}) {
  const reads: string[] = [];
  const readFile = async (path: string): Promise<string> => {
    reads.push(path);
    for (const [name, code] of Object.entries(errors)) {
      if (join(CWD, name) === path) throw Object.assign(new Error(`${code}: ${path}`), { code });
    }
    for (const [name, text] of Object.entries(files)) if (join(CWD, name) === path) return text;
    throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
  };
  return { readFile, reads };
}

/** A config file's text. */
export const json = (value: unknown) => JSON.stringify(value, null, 2);
