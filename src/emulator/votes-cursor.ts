import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The votes cursor of `GET /projects/:id/votes`: an opaque base64url string that the emulator
 * signs, so a cursor it did not issue (forged, tampered, made with another key) is refused with
 * 400 as the contract requires. Pure functions, no emulator state.
 */

/** What a votes cursor carries. */
export interface VotesCursor {
  /** The service project ID the cursor pages; a cursor is refused on any other project. */
  projectId: string;
  /**
   * Position: `created_at` (epoch ms) of the last vote returned. The next page holds votes strictly
   * after (`createdAt`, `seq`) in (created_at, seq) order.
   */
  createdAt: number;
  /** Position: `seq` of the last vote returned; 0 means "before every vote created at `createdAt`". */
  seq: number;
  /** Emulator time the cursor was issued, epoch ms (for the optional cursor lifetime). */
  issuedAt: number;
}

/** Why a string is not a usable cursor. */
export type VotesCursorProblem =
  /** Not base64url, too short, or the signed payload is not a cursor. */
  | 'malformed'
  /** The signature does not match: forged, tampered, or signed with another key. */
  | 'bad-signature'
  /** Issued for another project. */
  | 'other-project'
  /** Older than the configured lifetime. */
  | 'expired';

/** The outcome of {@link readVotesCursor}. */
export type ReadVotesCursor = { ok: true; cursor: VotesCursor } | { ok: false; problem: VotesCursorProblem };

/** What a cursor must match to be accepted. */
export interface VotesCursorExpectation {
  /** The project of the request. */
  projectId: string;
  /** Current emulator time, epoch ms. */
  now: number;
  /** Cursor lifetime in seconds, or null for cursors that never expire. */
  ttlSeconds: number | null;
}

const MAC_BYTES = 32;
const PAYLOAD_VERSION = 1;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

// The signing key also signs project tokens: a domain prefix keeps one kind from passing as the other.
function mac(signingKey: string, payload: Buffer): Buffer {
  return createHmac('sha256', signingKey).update('votes-cursor\0').update(payload).digest();
}

/**
 * Encodes and signs a cursor: base64url of the 32-byte HMAC-SHA256 followed by a small JSON
 * payload. Throws when a number is not a safe integer (a bug in the caller, not a client error).
 */
export function encodeVotesCursor(signingKey: string, cursor: VotesCursor): string {
  for (const value of [cursor.createdAt, cursor.seq, cursor.issuedAt]) {
    if (!Number.isSafeInteger(value)) throw new RangeError(`votes cursor numbers must be safe integers (got ${value})`);
  }
  const payload = Buffer.from(
    JSON.stringify({ v: PAYLOAD_VERSION, p: cursor.projectId, t: cursor.createdAt, s: cursor.seq, i: cursor.issuedAt }),
    'utf8',
  );
  return Buffer.concat([mac(signingKey, payload), payload]).toString('base64url');
}

function parsePayload(payload: Buffer): VotesCursor | undefined {
  let data: unknown;
  try {
    data = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const { v, p, t, s, i } = data as Record<string, unknown>;
  if (v !== PAYLOAD_VERSION || typeof p !== 'string') return undefined;
  if (!Number.isSafeInteger(t) || !Number.isSafeInteger(s) || !Number.isSafeInteger(i) || (s as number) < 0) {
    return undefined;
  }
  return { projectId: p, createdAt: t as number, seq: s as number, issuedAt: i as number };
}

/**
 * Decodes a cursor and checks its signature, project and age. The string must be canonical
 * base64url, so a change in the last character's unused bits also counts as tampering.
 */
export function readVotesCursor(signingKey: string, token: string, expect: VotesCursorExpectation): ReadVotesCursor {
  if (!BASE64URL.test(token)) return { ok: false, problem: 'malformed' };
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.toString('base64url') !== token || bytes.length <= MAC_BYTES) return { ok: false, problem: 'malformed' };
  const signature = bytes.subarray(0, MAC_BYTES);
  const payload = bytes.subarray(MAC_BYTES);
  if (!timingSafeEqual(signature, mac(signingKey, payload))) return { ok: false, problem: 'bad-signature' };
  const cursor = parsePayload(payload);
  if (!cursor) return { ok: false, problem: 'malformed' };
  if (cursor.projectId !== expect.projectId) return { ok: false, problem: 'other-project' };
  if (expect.ttlSeconds !== null && expect.now >= cursor.issuedAt + expect.ttlSeconds * 1000) {
    return { ok: false, problem: 'expired' };
  }
  return { ok: true, cursor };
}
