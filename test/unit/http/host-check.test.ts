import { describe, expect, it } from 'vitest';
import { allowedHostNames, hostAllowed, hostOf } from '../../../src/http/host-check.js';

describe('hostOf', () => {
  it('reads the name of a Host header, lower case, without its port or final dot', () => {
    expect(hostOf('Example.COM.:9464')).toBe('example.com');
    expect(hostOf('[::1]:9464')).toBe('::1');
    expect(hostOf('[2001:DB8::1]')).toBe('2001:db8::1');
    expect(hostOf('127.0.0.1:80')).toBe('127.0.0.1');
    expect(hostOf('listing_agent')).toBe('listing_agent');
  });

  it('names nothing for what is not a host', () => {
    const headers = ['', ':9464', 'a b', '::1', '[::1', '[zz::1]', 'host:port', 'host:123456', '-bad.example', 'x'.repeat(254)];
    headers.push('user@host');
    for (const header of headers) {
      expect({ header, host: hostOf(header) }).toEqual({ header, host: undefined });
    }
  });
});

describe('hostAllowed', () => {
  it('answers IP addresses, localhost, the listen host when it is a name, and the listed names', () => {
    const names = allowedHostNames('agent-box', ['Listing-Agent']);
    for (const header of ['127.0.0.1:9464', '[::1]:1', '192.0.2.7', 'localhost:3000', 'agent-box:9464', 'listing-agent', undefined, '']) {
      expect({ header, allowed: hostAllowed(header, names) }).toEqual({ header, allowed: true });
    }
    for (const header of ['attacker.example', 'listing-agent.attacker.example', 'localhost.attacker.example', 'a b']) {
      expect({ header, allowed: hostAllowed(header, names) }).toEqual({ header, allowed: false });
    }
  });

  it('adds no name for a listen address that is an IP', () => {
    expect([...allowedHostNames('0.0.0.0', [])].sort()).toEqual(['0.0.0.0', 'localhost']);
    expect([...allowedHostNames('::', [])]).toEqual(['localhost']);
  });
});
