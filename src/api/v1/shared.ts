import { checkRequest } from '../context.js';
import { ApiError } from '../errors.js';

/** Pieces the v1 modules share. */

/** A path segment for an ID the caller gives, or a request `ValidationError` when it is empty. */
export function idSegment(operation: string, field: string, id: string): string {
  checkRequest(operation, typeof id === 'string' && id !== '' ? [] : [{ path: field, message: 'must be a non-empty string' }]);
  return encodeURIComponent(id);
}

/**
 * Sends a retried call that the service may already have carried out. When its first attempt
 * landed but the answer was lost, the retry meets the state the call made (404 after a delete, 409
 * after a connect); the call then succeeded if `settled()` confirms the wanted state. A first
 * attempt's answer (`attempts` 1) is never second-guessed.
 */
export async function settleAfterRetry(send: Promise<unknown>, status: number, settled: () => Promise<boolean>): Promise<void> {
  try {
    await send;
  } catch (error) {
    if (error instanceof ApiError && error.status === status && error.attempts > 1) {
      // A failed check keeps the original error: it is the one that says what happened.
      if (await settled().catch(() => false)) return;
    }
    throw error;
  }
}
