import { describe, expect, it } from 'vitest';
import { addressGroup } from '../../../src/http/connection-guard.js';
import { connectionLimits, LOCAL_SERVER_LIMITS, localServerLimits } from '../../../src/http/local-server.js';

describe('localServerLimits', () => {
  it('is the shared limits when the caller sets none', () => {
    expect(localServerLimits(undefined)).toEqual(LOCAL_SERVER_LIMITS);
  });

  it("takes the caller's timeouts over the shared ones", () => {
    expect(localServerLimits({ requestMs: 20_000, checkEveryMs: 1_000 })).toMatchObject({
      requestTimeout: 20_000,
      connectionsCheckingInterval: 1_000,
      headersTimeout: 5_000,
      keepAliveTimeout: 5_000,
    });
  });

  it('keeps headersTimeout at most requestTimeout, which node requires', () => {
    expect(localServerLimits({ requestMs: 2_000 }).headersTimeout).toBe(2_000);
    expect(localServerLimits({ headersMs: 9_000, requestMs: 3_000 }).headersTimeout).toBe(3_000);
    expect(localServerLimits({ headersMs: 1_000 }).headersTimeout).toBe(1_000);
  });
});

describe('connectionLimits', () => {
  it('is 256 connections, 128 from one address and a 2 s first-byte timeout by default', () => {
    expect(connectionLimits({})).toEqual({ max: 256, perAddress: 128, firstByteMs: 2_000 });
  });

  it('gives one address half of the cap, rounded up, unless told otherwise', () => {
    expect(connectionLimits({ maxConnections: 64 })).toMatchObject({ max: 64, perAddress: 32 });
    expect(connectionLimits({ maxConnections: 3 })).toMatchObject({ max: 3, perAddress: 2 });
    const set = connectionLimits({ maxConnections: 8, maxConnectionsPerAddress: 2, timeouts: { firstByteMs: 0 } });
    expect(set).toEqual({ max: 8, perAddress: 2, firstByteMs: 0 });
  });
});

describe('addressGroup', () => {
  it('counts an IPv4 address alone, also when node reports it IPv4-mapped', () => {
    expect(addressGroup('203.0.113.7')).toBe('203.0.113.7');
    expect(addressGroup('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it("counts an IPv6 address with its whole /64, however it is written", () => {
    expect(addressGroup('2001:db8:0:1:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64');
    expect(addressGroup('2001:0DB8:0000:0001::1')).toBe('2001:db8:0:1::/64');
    expect(addressGroup('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressGroup('2001:db8:0:1::')).toBe('2001:db8:0:1::/64');
    expect(addressGroup('::1')).toBe('0:0:0:0::/64');
    expect(addressGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('puts a connection without a remote address in one group', () => {
    expect(addressGroup(undefined)).toBe('unknown');
    expect(addressGroup('')).toBe('unknown');
  });
});
