import { describe, expect, it } from 'vitest';
import { webhookInputProblems, webhookLabelProblem, webhookUrlProblem } from '../../../src/contract/webhook-url.js';

const urlOfLength = (length: number) => {
  const base = 'https://example.com/';
  return base + 'a'.repeat(length - base.length);
};

describe('webhookLabelProblem', () => {
  it('accepts 1 to 100 characters', () => {
    expect(webhookLabelProblem('a')).toBeNull();
    expect(webhookLabelProblem('a'.repeat(100))).toBeNull();
    expect(webhookLabelProblem(' votes ')).toBeNull();
  });

  it('counts code points, not UTF-16 units', () => {
    expect(webhookLabelProblem('🗳'.repeat(100))).toBeNull();
    expect(webhookLabelProblem('🗳'.repeat(101))).toMatch(/^label is 101 characters/);
  });

  it('rejects a missing, empty, blank, too long or non-string label', () => {
    expect(webhookLabelProblem('a'.repeat(101))).toMatch(/^label .*at most 100/);
    for (const bad of [undefined, null, '', '   ', 42, ['x'], {}]) {
      expect(webhookLabelProblem(bad), String(bad)).toMatch(/^label /);
    }
  });
});

describe('webhookUrlProblem', () => {
  it('accepts absolute https URLs up to 2048 characters', () => {
    for (const ok of ['https://example.com', 'https://EXAMPLE.com:8443/hook?x=1', 'https://[2001:db8::1]/h', 'https://127.0.0.1/h']) {
      expect(webhookUrlProblem(ok), ok).toBeNull();
    }
    expect(urlOfLength(2048)).toHaveLength(2048);
    expect(webhookUrlProblem(urlOfLength(2048))).toBeNull();
    expect(webhookUrlProblem(urlOfLength(2049))).toMatch(/^url is 2049 characters.*at most 2048/);
  });

  it('rejects http, other schemes, relative and malformed URLs', () => {
    const bad = [
      'http://example.com/hook',
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'ftp://example.com/',
      '/hook',
      'example.com/hook',
      'https:example.com',
      'https:///example.com',
      'https://',
      'https://exa mple.com/',
      ' https://example.com/',
      'https://example.com/\n',
      'https:\\\\example.com\\hook',
      'https://exa%zzmple.com/',
    ];
    for (const url of bad) expect(webhookUrlProblem(url), url).toMatch(/^url /);
  });

  it('rejects a missing or non-string URL', () => {
    for (const bad of [undefined, null, '', 7, { href: 'https://example.com' }]) {
      expect(webhookUrlProblem(bad), String(bad)).toMatch(/^url /);
    }
  });

  it('accepts http on loopback hosts only with allowHttpLoopback', () => {
    const options = { allowHttpLoopback: true };
    for (const ok of ['http://127.0.0.1/hook', 'http://127.0.0.1:39999/x', 'http://localhost:3000/', 'http://[::1]:8080/h', 'https://example.com']) {
      expect(webhookUrlProblem(ok, options), ok).toBeNull();
    }
    for (const bad of ['http://example.com/', 'http://127.0.0.2/', 'http://localhost.example.com/', 'http://10.0.0.1/', 'ws://127.0.0.1/']) {
      expect(webhookUrlProblem(bad, options), bad).toMatch(/^url must be .*loopback|^url must be .*localhost/);
    }
    expect(webhookUrlProblem('http://127.0.0.1/hook', { allowHttpLoopback: false })).toMatch(/https/);
  });
});

describe('webhookInputProblems', () => {
  it('names every bad field, label first', () => {
    expect(webhookInputProblems({}).map((p) => p.field)).toEqual(['label', 'url']);
    expect(webhookInputProblems({ label: 'x', url: 'http://example.com' }).map((p) => p.field)).toEqual(['url']);
    expect(webhookInputProblems({ label: 'x', url: 'https://example.com' })).toEqual([]);
  });
});
