import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/errors.js';
import { SCOPES } from '../../../src/contract/limits.js';
import { parseBasicAuth } from '../../../src/contract/basic-auth.js';
import {
  formatBasicAuth,
  createOAuthClient,
  createPkce,
  OAuthCallbackError,
  parseCallback,
  pkceFromVerifier,
} from '../../../src/api/oauth/index.js';

// RFC 7636 Appendix B.
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

const oauth = createOAuthClient({
  clientId: 'client-1',
  clientSecret: 'secret-xyz',
  redirectUri: 'https://bot.example/callback',
  authBaseUrl: 'https://auth.example/',
});

function validationIssues(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).subject).toBe('request');
    return (error as ValidationError).issues.map((issue) => issue.path);
  }
  throw new Error('expected a ValidationError');
}

function callbackError(fn: () => unknown): OAuthCallbackError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthCallbackError);
    return error as OAuthCallbackError;
  }
  throw new Error('expected an OAuthCallbackError');
}

describe('PKCE', () => {
  it('derives the RFC 7636 Appendix B challenge', () => {
    expect(pkceFromVerifier(RFC_VERIFIER)).toEqual({ verifier: RFC_VERIFIER, challenge: RFC_CHALLENGE, method: 'S256' });
  });

  it('makes random 64-character verifiers from the RFC 7636 alphabet with matching challenges', () => {
    const pairs = Array.from({ length: 20 }, () => createPkce());
    for (const pair of pairs) {
      expect(pair.verifier).toMatch(/^[A-Za-z0-9._~-]{64}$/);
      expect(pair.method).toBe('S256');
      expect(pair.challenge).toBe(pkceFromVerifier(pair.verifier).challenge);
      expect(pair.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    expect(new Set(pairs.map((pair) => pair.verifier)).size).toBe(pairs.length);
    expect(oauth.createPkce().verifier).toHaveLength(64);
  });

  it('refuses verifiers outside RFC 7636', () => {
    expect(validationIssues(() => pkceFromVerifier('a'.repeat(42)))).toEqual(['codeVerifier']);
    expect(validationIssues(() => pkceFromVerifier(`${'a'.repeat(50)}+`))).toEqual(['codeVerifier']);
  });
});

describe('authorizeUrl', () => {
  it('carries every parameter of the contract table', () => {
    const url = new URL(
      oauth.authorizeUrl({
        scopes: ['project.votes.read', 'user.identify'],
        state: 'st/1 2',
        codeChallenge: RFC_CHALLENGE,
        projectId: '123456789012345678',
        platform: 'discord',
        platformId: '987654321098765432',
      }),
    );
    expect(`${url.origin}${url.pathname}`).toBe('https://auth.example/oauth2/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'client-1',
      response_type: 'code',
      redirect_uri: 'https://bot.example/callback',
      scope: 'project.votes.read user.identify',
      state: 'st/1 2',
      code_challenge: RFC_CHALLENGE,
      code_challenge_method: 'S256',
      project_id: '123456789012345678',
      platform: 'discord',
      platform_id: '987654321098765432',
    });
    // Scopes are separated by `+` in the URL.
    expect(url.search).toContain('scope=project.votes.read+user.identify');
    expect(url.searchParams.has('client_secret')).toBe(false);
  });

  it('leaves out optional parameters and takes a redirect URI per call', () => {
    const url = new URL(
      oauth.authorizeUrl({ scopes: [...SCOPES], state: 's', codeChallenge: RFC_CHALLENGE, redirectUri: 'http://127.0.0.1:8080/cb' }),
    );
    expect([...url.searchParams.keys()]).toEqual([
      'client_id', 'response_type', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method',
    ]);
    expect(url.searchParams.get('redirect_uri')).toBe('http://127.0.0.1:8080/cb');
    expect(url.searchParams.get('scope')!.split(' ')).toEqual([...SCOPES]);
  });

  it('checks the request locally', () => {
    expect(validationIssues(() => oauth.authorizeUrl({ scopes: [], state: 's', codeChallenge: RFC_CHALLENGE }))).toEqual(['scopes']);
    expect(
      validationIssues(() =>
        oauth.authorizeUrl({ scopes: ['project.votes.read', 'nope' as never], state: '', codeChallenge: `${RFC_CHALLENGE}=` }),
      ),
    ).toEqual(['scopes[1]', 'state', 'codeChallenge']);
    const noRedirect = createOAuthClient({ clientId: 'c', clientSecret: 's' });
    expect(validationIssues(() => noRedirect.authorizeUrl({ scopes: ['user.identify'], state: 's', codeChallenge: RFC_CHALLENGE }))).toEqual([
      'redirectUri',
    ]);
    for (const redirectUri of ['http://bot.example/cb', 'https://bot.example/cb#x', 'callback']) {
      expect(
        validationIssues(() => oauth.authorizeUrl({ scopes: ['user.identify'], state: 's', codeChallenge: RFC_CHALLENGE, redirectUri })),
      ).toEqual(['redirectUri']);
    }
    expect(
      validationIssues(() => oauth.authorizeUrl({ scopes: ['user.identify'], state: 's', codeChallenge: RFC_CHALLENGE, platform: 'discord' })),
    ).toEqual(['platform']);
  });
});

describe('parseCallback', () => {
  const base = 'https://bot.example/callback';

  it('returns the code when the state matches', () => {
    expect(parseCallback(`${base}?code=abc&state=s1`, 's1')).toEqual({ code: 'abc' });
    expect(oauth.parseCallback(new URLSearchParams({ code: 'abc', state: 's1' }), 's1')).toEqual({ code: 'abc' });
    expect(parseCallback(new URL(`${base}?state=s1&code=abc`), 's1')).toEqual({ code: 'abc' });
    expect(parseCallback('?code=abc&state=s1', 's1')).toEqual({ code: 'abc' });
  });

  it('says when the user cancelled', () => {
    const error = callbackError(() => parseCallback(`${base}?error=access_denied&error_description=cancelled&state=s1`, 's1'));
    expect(error.problem).toBe('access_denied');
    expect(error.error).toBe('access_denied');
    expect(error.message).toMatch(/cancelled the authorization/);
  });

  it('reports other errors with their code', () => {
    const error = callbackError(() => parseCallback(`${base}?error=invalid_scope&error_description=unknown+scope&state=s1`, 's1'));
    expect(error.problem).toBe('authorization_error');
    expect(error.message).toContain('invalid_scope: unknown scope');
  });

  it('rejects a state mismatch before reading anything else (CSRF)', () => {
    expect(callbackError(() => parseCallback(`${base}?code=abc&state=other`, 's1')).problem).toBe('state_mismatch');
    expect(callbackError(() => parseCallback(`${base}?code=abc`, 's1')).problem).toBe('state_mismatch');
    expect(callbackError(() => parseCallback(`${base}?code=abc&state=s1&state=s1`, 's1')).problem).toBe('state_mismatch');
    const forged = callbackError(() => parseCallback(`${base}?error=access_denied&state=other`, 's1'));
    expect(forged.problem).toBe('state_mismatch');
    expect(forged.message).not.toContain('abc');
  });

  it('rejects a callback without a single code', () => {
    expect(callbackError(() => parseCallback(`${base}?state=s1`, 's1')).problem).toBe('malformed');
    expect(callbackError(() => parseCallback(`${base}?state=s1&code=a&code=b`, 's1')).problem).toBe('malformed');
  });
});

describe('formatBasicAuth', () => {
  it('matches RFC 6749 2.3.1 and urlencodes each part first', () => {
    // The example credentials of RFC 6749 section 2.3.1 / 4.1.3.
    expect(formatBasicAuth('s6BhdRkqt3', '7Fjfp0ZBr1KtDRbnfVdmIw')).toBe('Basic czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3');
    const header = formatBasicAuth('id:with space', 'se:cr/et+%');
    expect(Buffer.from(header.slice(6), 'base64').toString()).toBe('id%3Awith+space:se%3Acr%2Fet%2B%25');
    expect(parseBasicAuth(header)).toEqual({ clientId: 'id:with space', clientSecret: 'se:cr/et+%' });
  });
});
