import { createRequire } from 'node:module';
import { z } from 'zod';
import { SNOWFLAKE_PATTERN } from '../contract/limits.js';
import { projectTokenProblem } from '../contract/project-token.js';
import { absoluteUrl, duration, hostName, listenAddress, secret, serviceUrl, sharedSecret } from './schema-fields.js';
import { HEALTH_LISTEN_DEFAULT } from './listen-address.js';
import { redisProblems, redisSchema } from './schema-redis.js';
import { votesSchema, webhooksSchema } from './schema-votes.js';

/**
 * The agent's configuration: the one source of truth (`configSchema` in schema.ts is built here).
 * `z.input` is what people write (with defaults), `z.output` what the code reads.
 * `config.schema.json` is generated from it (`npm run config:schema`), and the README's tables
 * list the same fields.
 *
 * Every part is made by a function, so that an agent can build the schema, check its
 * configuration and let it go (schema objects a bot need not keep: issue 25).
 * Secrets are marked with `secret()` so that every printout masks them.
 */

export { SECRET_PATHS } from './schema-fields.js';

const serviceSchema = () =>
  z
    .strictObject({
      v1: serviceUrl().default('https://top.gg/api/v1').describe('v1 base URL (https; plain http only to this machine).'),
      v0: serviceUrl().default('https://top.gg/api').describe('v0 base URL (https; plain http only to this machine).'),
      token: secret('service.token')
        .superRefine((token, ctx) => {
          const problem = projectTokenProblem(token);
          if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
        })
        .describe("The project token from the project's Integrations and API settings."),
    })
    .meta({ description: 'The listing service and the project token' });

const discordSchema = () =>
  z
    .strictObject({
      token: secret('discord.token').optional().describe('The bot token, for the Discord REST count and command sources.'),
      apiBaseUrl: absoluteUrl()
        .default('https://discord.com/api')
        .describe("Discord's API base URL (without the version): a proxy, or a fake Discord in tests."),
      applicationId: z
        .string()
        .regex(SNOWFLAKE_PATTERN, 'must be a Snowflake (17 to 20 digits)')
        .optional()
        .describe("The bot's application ID; default: read from the project token."),
    })
    .prefault({})
    .meta({ description: 'Discord credentials, for sources that read from Discord' });

/** croner, loaded at the first cron expression checked (its CommonJS build, synchronously): most configurations have none. */
let croner: typeof import('croner') | undefined;

function cronPattern() {
  return z
    .string()
    .refine((pattern) => {
      try {
        croner ??= createRequire(import.meta.url)('croner') as typeof import('croner');
        new croner.Cron(pattern, { paused: true }).stop();
        return true;
      } catch {
        return false;
      }
    }, 'must be a cron expression such as "*/30 * * * *" (minute hour day month weekday)')
    .meta({ description: 'a cron expression (croner syntax, 5 or 6 fields)' });
}

const statsSchema = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false).describe('Post server and shard counts.'),
      source: z
        .enum(['embedded', 'discord-rest', 'push', 'redis'])
        .default('embedded')
        .describe(
          "Where counts come from: embedded (the discord.js Client, ShardingManager or ClusterManager, or the Eris or Oceanic.js " +
            "Client, passed to createListingAgent), discord-rest (Discord's API, for a sidecar), push (the bot POSTs its shard counts " +
            "to the agent), redis (shard reports that bot processes write to Redis; needs state.redis).",
        ),
      interval: duration('1m', '1d').prefault('30m').describe('How often counts are posted (when no schedule is set).'),
      schedule: cronPattern().optional().describe('A cron expression for posting, instead of interval.'),
      sampleInterval: duration('10s', '1h').prefault('5m').describe('How often counts are sampled for the batch history (batch mode).'),
      jitter: duration('0s', '10m')
        .prefault('0s')
        .describe('A random delay up to this long before each post, so many bots do not post at once.'),
      mode: z
        .enum(['batch', 'patch'])
        .default('batch')
        .describe('batch: timestamped samples in one POST metrics/batch per post; patch: one PATCH metrics per post.'),
      skipUnchanged: z
        .boolean()
        .default(true)
        .describe('Leave out a sample equal to the one before it (at least one entry still goes out per post).'),
      v0: z.boolean().default(false).describe('Also post to the legacy v0 stats endpoint (server_count, shards, shard_count).'),
      rest: z
        .strictObject({
          shardCount: z.number().int().min(1).optional().describe('The shard count to report; default: read from GET /gateway/bot.'),
          cacheTtl: duration('10s', '1d').prefault('10m').describe('How long a count read from Discord is reused.'),
        })
        .prefault({})
        .describe('The discord-rest source (needs discord.token).'),
      push: z
        .strictObject({
          listen: listenAddress('127.0.0.1')
            .prefault('127.0.0.1:9466')
            .describe('Where the push endpoint listens (with state.redis: on every agent, leader or not).'),
          path: z.string().startsWith('/', 'must start with /').default('/stats').describe("The push endpoint's path."),
          key: sharedSecret('stats.push.key').optional().describe('The shared key the bot sends as Authorization: Bearer <key>.'),
          staleAfter: duration('10s', '1d')
            .prefault('10m')
            .describe('A shard report older than this is stale: no total is posted while one is.'),
          shardCount: z.number().int().min(1).optional().describe('Shards expected; default: the shard_count the reports carry.'),
        })
        .prefault({})
        .describe('The push source: the bot POSTs {shard_id, shard_count, server_count} per shard.'),
      redis: z
        .strictObject({
          reportEvery: duration('1s', '1h')
            .prefault('30s')
            .describe(
              "How often an embedded agent writes its own shards' counts to Redis, and an agent with the push source writes again what " +
                "the bot pushed to it (with state.redis).",
            ),
          staleAfter: duration('3s', '1d')
            .prefault('2m')
            .describe('A shard report older than this has expired: no total is posted while an expected shard has none.'),
          shardCount: z
            .number()
            .int()
            .min(1)
            .optional()
            .describe('Shards expected in all; default: the shard count the reports carry (read from Discord by each bot process).'),
        })
        .prefault({})
        .describe(
          'Shard aggregation in Redis: every bot process reports its shards, the leader posts the sum (source redis, or embedded with ' +
            'state.redis).',
        ),
    })
    .prefault({})
    .meta({ description: 'Stats posting (server and shard counts)' });

const commandsSchema = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false).describe("Sync the bot's slash commands to the listing when they change."),
      source: z
        .enum(['discord', 'file'])
        .default('discord')
        .describe(
          "Where the commands come from: discord (the bot's global commands, through the discord.js, Eris or Oceanic.js Client given to " +
            "createListingAgent, or Discord's API with discord.token), or file (a JSON array of command objects). Commands passed in " +
            "code to createListingAgent win over both.",
        ),
      file: z.string().min(1).optional().describe('The JSON file of command objects, for source file (relative to the working directory).'),
      interval: duration('1m', '7d')
        .optional()
        .describe('Also check for changes this often (a sync happens only when they changed). Default: on start only.'),
    })
    .prefault({})
    .meta({ description: 'Slash command sync' });

const stateSchema = () =>
  z
    .strictObject({
      directory: z.string().min(1).default('./state').describe("The file store's directory (created if missing)."),
      redis: redisSchema(),
    })
    .prefault({})
    .meta({ description: 'Where the agent keeps its state' });

const healthSchema = () =>
  z
    .strictObject({
      enabled: z.boolean().default(true).describe('Serve /healthz, /readyz and /metrics (and the status page).'),
      listen: listenAddress('127.0.0.1').prefault(HEALTH_LISTEN_DEFAULT).describe('Where the health server listens.'),
      allowedHosts: z
        .array(hostName())
        .default([])
        .describe(
          'Host names requests may name besides the listen address, localhost and IP addresses (the name Prometheus or a proxy uses, ' +
            'such as listing-agent). Any other Host is refused with 421, so that no web page can read the server through DNS rebinding.',
        ),
      statusPage: z.boolean().default(true).describe('Serve the status page at / and its data at /status.json.'),
      history: duration('1h', '7d')
        .prefault('24h')
        .describe("How far back the status page's plots go (posted counts, votes per hour); kept in memory."),
      adminToken: sharedSecret('health.adminToken')
        .optional()
        .describe(
          "Turns on the status page's actions (retry dead letters, post stats now) and the CLI's --agent, for requests that send it as " +
            "Authorization: Bearer <token>. Default: none, the page is read-only.",
        ),
    })
    .prefault({})
    .meta({ description: 'The health and metrics server (/healthz, /readyz, /metrics) and the status page' });

const logSchema = () =>
  z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('The lowest level logged.'),
      format: z
        .enum(['auto', 'json', 'pretty'])
        .default('auto')
        .describe('`json` lines, `pretty` lines, or `auto` (pretty on a terminal).'),
    })
    .prefault({})
    .meta({ description: 'Logging' });

/** The sections, each with its defaults, before the checks across sections. */
const sectionsSchema = () =>
  z.strictObject({
      $schema: z.string().optional().describe('The JSON Schema of this file, for editors (./config.schema.json).'),
      service: serviceSchema(),
      discord: discordSchema(),
      stats: statsSchema(),
      commands: commandsSchema(),
      votes: votesSchema(),
      webhooks: webhooksSchema(),
      state: stateSchema(),
      health: healthSchema(),
      log: logSchema(),
    });

/** What a part that keeps its data in Redis says when there is none. */
const SET_REDIS = 'set state.redis.url (LISTING_AGENT_STATE_REDIS_URL), state.redis.sentinel or state.redis.cluster';

/** Problems that span sections (a source with its key, an enabled part with what it needs). */
function crossSectionProblems(config: z.output<ReturnType<typeof sectionsSchema>>, ctx: z.RefinementCtx): void {
  if (config.stats.enabled && config.stats.source === 'push' && config.stats.push.key === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['stats', 'push', 'key'],
      message: 'the push source needs a shared key: set stats.push.key (LISTING_AGENT_STATS_PUSH_KEY) and send it from the bot',
    });
  }
  if (config.commands.enabled && config.commands.source === 'file' && config.commands.file === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['commands', 'file'],
      message: 'the file source needs the path of a JSON array of command objects: set commands.file (LISTING_AGENT_COMMANDS_FILE)',
    });
  }
  if (config.stats.enabled && config.stats.source === 'discord-rest' && config.discord.token === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['discord', 'token'],
      message: 'the discord-rest source needs the bot token: set discord.token (LISTING_AGENT_DISCORD_TOKEN)',
    });
  }
  if (config.state.redis === undefined) {
    if (config.stats.enabled && config.stats.source === 'redis') {
      ctx.addIssue({
        code: 'custom',
        path: ['state', 'redis', 'url'],
        message: `the redis stats source reads shard reports from Redis: ${SET_REDIS}`,
      });
    }
    if (config.votes.stream.enabled) {
      ctx.addIssue({
        code: 'custom',
        path: ['state', 'redis', 'url'],
        message: `the reward stream is a Redis Stream: ${SET_REDIS}`,
      });
    }
  } else redisProblems(config.state.redis, ctx);
  if (config.webhooks.enabled && config.webhooks.secrets.length === 0 && config.webhooks.legacyAuthorization === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['webhooks', 'secrets'],
      message: 'the receiver is enabled but has no secret: add a webhook secret (whs_...) or legacyAuthorization',
    });
  }
}

/**
 * Builds the whole configuration's schema (unknown keys are refused, so a typo is an error, not a
 * silent default). `configSchema` (schema.ts) is one, made when that module loads.
 */
export function buildConfigSchema() {
  return sectionsSchema().superRefine(crossSectionProblems);
}
