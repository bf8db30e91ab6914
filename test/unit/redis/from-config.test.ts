import { describe, expect, it } from 'vitest';
import { RedisUnavailableError } from '../../../src/redis/connection.js';
import { agentClientName, redisConnectionFor } from '../../../src/redis/from-config.js';

describe('agentClientName', () => {
  it('names the agent, with what Redis refuses in a client name replaced by -', () => {
    expect(agentClientName('host-1/4242')).toBe('listing-agent-host-1/4242');
    expect(agentClientName('my host/12\tx')).toBe('listing-agent-my-host/12-x');
    expect(agentClientName('hôte/1')).toBe('listing-agent-h-te/1');
  });
});

describe('redisConnectionFor', () => {
  it('makes a connection that is not started, with the prefix of the section', async () => {
    const connection = redisConnectionFor({ url: 'redis://127.0.0.1:1', prefix: 'bot-a:' }, { clientName: agentClientName('a/1') });
    expect(connection.isUp).toBe(false);
    expect(connection.key('leader')).toBe('bot-a:leader');
    expect(connection.describe()).toBe('redis redis://127.0.0.1:1');
    await connection.close();
  });

  it('turns a URL the client refuses into one line that names state.redis.url and never its password', () => {
    const url = 'http://user:hunter2@example.invalid:6379';
    let thrown: unknown;
    try {
      redisConnectionFor({ url, prefix: 'listing-agent:' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RedisUnavailableError);
    expect((thrown as Error).message).toMatch(/^state\.redis\.url \(http:\/\/example\.invalid:6379\) cannot be used: /);
    expect((thrown as Error).message).not.toContain('hunter2');
  });
});
