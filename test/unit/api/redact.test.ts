import { describe, expect, it } from 'vitest';
import { credentialForms, redact, redactUrl, urlCredentialForms } from '../../../src/api/redact.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJpZCI6IjEyMyJ9.c2lnbmF0dXJl';

describe('redact', () => {
  it('replaces every occurrence of every secret', () => {
    expect(redact(`a ${TOKEN} b ${TOKEN}`, [TOKEN])).toBe('a [redacted] b [redacted]');
    expect(redact('whs_one and whs_two', ['whs_one', 'whs_two'])).toBe('[redacted] and [redacted]');
  });

  it('leaves text without secrets, and secrets shorter than 4 characters, alone', () => {
    expect(redact('nothing to see', [TOKEN])).toBe('nothing to see');
    expect(redact('a bad cab', ['a', 'ab', 'cab', ''])).toBe('a bad cab');
  });

  it('removes a longer secret whole even when a shorter one is inside it', () => {
    const inner = 'abcd1234';
    const outer = `xx${inner}yy-refresh`;
    const shown = redact(`token ${outer}`, [inner, outer]);
    expect(shown).toBe('token [redacted]');
  });

  it('removes the URL-encoded form of a secret', () => {
    const secret = 'sec ret/+=value';
    const shown = redact(`https://x.test/cb?v=${encodeURIComponent(secret)}`, [secret]);
    expect(shown).not.toContain(encodeURIComponent(secret));
    expect(shown).toContain('[redacted]');
  });

  it('redacts a secret with a lone surrogate (it has no URL-encoded form) rather than throwing', () => {
    const secret = 'abcd\ud800efgh';
    expect(redact(`token ${secret} here`, [secret])).toBe('token [redacted] here');
  });
});

describe('redactUrl', () => {
  it('replaces secret-looking query values, in any case', () => {
    const shown = redactUrl('https://top.gg/oauth?code=abc&client_secret=s3cr3t&Access_Token=t0k3n&state=keep', []);
    const url = new URL(shown);
    expect(url.searchParams.get('code')).toBe('redacted');
    expect(url.searchParams.get('client_secret')).toBe('redacted');
    expect(url.searchParams.get('Access_Token')).toBe('redacted');
    expect(url.searchParams.get('state')).toBe('keep');
    expect(shown).not.toMatch(/abc|s3cr3t|t0k3n/);
  });

  it('keeps the other pairs as they were, so a second pass changes nothing', () => {
    const once = redactUrl(`https://top.gg/cb?q=a%20b+c&tok%65n=x1y2&v=${TOKEN}`, [TOKEN]);
    expect(once).toBe('https://top.gg/cb?q=a%20b+c&tok%65n=redacted&v=[redacted]');
    expect(redactUrl(once, [TOKEN])).toBe(once);
  });

  it('replaces known secrets anywhere in the URL', () => {
    expect(redactUrl(`https://top.gg/api/bots/${TOKEN}/stats?x=${TOKEN}`, [TOKEN])).toBe('https://top.gg/api/bots/[redacted]/stats?x=[redacted]');
  });

  it('replaces the values of key=, auth=, sig= and signature= too', () => {
    expect(redactUrl('https://user:pw@bot.example/hooks?key=k1&auth=a1&sig=s1&signature=s2&page=2', [])).toBe(
      'https://user:redacted@bot.example/hooks?key=redacted&auth=redacted&sig=redacted&signature=redacted&page=2',
    );
  });

  it('replaces the password of user info', () => {
    const shown = redactUrl('https://user:hunter22@top.gg/api', []);
    expect(shown).not.toContain('hunter22');
    expect(shown).toBe('https://user:redacted@top.gg/api');
  });

  it('keeps an ordinary URL as it is', () => {
    expect(redactUrl('https://top.gg/api/v1/projects/@me/votes?startDate=2026-01-01', [TOKEN])).toBe(
      'https://top.gg/api/v1/projects/@me/votes?startDate=2026-01-01',
    );
  });

  it('redacts a string that is not a URL as text', () => {
    expect(redactUrl(`/relative?token=${TOKEN}`, [TOKEN])).toBe('/relative?token=[redacted]');
  });
});

describe('credentialForms', () => {
  it('lists an authorization value with and without its scheme word', () => {
    expect(credentialForms('Bearer abc123def')).toEqual(['Bearer abc123def', 'abc123def']);
    expect(credentialForms('a.b.c-no-scheme')).toEqual(['a.b.c-no-scheme']);
  });

  it("lists Basic's base64, its decoded user:password and the password alone", () => {
    const encoded = Buffer.from('bot:hunter22').toString('base64');
    expect(credentialForms(`Basic ${encoded}`)).toEqual([`Basic ${encoded}`, encoded, 'bot:hunter22', 'hunter22']);
    // Not base64 of a user:password pair: only the scheme-less form.
    expect(credentialForms('Basic not!base64')).toEqual(['Basic not!base64', 'not!base64']);
  });

  it("lists a URL's password and token-like query values, as written and decoded", () => {
    expect(credentialForms('redis://app:p%40ss@h:6379')).toEqual(['redis://app:p%40ss@h:6379', 'p%40ss', 'p@ss', 'app:p%40ss', 'app:p@ss']);
  });

  it('lists nothing for a URL that holds no credential: where the agent connects is no secret', () => {
    expect(credentialForms('redis://10.0.0.5:6379')).toEqual([]);
    expect(credentialForms('redis://app@10.0.0.5:6379/2')).toEqual([]);
    expect(credentialForms('rediss://10.0.0.5:6379?password=pw-1234')).toEqual(['rediss://10.0.0.5:6379?password=pw-1234', 'pw-1234']);
    // Not one URL: the value itself is the secret.
    expect(credentialForms('redis://a.example/x redis://b.example')).toEqual(['redis://a.example/x redis://b.example']);
  });
});

describe('urlCredentialForms', () => {
  it('finds the password, user:password and the values of secret-looking query keys', () => {
    expect(urlCredentialForms('https://u:pw%2F1@bot.example/hook?token=t%20ok&page=2&API_KEY=k1')).toEqual(['pw%2F1', 'pw/1', 'u:pw%2F1', 'u:pw/1', 't%20ok', 't ok', 'k1']);
  });

  it('finds the credentials of URLs inside a text, such as an argument', () => {
    expect(urlCredentialForms('--db=postgres://app:pw-1234@db/rewards, then https://x.example/?token=t-5678.')).toEqual(['pw-1234', 'app:pw-1234', 't-5678']);
  });

  it('finds nothing in a URL without credentials, or in text that is not a URL', () => {
    expect(urlCredentialForms('https://bot.example/hook?page=2&token=')).toEqual([]);
    expect(urlCredentialForms('/usr/bin/node')).toEqual([]);
  });

  it('is what redact needs to scrub every form from a text', () => {
    const url = 'https://u:pw-5678@bot.example/hook?token=tok-1234';
    const text = `POST ${url} answered 500: pw-5678 u:pw-5678 tok-1234`;
    expect(redact(text, [...credentialForms('Bearer zz-9999'), ...urlCredentialForms(url)])).not.toMatch(/pw-5678|tok-1234/);
  });

  it('finds a URL after a long run of scheme characters, and before a long run of punctuation', () => {
    const run = 'error-fetching-the-hook-at-the-address-';
    expect(urlCredentialForms(`${run}https://user:pw123@hooks.example/x`)).toContain('pw123');
    expect(urlCredentialForms(`see https://user:pw123@hooks.example/x${'.'.repeat(50)}`)).toContain('pw123');
  });

  it('reads a hostile megabyte of letters or of dots without going quadratic', () => {
    // Quadratic scanning of one of these takes minutes; a linear one, milliseconds. The bound is loose on purpose.
    const started = performance.now();
    expect(urlCredentialForms('x'.repeat(1_000_000))).toEqual([]);
    expect(urlCredentialForms(`https://example.test/${'.'.repeat(1_000_000)}a`)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
