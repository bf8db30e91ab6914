import { createHash } from 'node:crypto';

/**
 * Where the agent's data lives in Redis, every key under `state.redis.prefix` (default
 * `listing-agent:`), so that several bots can share one Redis. One place for the names, so the
 * README's key table, the tests and the code agree.
 */
export const REDIS_KEYS = {
  /** `state:<key>`: one state store value (JSON), for example `state:votes:cursor`. */
  state: (key: string) => `state:${key}`,
  /** `vote:<vote key>`: a vote's ledger record (hash), expiring with the vote plus `votes.keepKeysFor`. */
  vote: (key: string) => `vote:${key}`,
  /** `votes:pending`: hash of pending vote keys to the agent that runs their hooks. */
  pending: 'votes:pending',
  /** `votes:dead`: hash of dead letters (`<vote key>|<hook>` to `<seq> <forget at> <letter JSON>`). */
  deadLetters: 'votes:dead',
  /**
   * `votes:index`: sorted set of every vote key in the ledger, scored by when it may be forgotten
   * (`expiresAt` + `votes.keepKeysFor`, epoch ms; `+inf` while pending or dead-lettered): counts
   * the keys, and lets `compact()` forget by the agent's clock without SCAN.
   */
  voteIndex: 'votes:index',
  /** `votes:seq`: a counter ordering vote records and dead letters (hashes keep no order). */
  voteSeq: 'votes:seq',
  /** `agent:<agent id>`: an agent's heartbeat (expires after one lease period). */
  agent: (id: string) => `agent:${id}`,
  /** `leader`: the lease, `<agent id>|<fencing token>`, with the lease period as its TTL. */
  leader: 'leader',
  /** `leader:fence`: the last fencing token handed out (INCR on every new lease). */
  fence: 'leader:fence',
  /**
   * `shards:<shard id>`: one shard's last report (JSON `{shard_id, shard_count, server_count, reportedAt, process}`), with
   * `stats.redis.staleAfter` as its TTL.
   */
  shard: (id: number) => `shards:${id}`,
  /** `shards:index`: sorted set of reported shard IDs (score = report time), to find them without SCAN. */
  shardIndex: 'shards:index',
  /** `shards:changed`: a pub/sub channel, not a key; each round of shard reports is announced there (message: the number of shards). */
  shardsChanged: 'shards:changed',
  /** `webhooks:secrets`: the webhook secrets made while agents run (rotations, integrations), JSON in the secret file's shape. */
  webhookSecrets: 'webhooks:secrets',
  /** `webhooks:secrets:changed`: a pub/sub channel, not a key; every change of `webhooks:secrets` is announced there. */
  webhookSecretsChanged: 'webhooks:secrets:changed',
  /**
   * `streamed:<vote key>`: marks a vote already appended to the reward stream (value: its entry ID; TTL: the vote's expiry plus
   * `votes.keepKeysFor`).
   */
  streamed: (key: string) => `streamed:${key}`,
  /** `reminders:schedule`: hash of vote reminders, `<project>\t<user>` to the line of that voter's latest vote (votes.reminders). */
  reminders: 'reminders:schedule',
  /** `reminders:due`: sorted set of the slots of `reminders:schedule`, scored by due time (epoch ms). */
  remindersDue: 'reminders:due',
  /** `reminders:sent`: list of the last ten reminder lines handed to the hooks, newest first. */
  remindersSent: 'reminders:sent',
  /** `reminders:`: put before the reminder pipeline's own ledger keys (`reminders:votes:pending`, `reminders:vote:<key>`, ...). */
  remindersLedger: 'reminders:',
} as const;

/** A Redis URL for logs: scheme, host, port and database, never the user or password. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(an invalid Redis URL)';
  }
}

/** The SHA-1 of a Lua script, as EVALSHA wants it. */
export function scriptSha(source: string): string {
  return createHash('sha1').update(source).digest('hex');
}
