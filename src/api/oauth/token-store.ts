import { readFile } from 'node:fs/promises';
import { writeJsonAtomically } from '../../fs/atomic-json.js';
import { ValidationError } from '../../errors.js';
import { zodIssues } from '../context.js';
import { storedTokensSchema, type OAuthTokens } from './tokens.js';

/**
 * Where an `OAuthSession` keeps its tokens. `save` must be durable when it resolves: the session
 * awaits it before handing out a refreshed token, because the previous refresh token is already
 * dead and the new one exists nowhere else.
 */
export interface TokenStore {
  /** The saved tokens, or undefined when none were saved yet. */
  load(): Promise<OAuthTokens | undefined>;
  save(tokens: OAuthTokens): Promise<void>;
}

function copy(tokens: OAuthTokens): OAuthTokens {
  return { ...tokens, scopes: [...tokens.scopes], ...(tokens.project ? { project: { ...tokens.project } } : {}) };
}

/** A store in memory (tests, short-lived processes). Copies on the way in and out. */
export function createMemoryTokenStore(initial?: OAuthTokens): TokenStore {
  let saved = initial ? copy(initial) : undefined;
  return {
    async load() {
      return saved ? copy(saved) : undefined;
    },
    async save(tokens) {
      saved = copy(tokens);
    },
  };
}

/** Owner read/write only: the file holds a live refresh token. */
const FILE_MODE = 0o600;

/**
 * A store in one JSON file. Each save writes a temporary file beside it (mode 0600, flushed to
 * disk) and renames it over the target, so a crash leaves either the old file or the new one,
 * never a torn one. Saves through one store run one after the other, in call order.
 */
export function createFileTokenStore(path: string): TokenStore {
  let queue: Promise<void> = Promise.resolve();

  const write = (tokens: OAuthTokens) => writeJsonAtomically(path, tokens, FILE_MODE);

  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new ValidationError('config', `the token file ${path}`, [{ path: '', message: 'is not JSON' }]);
      }
      const result = storedTokensSchema.safeParse(json);
      // Issues name fields and expectations only, never the values, so no token reaches the message.
      if (!result.success) throw new ValidationError('config', `the token file ${path}`, zodIssues(result.error));
      return result.data;
    },
    save(tokens) {
      const next = queue.then(() => write(tokens));
      // A failed save must not block later ones.
      queue = next.catch(() => undefined);
      return next;
    },
  };
}
