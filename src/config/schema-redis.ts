import { z } from 'zod';
import { duration, secret } from './schema-fields.js';

/*
 * `state.redis`: the Redis that several agents share, as one server at a URL or as the primary that
 * Sentinels name (schema-build.ts puts it in `state`). Made by functions, as the other sections.
 */

/** The port a Sentinel listens on when a node names none. */
const SENTINEL_DEFAULT_PORT = 26379;

const SENTINEL_NODE = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+))(?::(\d{1,5}))?$/;

/** `host:port`, `[v6]:port` or a host alone (port 26379), read as `{host, port}`; undefined when it is none of these. */
export function parseSentinelNode(text: string): { host: string; port: number } | undefined {
  const match = SENTINEL_NODE.exec(text.trim());
  if (!match) return undefined;
  const port = match[3] === undefined ? SENTINEL_DEFAULT_PORT : Number(match[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: match[1] ?? match[2]!, port };
}

function sentinelNode() {
  return z
    .string()
    .transform((text, ctx) => {
      const node = parseSentinelNode(text);
      if (node === undefined) {
        ctx.addIssue({ code: 'custom', message: 'must be a Sentinel address: host:port, [v6]:port, or a host (port 26379)' });
        return z.NEVER;
      }
      return node;
    })
    .meta({ description: 'host:port, [v6]:port, or a host (port 26379)' });
}

const tlsSchema = (what: string, defaultNote: string) =>
  z.strictObject({
    enabled: z.boolean().optional().describe(`Use TLS to ${what}; default: ${defaultNote}.`),
    caFile: z.string().min(1).optional().describe("A PEM file of the CA that signed the server's certificate (default: the system's CAs)."),
    serverName: z.string().min(1).optional().describe("The name the server's certificate must carry; default: the host connected to."),
  });

const sentinelSchema = () =>
  z
    .strictObject({
      masterName: z
        .string()
        .min(1)
        .describe('The name the Sentinels monitor the primary by (sentinel monitor <name> ... in sentinel.conf).'),
      nodes: z
        .array(sentinelNode())
        .min(1, 'list at least one Sentinel')
        .describe('Some of the Sentinels, each host:port, [v6]:port or a host (port 26379); three is plenty, the rest are learnt.'),
      username: z.string().min(1).optional().describe("The Sentinels' own user, when their ACL asks for one."),
      password: secret('state.redis.sentinel.password')
        .optional()
        .describe("The Sentinels' own password (requirepass in sentinel.conf), when they ask for one."),
      tls: tlsSchema('the Sentinels', 'as state.redis.tls.enabled')
        .optional()
        .describe('TLS to the Sentinels; default: as state.redis.tls.'),
    })
    .optional()
    .describe(
      'Reach the primary through Redis Sentinel instead of state.redis.url: ' +
        'the agent asks the Sentinels for it and follows it across a failover.',
    );

/** `state.redis`: set it to run several agents (one leads, the others stand by). */
export function redisSchema() {
  return z
    .strictObject({
      url: secret('state.redis.url')
        .optional()
        .describe(
          'One Redis server: redis://[user:password@]host:port[/db], or rediss:// for TLS. ' +
            'Masked: it may hold a password. Set this or state.redis.sentinel.',
        ),
      sentinel: sentinelSchema(),
      username: z
        .string()
        .min(1)
        .optional()
        .describe("With state.redis.sentinel: the Redis servers' user (with state.redis.url, the URL carries it)."),
      password: secret('state.redis.password')
        .optional()
        .describe("With state.redis.sentinel: the Redis servers' password (with state.redis.url, the URL carries it)."),
      prefix: z.string().min(1).default('listing-agent:').describe('Prefix of every key, so several bots can share one Redis.'),
      tls: tlsSchema('Redis', 'on for rediss:// URLs').prefault({}).describe('TLS to Redis (the servers that hold the data).'),
      lease: duration('2s', '5m').prefault('15s').describe('The leader lease: a dead leader is replaced within this period.'),
      agentId: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe(
          "This agent's name in the lease and on /readyz; " +
            'default: <hostname>/<pid> for the daemon, <hostname>/<8 random hex digits> embedded.',
        ),
    })
    .optional()
    .describe('Share the state through Redis: set it to run several agents (one leads, the others stand by).');
}

type RedisOutput = z.output<ReturnType<typeof redisSchema>>;

const URL_VARIABLE = 'state.redis.url (LISTING_AGENT_STATE_REDIS_URL)';
const SENTINEL_KEYS =
  'state.redis.sentinel.masterName and state.redis.sentinel.nodes ' +
  '(LISTING_AGENT_STATE_REDIS_SENTINEL_MASTER_NAME, LISTING_AGENT_STATE_REDIS_SENTINEL_NODES)';

/** What `state.redis` needs beyond its fields: one of url and sentinel, a URL the agent reads, the servers' password where it goes. */
export function redisProblems(redis: NonNullable<RedisOutput>, ctx: z.RefinementCtx): void {
  const issue = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path: ['state', 'redis', ...path], message });
  if (redis.url === undefined && redis.sentinel === undefined) {
    issue(['url'], `set ${URL_VARIABLE} for one Redis server, or ${SENTINEL_KEYS} for a primary watched by Sentinels`);
    return;
  }
  if (redis.url !== undefined && redis.sentinel !== undefined) {
    const why = 'with Sentinels, the agent asks them where the primary is';
    issue(['url'], `set one of state.redis.url and state.redis.sentinel, not both: ${why}`);
    return;
  }
  if (redis.url !== undefined) {
    if (/^(redis\+sentinel|redis-sentinel|sentinel|rediss\+sentinel):/i.test(redis.url)) {
      issue(['url'], `is a Sentinel URL, which the agent does not read (the Redis client has no such form): set ${SENTINEL_KEYS} instead`);
    } else if (!/^rediss?:\/\//.test(redis.url)) {
      issue(['url'], 'must be a redis:// or rediss:// URL');
    }
    for (const key of ['username', 'password'] as const) {
      if (redis[key] !== undefined) {
        const what = key === 'username' ? 'user' : 'password';
        issue([key], `is for the servers behind state.redis.sentinel: with state.redis.url, put the ${what} in the URL`);
      }
    }
  }
}
