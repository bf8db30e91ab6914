import { errorMessage, ListingAgentError } from '../errors.js';

/** The setting a user changes to move the state, named in every message that asks for it. */
export const STATE_DIRECTORY_SETTING = 'state.directory (LISTING_AGENT_STATE_DIRECTORY)';

/**
 * The state store cannot do what was asked: its directory cannot be created or written, another
 * agent holds it, or a write failed. `path` is the file or directory concerned; the message is one
 * line that says what to fix. Code `store`.
 */
export class StoreError extends ListingAgentError {
  /** The file or directory the problem is about. */
  readonly path: string;

  constructor(message: string, path: string, options?: { cause?: unknown }) {
    super('store', message, options);
    this.path = path;
  }
}

/** The `code` of a Node.js system error (`ENOENT`, `EACCES`, ...), if it has one. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const code = (error as { code: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  ENOTDIR: 'part of the path is a file, not a directory',
  EEXIST: 'a file is in the way',
  EISDIR: 'it is a directory',
  EIO: 'input/output error',
  EMFILE: 'too many open files',
};

/** A short human reason for a file-system error ("permission denied"), without a stack. */
export function fsReason(error: unknown): string {
  const code = errnoCode(error);
  if (code !== undefined && REASONS[code] !== undefined) return REASONS[code];
  return errorMessage(error);
}

/**
 * A write of a leader-only state key (the votes cursor, the command hash, the metrics buffer)
 * was refused: this agent does not hold the leader lease, or holds a stale one (its fencing
 * token is not the newest). Nothing was written; the current leader writes that key. Code
 * `store_fenced`.
 */
export class FencedError extends ListingAgentError {
  /** The state key whose write was refused. */
  readonly key: string;
  /** The fencing token this agent presented; undefined when it does not lead. */
  readonly token: number | undefined;

  constructor(key: string, token: number | undefined, current?: string) {
    const held =
      token === undefined
        ? 'it holds no lease'
        : `its fencing token ${token} is not the newest${current === undefined ? '' : ` (${current})`}`;
    super(
      'store_fenced',
      `the write of state key "${key}" was refused: this agent no longer holds the leader lease (${held}); the current leader writes it`,
    );
    this.key = key;
    this.token = token;
  }
}
