import { z } from 'zod';
import { absoluteUrl, duration, hookVariableName, listenAddress, secret, sharedSecret } from './schema-fields.js';

/**
 * The `votes` and `webhooks` sections of the configuration (schema-build.ts puts them together
 * with the rest): the reward hooks, the reminders, the votes cursor and the signed receiver.
 * Every part is made by a function, as in schema-build.ts.
 */

const hookRetries = () => ({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'must be 1 to 40 characters: lowercase letters, digits, - and _')
    .optional()
    .describe('Names the hook in logs, metrics and dead letters. Default: http-1, exec-2, ... by position.'),
  timeout: duration('100ms', '5m').prefault('10s').describe('How long one call may take.'),
  retries: z
    .number()
    .int()
    .min(0)
    .max(20)
    .default(5)
    .describe('Retries after a failure (with backoff) before the vote is dead-lettered for this hook.'),
});

const httpHookSchema = () =>
  z
    .strictObject({
      type: z.literal('http').describe('http (the default when url is given).'),
      url: absoluteUrl().describe('Where the vote is POSTed as JSON.'),
      secret: secret('votes.hooks[].secret')
        .optional()
        .describe('Signs each call with the same t=,v1= HMAC scheme as the service (x-topgg-signature), so the bot can verify it.'),
      authorization: secret('votes.hooks[].authorization').optional().describe('Sent as the Authorization header.'),
      ...hookRetries(),
    })
    .meta({ description: 'POST each vote to a local URL; a 2xx is success' });

const execHookSchema = () =>
  z
    .strictObject({
      type: z.literal('exec').describe('exec (the default when command is given).'),
      command: z
        .array(z.string().min(1))
        .min(1)
        .describe('The program and its arguments (no shell): the vote comes as JSON on stdin and as LISTING_VOTE_* environment variables.'),
      env: z
        .array(hookVariableName())
        .optional()
        .describe(
          "Names of variables copied from the agent's environment into the command's (DATABASE_URL); a name that is not set is " +
            "left out. Otherwise the daemon's commands get only PATH, HOME, LANG, TZ and the vote's variables. Never the agent's own: " +
            'LISTING_* names and the variables the config reads are refused.',
        ),
      ...hookRetries(),
    })
    .meta({ description: 'Run a command per vote; exit 0 is success' });

/** A hook's `type` may be left out: `url` makes it `http`, `command` makes it `exec`. */
const hookSchema = () =>
  z.preprocess((value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || 'type' in value) return value;
    if ('url' in value) return { type: 'http', ...value };
    if ('command' in value) return { type: 'exec', ...value };
    // Neither: read it as an http hook, so the problem says that `url` is missing.
    return { type: 'http', ...value };
  }, z.discriminatedUnion('type', [httpHookSchema(), execHookSchema()]));

/*
 * Reminders have hooks of their own (votes.reminders.hooks, the same shape as votes.hooks) rather
 * than reusing the reward hooks: a reminder is a different message (a DM "you can vote again",
 * not a reward), usually to a different endpoint, and a reward endpoint that also had to tell the
 * two apart by the body's type would read worse in the config than a second short list. The
 * Redis stream is the exception: with votes.stream on, reminders go to its sibling stream
 * `<votes.stream.key>:reminders` (no second switch to keep in step).
 */
const remindersSchema = () =>
  z
    .strictObject({
      enabled: z
        .boolean()
        .default(false)
        .describe("Tell the bot, once per vote, when the voter can vote again (the vote's expires_at plus delay)."),
      delay: duration('0s', '30d').prefault('0s').describe("Added to a vote's expires_at: when its reminder is due."),
      maxLateness: duration('0s', '30d')
        .prefault('1h')
        .describe('A reminder due longer ago than this (the agent was down) is skipped, not sent.'),
      hooks: z
        .array(hookSchema())
        .default([])
        .describe(
          'Reminder hooks (the same kinds as votes.hooks), each called once per reminder; embedded bots can also listen to the reminder ' +
            'event. With votes.stream on, reminders are also appended to <votes.stream.key>:reminders.',
        ),
    })
    .prefault({})
    .describe('Vote reminders: one call per vote when its voter can vote again.');

export const votesSchema = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false).describe('Poll the votes cursor and run the reward hooks once per new vote.'),
      pollInterval: duration('5s', '1h').prefault('60s').describe('How often the votes cursor is polled.'),
      lookback: duration('0s', '365d')
        .prefault('0s')
        .describe(
          "How far before a first start (no checkpoint in the state yet) the first poll lists votes to reward, at most the contract's " +
            "one year. 0s rewards only the votes cast from the first start on; 12h (a vote's lifetime) backfills every vote still active.",
        ),
      hooks: z
        .array(hookSchema())
        .default([])
        .describe('Reward hooks, each called once per new vote (embedded bots can also listen to the vote event).'),
      stream: z
        .strictObject({
          enabled: z
            .boolean()
            .default(false)
            .describe('Append every new vote to a Redis Stream, for bot processes to consume with createVoteConsumer (needs state.redis).'),
          key: z.string().min(1).default('votes:stream').describe('The stream, under state.redis.prefix.'),
          maxLength: z
            .number()
            .int()
            .min(1_000)
            .default(100_000)
            .describe('Entries kept at most (XADD MAXLEN ~): the oldest, long acknowledged, are trimmed.'),
        })
        .prefault({})
        .describe('The reward stream: votes handed to exactly one live bot process through a consumer group.'),
      keepKeysFor: duration('0s', '7d')
        .prefault('1h')
        .describe("How long after a vote's expires_at its key is kept to recognise a late duplicate (webhook retries, a cursor replay)."),
      reminders: remindersSchema(),
    })
    .prefault({})
    .meta({ description: 'Votes: cursor polling and reward hooks' });

export const webhooksSchema = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false).describe('Receive signed vote deliveries.'),
      listen: listenAddress('127.0.0.1').prefault('127.0.0.1:9465').describe('Where the webhook receiver listens.'),
      path: z
        .string()
        .startsWith('/', 'must start with /')
        .default('/webhooks/listing')
        .describe('The path the webhook receiver answers on.'),
      secrets: z.array(secret('webhooks.secrets[]')).default([]).describe('Webhook secrets (`whs_...`); several during a rotation.'),
      legacyAuthorization: sharedSecret('webhooks.legacyAuthorization').optional().describe('The legacy v0 `Authorization` shared secret.'),
      publicUrl: absoluteUrl()
        .optional()
        .describe(
          "The receiver's URL as the service reaches it (through a proxy or tunnel), given as webhook_url in integration handshakes. " +
            "Default: the listening address and path.",
        ),
    })
    .prefault({})
    .meta({ description: 'The signed webhook receiver' });
