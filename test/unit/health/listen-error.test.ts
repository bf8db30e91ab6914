import { describe, expect, it } from 'vitest';
import { ListingAgentError } from '../../../src/errors.js';
import { formatAddress, ListenError } from '../../../src/http/listen-error.js';

const systemError = (code: string, message = `listen ${code}`) => Object.assign(new Error(message), { code });
const health = { path: 'health.listen', env: 'LISTING_AGENT_HEALTH_LISTEN' };

describe('ListenError', () => {
  it('is a ListingAgentError with code listen, keeping the cause and the address', () => {
    const cause = systemError('EADDRINUSE');
    const error = new ListenError('health server', { host: '127.0.0.1', port: 9464 }, cause, health);
    expect(error).toBeInstanceOf(ListingAgentError);
    expect(error.name).toBe('ListenError');
    expect(error.code).toBe('listen');
    expect(error.cause).toBe(cause);
    expect(error.systemCode).toBe('EADDRINUSE');
    expect(error.what).toBe('health server');
    expect(error.address).toEqual({ host: '127.0.0.1', port: 9464 });
  });

  it.each([
    ['EADDRINUSE', 'in_use', 'health server: 127.0.0.1:9464 is in use: set health.listen to a free port (LISTING_AGENT_HEALTH_LISTEN) or stop the other process'],
    ['EADDRNOTAVAIL', 'not_local', 'health server: 127.0.0.1 is not an address of this machine: set health.listen to 127.0.0.1:9464 (LISTING_AGENT_HEALTH_LISTEN), or 0.0.0.0:9464 to listen on every interface'],
    ['ENOTFOUND', 'not_local', 'health server: 127.0.0.1 is not an address of this machine: set health.listen to 127.0.0.1:9464 (LISTING_AGENT_HEALTH_LISTEN), or 0.0.0.0:9464 to listen on every interface'],
    ['EACCES', 'denied', 'health server: not allowed to listen on 127.0.0.1:9464: set health.listen to another port (LISTING_AGENT_HEALTH_LISTEN)'],
  ] as const)('explains %s in one line with the fix', (code, problem, message) => {
    const error = new ListenError('health server', { host: '127.0.0.1', port: 9464 }, systemError(code), health);
    expect(error.problem).toBe(problem);
    expect(error.message).toBe(message);
  });

  it('suggests a port above 1023 when a privileged port was refused', () => {
    const error = new ListenError('health server', { host: '0.0.0.0', port: 80 }, systemError('EACCES'), health);
    expect(error.message).toBe('health server: not allowed to listen on 0.0.0.0:80: set health.listen to a port above 1023 (LISTING_AGENT_HEALTH_LISTEN)');
  });

  it('keeps an unknown cause on one line', () => {
    const error = new ListenError('health server', { host: '127.0.0.1', port: 70_000 }, new RangeError('Port should be\n>= 0 and < 65536'), health);
    expect(error.problem).toBe('other');
    expect(error.systemCode).toBeUndefined();
    expect(error.message).toBe('health server: cannot listen on 127.0.0.1:70000 (Port should be >= 0 and < 65536): set health.listen to another address (LISTING_AGENT_HEALTH_LISTEN)');
  });

  it('is generic: another server, another setting, or none', () => {
    const webhooks = new ListenError('webhook receiver', { host: '::1', port: 9465 }, systemError('EADDRINUSE'), { path: 'webhooks.listen' });
    expect(webhooks.message).toBe('webhook receiver: [::1]:9465 is in use: set webhooks.listen to a free port or stop the other process');
    const bare = new ListenError('test server', { host: '127.0.0.1', port: 1 }, systemError('EADDRINUSE'));
    expect(bare.message).toBe('test server: 127.0.0.1:1 is in use: listen on a free port or stop the other process');
  });

  it('formats IPv6 addresses with brackets', () => {
    expect(formatAddress({ host: '::', port: 9464 })).toBe('[::]:9464');
    expect(formatAddress({ host: 'localhost', port: 1 })).toBe('localhost:1');
  });
});
