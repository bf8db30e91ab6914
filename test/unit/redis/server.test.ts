import { describe, expect, it } from 'vitest';
import { describeServer, infoField, sameServer, serverFrom } from '../../../src/redis/server.js';

const INFO = '# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nrun_id:0123456789abcdef0123456789abcdef01234567\r\ntcp_port:6379\r\n';

describe('the server a connection is on', () => {
  it('reads the fields of INFO', () => {
    expect(infoField(INFO, 'run_id')).toBe('0123456789abcdef0123456789abcdef01234567');
    expect(infoField(INFO, 'redis_version')).toBe('7.0.15');
    expect(infoField(INFO, 'nope')).toBeUndefined();
  });

  it('tells a primary, a replica and a Sentinel from what ROLE answers', () => {
    const primary = serverFrom(['master', 1234, [['10.0.0.2', '6379', '1234']]], INFO, '10.0.0.1:6379');
    expect(primary).toEqual({ runId: '0123456789abcdef0123456789abcdef01234567', role: 'primary', address: '10.0.0.1:6379', version: '7.0.15' });
    const replica = serverFrom(['slave', '10.0.0.1', 6379, 'connected', 1234], INFO, '10.0.0.2:6379');
    expect(replica).toMatchObject({ role: 'replica', primary: '10.0.0.1:6379' });
    expect(describeServer(replica!)).toBe('10.0.0.2:6379, a replica (read-only) of 10.0.0.1:6379');
    const sentinel = serverFrom(['sentinel', ['mymaster', 'other']], INFO, '10.0.0.3:26379');
    expect(sentinel).toMatchObject({ role: 'sentinel', monitors: ['mymaster', 'other'] });
    expect(describeServer(sentinel!)).toBe('10.0.0.3:26379, a Sentinel (it monitors mymaster, other)');
    // RESP2 bulk strings come as buffers; anything else is no Redis.
    expect(serverFrom([Buffer.from('master'), 0, []], INFO, 'h:1')?.role).toBe('primary');
    expect(serverFrom(['proxy'], INFO, 'h:1')).toBeUndefined();
    expect(serverFrom('OK', INFO, 'h:1')).toBeUndefined();
  });

  it('is the same server only with the same run_id, role and address: a restart or a failover is another', () => {
    const a = serverFrom(['master', 0, []], INFO, 'h:1');
    expect(sameServer(a, serverFrom(['master', 5, []], INFO, 'h:1'))).toBe(true);
    expect(sameServer(a, serverFrom(['master', 0, []], INFO.replace('0123', '9999'), 'h:1'))).toBe(false);
    expect(sameServer(a, serverFrom(['slave', 'h', 2, 'connected', 0], INFO, 'h:1'))).toBe(false);
    expect(sameServer(a, undefined)).toBe(false);
  });
});
