import { describe, expect, it } from 'vitest';
import { formatBasicAuth, parseBasicAuth } from '../../../src/contract/basic-auth.js';
import { secretsEqual } from '../../../src/emulator/oauth-client.js';

describe('HTTP Basic client credentials (RFC 6749 2.3.1)', () => {
  it('formats the RFC 6749 example', () => {
    expect(formatBasicAuth('s6BhdRkqt3', '7Fjfp0ZBr1KtDRbnfVdmIw')).toBe('Basic czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3');
  });

  it('parses what it formats, form-decoding both parts (so a secret may hold : + space %)', () => {
    const secret = 'a:b+c d%e/é';
    expect(parseBasicAuth(formatBasicAuth('my client', secret))).toEqual({ clientId: 'my client', clientSecret: secret });
    // Raw base64 of "id:sec+ret": `+` form-decodes to a space.
    expect(parseBasicAuth(`basic ${Buffer.from('id:sec+ret').toString('base64')}`)).toEqual({ clientId: 'id', clientSecret: 'sec ret' });
  });

  it('ignores other schemes and reports unreadable Basic credentials', () => {
    expect(parseBasicAuth(undefined)).toBeUndefined();
    expect(parseBasicAuth('Bearer abc')).toBeUndefined();
    expect(parseBasicAuth('Basic')).toBe('malformed');
    expect(parseBasicAuth('Basic !!!!')).toBe('malformed');
    expect(parseBasicAuth(`Basic ${Buffer.from('no-colon').toString('base64')}`)).toBe('malformed');
    expect(parseBasicAuth(`Basic ${Buffer.from(':secret').toString('base64')}`)).toBe('malformed');
    expect(parseBasicAuth(`Basic ${Buffer.from('id:%zz').toString('base64')}`)).toBe('malformed');
  });

  it('compares secrets of any length', () => {
    expect(secretsEqual('abc', 'abc')).toBe(true);
    expect(secretsEqual('abc', 'abd')).toBe(false);
    expect(secretsEqual('abc', 'abcd')).toBe(false);
  });
});
