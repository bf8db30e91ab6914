import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { CONTRACT_LIMITS } from './limits.js';

/**
 * PKCE (RFC 7636) with the only method the contract allows, `S256`. Pure helpers shared by the
 * emulator (which checks) and the client (which makes verifiers and challenges).
 */

/** The one `code_challenge_method` the service accepts. */
export const PKCE_METHOD = 'S256';

/** An S256 challenge: base64url of a SHA-256 digest without padding, so exactly 43 characters. */
const S256_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** RFC 7636 section 4.1: a verifier uses only unreserved URI characters. */
const VERIFIER_CHARACTERS = /^[A-Za-z0-9._~-]*$/;

/** Why a code verifier is unusable, or undefined when it is fine. */
export type CodeVerifierProblem = 'length' | 'characters';

/**
 * Checks a code verifier: 43 to 128 characters (CONTRACT_LIMITS) from the unreserved set
 * `A-Z a-z 0-9 - . _ ~`. Returns the problem, or undefined for a good verifier.
 */
export function codeVerifierProblem(verifier: string): CodeVerifierProblem | undefined {
  if (
    verifier.length < CONTRACT_LIMITS.codeVerifierMinLength ||
    verifier.length > CONTRACT_LIMITS.codeVerifierMaxLength
  ) {
    return 'length';
  }
  return VERIFIER_CHARACTERS.test(verifier) ? undefined : 'characters';
}

/** True when `verifier` has a valid length (43 to 128 characters). */
export function codeVerifierLengthValid(verifier: string): boolean {
  return codeVerifierProblem(verifier) !== 'length';
}

/** The S256 challenge of a verifier: base64url(SHA-256(ASCII verifier)) without padding. */
export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** True when `challenge` has the form of an S256 challenge (43 base64url characters). */
export function isS256Challenge(challenge: string): boolean {
  return S256_CHALLENGE_PATTERN.test(challenge);
}

/**
 * True when `verifier` is valid and its S256 challenge equals `challenge`. The comparison is
 * constant time so a caller cannot learn the challenge byte by byte.
 */
export function verifierMatchesChallenge(verifier: string, challenge: string): boolean {
  if (codeVerifierProblem(verifier) !== undefined) return false;
  const expected = Buffer.from(s256Challenge(verifier));
  const actual = Buffer.from(challenge);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * A fresh random verifier: base64url of `bytes` random bytes. Default 32 bytes, which gives 43
 * characters (the minimum length, 256 bits of entropy); 96 bytes gives the maximum, 128.
 */
export function createCodeVerifier(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
