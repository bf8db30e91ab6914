import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { buildConfig } from '../../../src/config/loader.js';
import { parseSentinelNode } from '../../../src/config/schema-redis.js';
import { TOKEN, json } from './files.js';

/** The config a file with `redis` as `state.redis` makes, or the messages of its problems. */
function build(redis: unknown, env: Record<string, string> = {}): { config?: ReturnType<typeof buildConfig>['config']; problems?: string[] } {
  try {
    const { config } = buildConfig({ env: { LISTING_AGENT_SERVICE_TOKEN: TOKEN, ...env }, file: { name: 'c.json', text: json({ state: { redis } }) } });
    return { config };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { problems: error.problems.map((problem) => `${problem.path}: ${problem.message}`) };
  }
}

describe('state.redis: one server, the Sentinels or a cluster', () => {
  it('reads Sentinel nodes as host:port, [v6]:port or a host (port 26379)', () => {
    expect(parseSentinelNode('10.0.0.1:26380')).toEqual({ host: '10.0.0.1', port: 26380 });
    expect(parseSentinelNode('[fd00::1]:26379')).toEqual({ host: 'fd00::1', port: 26379 });
    expect(parseSentinelNode(' sentinel-a ')).toEqual({ host: 'sentinel-a', port: 26379 });
    expect(parseSentinelNode('a:b:c')).toBeUndefined();
    expect(parseSentinelNode('host:70000')).toBeUndefined();
  });

  it('takes the Sentinels, with their password and the servers\' own, from the file or the variables', () => {
    const { config } = build({ sentinel: { masterName: 'mymaster', nodes: ['10.0.0.1', '10.0.0.2:26380'], password: 'sentinel-pass' }, password: 'data-pass' });
    expect(config?.state.redis).toMatchObject({
      sentinel: { masterName: 'mymaster', nodes: [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26380 }], password: 'sentinel-pass' },
      password: 'data-pass',
      prefix: 'listing-agent:',
    });
    expect(config?.state.redis?.url).toBeUndefined();
    const fromEnv = build(undefined, { LISTING_AGENT_STATE_REDIS_SENTINEL_MASTER_NAME: 'mymaster', LISTING_AGENT_STATE_REDIS_SENTINEL_NODES: 'a:1,b:2' });
    expect(fromEnv.config?.state.redis?.sentinel?.nodes).toEqual([{ host: 'a', port: 1 }, { host: 'b', port: 2 }]);
  });

  it('wants exactly one of url and sentinel, and says which keys to set', () => {
    expect(build({ prefix: 'bot:' }).problems).toEqual([
      'state.redis.url: set state.redis.url (LISTING_AGENT_STATE_REDIS_URL) for one Redis server, or state.redis.sentinel.masterName and ' +
        'state.redis.sentinel.nodes (LISTING_AGENT_STATE_REDIS_SENTINEL_MASTER_NAME, LISTING_AGENT_STATE_REDIS_SENTINEL_NODES) for a primary watched by Sentinels, ' +
        'or state.redis.cluster.nodes (LISTING_AGENT_STATE_REDIS_CLUSTER_NODES) for a Redis Cluster',
    ]);
    expect(build({ url: 'redis://h:6379', sentinel: { masterName: 'm', nodes: ['h'] } }).problems).toEqual([
      'state.redis.url: set one of state.redis.url and state.redis.sentinel, not both: with Sentinels, the agent asks them where the primary is',
    ]);
    expect(build({ sentinel: { masterName: 'm', nodes: [] } }).problems?.[0]).toMatch(/^state\.redis\.sentinel\.nodes: list at least one Sentinel/);
    expect(build({ sentinel: { masterName: 'm', nodes: ['a:b:c'] } }).problems?.[0]).toMatch(/^state\.redis\.sentinel\.nodes\[0\]: must be a Sentinel address/);
  });

  it('refuses a Sentinel URL, which the Redis client has no form for, naming the keys instead', () => {
    expect(build({ url: 'redis+sentinel://10.0.0.1:26379/mymaster' }).problems).toEqual([
      'state.redis.url: is a Sentinel URL, which the agent does not read (the Redis client has no such form): set state.redis.sentinel.masterName and ' +
        'state.redis.sentinel.nodes (LISTING_AGENT_STATE_REDIS_SENTINEL_MASTER_NAME, LISTING_AGENT_STATE_REDIS_SENTINEL_NODES) instead',
    ]);
  });

  it('keeps the servers\' user and password for Sentinels: with a URL they go in the URL', () => {
    expect(build({ url: 'redis://h:6379', password: 'p' }).problems).toEqual(['state.redis.password: is for the servers behind state.redis.sentinel or state.redis.cluster: with state.redis.url, put the password in the URL']);
  });

  it('takes a cluster\'s nodes (port 6379 by default) from the file or the variables, and no second shape beside it', () => {
    const { config } = build({ cluster: { nodes: ['10.0.0.1', '10.0.0.2:7001'] }, password: 'data-pass' });
    expect(config?.state.redis).toMatchObject({ cluster: { nodes: [{ host: '10.0.0.1', port: 6379 }, { host: '10.0.0.2', port: 7001 }] }, password: 'data-pass' });
    const fromEnv = build(undefined, { LISTING_AGENT_STATE_REDIS_CLUSTER_NODES: 'a:1,b:2' });
    expect(fromEnv.config?.state.redis?.cluster?.nodes).toEqual([{ host: 'a', port: 1 }, { host: 'b', port: 2 }]);
    expect(build({ url: 'redis://h:6379', cluster: { nodes: ['h'] } }).problems).toEqual([
      'state.redis.cluster: set one of state.redis.url, state.redis.sentinel and state.redis.cluster, not two: ' +
        "the agent learns the cluster's primaries from its nodes",
    ]);
    expect(build({ cluster: { nodes: ['a:b:c'] } }).problems?.[0]).toMatch(/^state\.redis\.cluster\.nodes\[0\]: must be a cluster node address/);
  });
});
