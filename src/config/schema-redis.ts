import { z } from 'zod';
import { duration, secret } from './schema-fields.js';

/*
 * `state.redis`: the Redis that several agents share, as one server at a URL, as the primary that
 * Sentinels name, or as a Redis Cluster (schema-build.ts puts it in `state`). Made by functions, as
 * the other sections.
 */

/** The port a Sentinel listens on when a node names none. */
const SENTINEL_DEFAULT_PORT = 26379;
/** The port a Redis server (a cluster node) listens on when a node names none. */
const REDIS_DEFAULT_PORT = 6379;

const NODE = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+))(?::(\d{1,5}))?$/;

/** `host:port`, `[v6]:port` or a host alone (`defaultPort`), read as `{host, port}`; undefined when it is none of these. */
function parseNode(text: string, defaultPort: number): { host: string; port: number } | undefined {
  const match = NODE.exec(text.trim());
  if (!match) return undefined;
  const port = match[3] === undefined ? defaultPort : Number(match[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: match[1] ?? match[2]!, port };
}

/** `host:port`, `[v6]:port` or a host alone (port 26379), read as `{host, port}`; undefined when it is none of these. */
export function parseSentinelNode(text: string): { host: string; port: number } | undefined {
  return parseNode(text, SENTINEL_DEFAULT_PORT);
}

function nodeAddress(what: string, defaultPort: number) {
  const form = `host:port, [v6]:port, or a host (port ${defaultPort})`;
  return z
    .string()
    .transform((text, ctx) => {
      const node = parseNode(text, defaultPort);
      if (node === undefined) {
        ctx.addIssue({ code: 'custom', message: `must be ${what}: ${form}` });
        return z.NEVER;
      }
      return node;
    })
    .meta({ description: form });
}

const sentinelNode = () => nodeAddress('a Sentinel address', SENTINEL_DEFAULT_PORT);

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

const clusterSchema = () =>
  z
    .strictObject({
      nodes: z
        .array(nodeAddress('a cluster node address', REDIS_DEFAULT_PORT))
        .min(1, 'list at least one node of the cluster')
        .describe('Some of the cluster\'s nodes, each host:port, [v6]:port or a host (port 6379); three is plenty, the rest are learnt.'),
    })
    .optional()
    .describe(
      'Use a Redis Cluster instead of state.redis.url: every key goes under one hash tag made of state.redis.prefix ' +
        '({listing-agent}:...), so all of them live on the primary of one slot.',
    );

/** `state.redis`: set it to run several agents (one leads, the others stand by). */
export function redisSchema() {
  return z
    .strictObject({
      url: secret('state.redis.url')
        .optional()
        .describe(
          'One Redis server: redis://[user:password@]host:port[/db], or rediss:// for TLS. ' +
            'Masked: it may hold a password. Set this, state.redis.sentinel or state.redis.cluster.',
        ),
      sentinel: sentinelSchema(),
      cluster: clusterSchema(),
      username: z
        .string()
        .min(1)
        .optional()
        .describe("With state.redis.sentinel or state.redis.cluster: the Redis servers' user (with state.redis.url, the URL carries it)."),
      password: secret('state.redis.password')
        .optional()
        .describe(
          "With state.redis.sentinel or state.redis.cluster: the Redis servers' password (with state.redis.url, the URL carries it).",
        ),
      prefix: z
        .string()
        .min(1)
        .default('listing-agent:')
        .describe('Prefix of every key, so several bots can share one Redis; on a cluster, made a hash tag ({listing-agent}:).'),
      tls: tlsSchema('Redis', 'on for rediss:// URLs').prefault({}).describe('TLS to Redis (the servers that hold the data).'),
      lease: duration('2s', '5m').prefault('15s').describe('The leader lease: a dead leader is replaced within this period.'),
      replicas: z
        .number()
        .int()
        .min(0)
        .max(16)
        .optional()
        .describe(
          'Replicas that must have a write (WAIT) before the agent takes it as done: a webhook vote answered 2xx, ' +
            "the votes cursor's checkpoint, a hook's completion, a fencing token; " +
            'default 1 when the primary has a replica, or had one since the agent reached it (set 0 if you removed it), else 0.',
        ),
      confirmTimeout: duration('10ms', '10s')
        .prefault('1s')
        .describe('How long a write waits for state.redis.replicas to have it; past it, it is refused as Redis down is (503).'),
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
const CLUSTER_KEY = 'state.redis.cluster.nodes (LISTING_AGENT_STATE_REDIS_CLUSTER_NODES)';

/** What `state.redis` needs beyond its fields: one of url and sentinel, a URL the agent reads, the servers' password where it goes. */
export function redisProblems(redis: NonNullable<RedisOutput>, ctx: z.RefinementCtx): void {
  const issue = (path: string[], message: string) => ctx.addIssue({ code: 'custom', path: ['state', 'redis', ...path], message });
  const given = [redis.url, redis.sentinel, redis.cluster].filter((shape) => shape !== undefined).length;
  if (given === 0) {
    issue(
      ['url'],
      `set ${URL_VARIABLE} for one Redis server, or ${SENTINEL_KEYS} for a primary watched by Sentinels, ` +
        `or ${CLUSTER_KEY} for a Redis Cluster`,
    );
    return;
  }
  if (given > 1) {
    if (redis.cluster !== undefined) {
      const why = 'the agent learns the cluster\'s primaries from its nodes';
      issue(['cluster'], `set one of state.redis.url, state.redis.sentinel and state.redis.cluster, not two: ${why}`);
      return;
    }
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
        const behind = 'is for the servers behind state.redis.sentinel or state.redis.cluster';
        issue([key], `${behind}: with state.redis.url, put the ${what} in the URL`);
      }
    }
  }
}
