import { ListingAgentError } from '../errors.js';

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
  return error instanceof Error ? error.message : String(error);
}
