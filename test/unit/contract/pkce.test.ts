import { describe, expect, it } from 'vitest';
import {
  codeVerifierLengthValid,
  codeVerifierProblem,
  createCodeVerifier,
  isS256Challenge,
  s256Challenge,
  verifierMatchesChallenge,
} from '../../../src/contract/pkce.js';

// RFC 7636 Appendix B (checked with `openssl dgst -sha256 -binary | base64url`).
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE S256', () => {
  it('computes the RFC 7636 Appendix B challenge', () => {
    expect(s256Challenge(RFC_VERIFIER)).toBe(RFC_CHALLENGE);
    expect(verifierMatchesChallenge(RFC_VERIFIER, RFC_CHALLENGE)).toBe(true);
    // A value that circulates as "the RFC vector" but is not SHA-256 of the verifier.
    expect(verifierMatchesChallenge(RFC_VERIFIER, 'E9cTPDeA3eN8-JCYl9QTUYKZIGXl6DT3nhE5qpcq0Fs')).toBe(false);
  });

  it('rejects a verifier that does not match, or a challenge of another form', () => {
    expect(verifierMatchesChallenge(`${RFC_VERIFIER.slice(0, -1)}Y`, RFC_CHALLENGE)).toBe(false);
    expect(verifierMatchesChallenge(RFC_VERIFIER, `${RFC_CHALLENGE}=`)).toBe(false);
    expect(verifierMatchesChallenge(RFC_VERIFIER, '')).toBe(false);
  });

  it('accepts verifiers of 43 to 128 characters only', () => {
    expect(codeVerifierLengthValid('a'.repeat(42))).toBe(false);
    expect(codeVerifierLengthValid('a'.repeat(43))).toBe(true);
    expect(codeVerifierLengthValid('a'.repeat(128))).toBe(true);
    expect(codeVerifierLengthValid('a'.repeat(129))).toBe(false);
    expect(codeVerifierProblem('a'.repeat(42))).toBe('length');
    expect(codeVerifierProblem('a'.repeat(129))).toBe('length');
  });

  it('accepts only unreserved characters in a verifier, and a too-short verifier never matches', () => {
    expect(codeVerifierProblem(`${'a'.repeat(42)}~`)).toBeUndefined();
    expect(codeVerifierProblem(`${'a'.repeat(42)}+`)).toBe('characters');
    const short = 'a'.repeat(42);
    expect(verifierMatchesChallenge(short, s256Challenge(short))).toBe(false);
  });

  it('recognises the form of an S256 challenge', () => {
    expect(isS256Challenge(RFC_CHALLENGE)).toBe(true);
    expect(isS256Challenge(RFC_CHALLENGE.slice(1))).toBe(false);
    expect(isS256Challenge(`${RFC_CHALLENGE.slice(1)}=`)).toBe(false);
    expect(isS256Challenge(`${RFC_CHALLENGE.slice(1)}+`)).toBe(false);
  });

  it('creates random verifiers of a valid length', () => {
    const a = createCodeVerifier();
    expect(a).toHaveLength(43);
    expect(codeVerifierProblem(a)).toBeUndefined();
    expect(createCodeVerifier(96)).toHaveLength(128);
    expect(createCodeVerifier()).not.toBe(a);
  });
});
