import { describe, expect, it } from 'vitest';
import { botIdFromToken, projectSegment, requireCredential, type Credential } from '../../../src/api/credentials.js';
import { CredentialError } from '../../../src/api/errors.js';
import { decodeProjectToken, issueProjectToken } from '../../../src/contract/project-token.js';

const BOT_ID = '264811613708746752';
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const tokenWith = (payload: unknown) => `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}.c2ln`;

const project: Credential = { kind: 'project', token: issueProjectToken('key', BOT_ID, 1_700_000_000) };
const oauth: Credential = { kind: 'oauth', accessToken: 'access-token-value' };
const application: Credential = { kind: 'application', token: 'application-token-value' };

function thrown(fn: () => unknown): CredentialError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CredentialError);
    return error as CredentialError;
  }
  throw new Error('expected a CredentialError');
}

describe('project tokens', () => {
  it('decodes a good token and reads the bot ID', () => {
    const token = issueProjectToken('key', BOT_ID, 1_700_000_000);
    expect(decodeProjectToken(token)).toMatchObject({ ok: true, payload: { id: BOT_ID, bot: true, iat: 1_700_000_000 } });
    expect(botIdFromToken(token)).toBe(BOT_ID);
    // The signature is the service's business, not the client's.
    expect(botIdFromToken(tokenWith({ id: BOT_ID, bot: true, iat: 1 }))).toBe(BOT_ID);
  });

  it('says "wrong schema" for a token of another form, without showing the token', () => {
    const wrong = [
      'not-a-token-at-all',
      'a.b',
      'a.b.c.d',
      `${b64('{}')}..sig`,
      `${b64('{}')}.${b64('not json')}.sig`,
      tokenWith({ id: BOT_ID, bot: true }),
      tokenWith({ id: BOT_ID, bot: 'yes', iat: 1 }),
      tokenWith({ id: Number(BOT_ID), bot: true, iat: 1 }),
      tokenWith([BOT_ID]),
      'a+b.c/d.e=f',
    ];
    for (const token of wrong) {
      expect(decodeProjectToken(token), token).toEqual({ ok: false, problem: 'wrong-schema' });
      const error = thrown(() => botIdFromToken(token));
      expect(error.code).toBe('credential');
      expect(error.message).toMatch(/not in the service's form/);
      expect(error.message).not.toContain(token);
    }
  });

  it('says "invalid project ID" when the id is not a Snowflake', () => {
    for (const id of ['1234', 'abc', `${BOT_ID}x`, '1'.repeat(21), '1'.repeat(16), '']) {
      const token = tokenWith({ id, bot: true, iat: 1 });
      expect(decodeProjectToken(token), id).toEqual({ ok: false, problem: 'invalid-project-id' });
      const error = thrown(() => botIdFromToken(token));
      expect(error.message).toMatch(/invalid project ID/);
      expect(error.message).not.toContain(token);
    }
    expect(botIdFromToken(tokenWith({ id: '1'.repeat(17), bot: true, iat: 1 }))).toBe('1'.repeat(17));
    expect(botIdFromToken(tokenWith({ id: '1'.repeat(20), bot: true, iat: 1 }))).toBe('1'.repeat(20));
  });
});

describe('requireCredential', () => {
  it('lets an allowed credential through', () => {
    expect(() => requireCredential(oauth, 'projects.list', ['oauth', 'application'])).not.toThrow();
  });

  it('says which credential the call needs, and never the token', () => {
    const error = thrown(() => requireCredential(project, 'projects.list', ['oauth', 'application']));
    expect(error.message).toBe('projects.list needs an OAuth access token or an application token; this client has a project token');
    expect(error.message).not.toContain((project as { token: string }).token);
    expect(thrown(() => requireCredential(application, 'users.me', ['oauth'])).message).toMatch(/needs an OAuth access token; this client has an application token/);
  });
});

describe('projectSegment', () => {
  it('is @me for a project token', () => {
    expect(projectSegment(project, 'projects.get', undefined)).toBe('@me');
    expect(projectSegment(project, 'projects.get', '@me')).toBe('@me');
    expect(projectSegment(project, 'projects.get', '')).toBe('@me');
  });

  it('refuses an explicit ID with a project token', () => {
    expect(thrown(() => projectSegment(project, 'projects.get', '123')).message).toMatch(/a project token works only on `@me` paths/);
  });

  it('refuses @me with other credentials', () => {
    expect(thrown(() => projectSegment(oauth, 'projects.get', '@me')).message).toMatch(/`@me` works only with a project token/);
  });

  it('takes the call\'s ID, then the credential\'s, then the provider\'s, encoded', () => {
    expect(projectSegment(application, 'projects.get', '42')).toBe('42');
    expect(projectSegment(oauth, 'projects.get', 'a/b')).toBe('a%2Fb');
    expect(projectSegment({ kind: 'oauth', accessToken: 't0ken', projectId: '7' }, 'projects.get', undefined)).toBe('7');
    const provider = { getAccessToken: async () => 't0ken', projectId: '9' };
    expect(projectSegment({ kind: 'oauth', accessToken: provider }, 'projects.get', undefined)).toBe('9');
    expect(projectSegment({ kind: 'oauth', accessToken: provider, projectId: '8' }, 'projects.get', '5')).toBe('5');
  });

  it('asks for an ID when there is none (an empty one included)', () => {
    expect(thrown(() => projectSegment(application, 'projects.get', undefined)).message).toMatch(/pass projectId/);
    expect(thrown(() => projectSegment(application, 'projects.get', '')).message).toMatch(/pass projectId/);
    expect(thrown(() => projectSegment(oauth, 'projects.get', undefined)).message).toMatch(/an OAuth access token uses explicit project IDs/);
  });
});
