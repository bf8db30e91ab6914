import { ListingAgentError } from '../errors.js';
import { redisFailure, type RedisConnection } from '../redis/connection.js';
import { REDIS_KEYS } from '../redis/keys.js';
import { liveContent, parseSecretContent, type SecretFileContent } from './secrets-file.js';

/*
 * The webhook secrets made while agents run (rotations, integration handshakes), shared through
 * Redis when `state.redis` is set: one JSON value at `webhooks:secrets` in the secret file's shape,
 * changed by compare-and-set and announced on the channel `webhooks:secrets:changed`, so every
 * agent's receiver accepts a new secret the moment it is stored.
 */

/** Sets the value only if it is still the one read (`''` for none), then announces the change. */
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if current == false then current = '' end
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], 'changed')
return 1
`;

/** Tries before a write gives up because others keep changing the value (each try is two round trips). */
const MAX_TRIES = 20;

/** The key and the channel of the shared secrets, under the connection's prefix. */
export function redisSecretNames(connection: RedisConnection): { key: string; channel: string } {
  return { key: connection.key(REDIS_KEYS.webhookSecrets), channel: connection.key(REDIS_KEYS.webhookSecretsChanged) };
}

async function readText(connection: RedisConnection, key: string): Promise<string | null> {
  try {
    return await connection.client.get(key);
  } catch (error) {
    throw redisFailure('read the webhook secrets', error);
  }
}

/**
 * The shared secrets, `undefined` when none were stored yet. Rejects with `RedisUnavailableError`
 * when Redis does not answer, and with a `ListingAgentError` naming the key (never a secret) when
 * its value is not secrets.
 */
export async function readRedisSecrets(connection: RedisConnection): Promise<SecretFileContent | undefined> {
  const { key } = redisSecretNames(connection);
  const text = await readText(connection, key);
  return text === null ? undefined : parseSecretContent(text, `the Redis key ${key}`);
}

/**
 * Changes the shared secrets: `change` gets the current ones (expired entries dropped) and returns
 * the new ones, which are stored only if nobody changed them meanwhile (else it runs again on the
 * newer ones). Resolves with what was stored, once every receiver can be told.
 */
export async function updateRedisSecrets(
  connection: RedisConnection,
  change: (content: SecretFileContent) => SecretFileContent,
  now: () => number = Date.now,
): Promise<SecretFileContent> {
  const { key, channel } = redisSecretNames(connection);
  const script = connection.script(COMPARE_AND_SET);
  for (let tries = 1; tries <= MAX_TRIES; tries += 1) {
    const text = await readText(connection, key);
    const next = change(liveContent(text === null ? undefined : parseSecretContent(text, `the Redis key ${key}`), now()));
    let stored: unknown;
    try {
      stored = await script.run([key], [text ?? '', JSON.stringify(next), channel]);
    } catch (error) {
      throw redisFailure('store the webhook secrets', error);
    }
    if (Number(stored) === 1) return next;
  }
  const message =
    `the webhook secrets at the Redis key ${key} changed ${MAX_TRIES} times ` + 'while this write tried to store its change; try again';
  throw new ListingAgentError('webhook_secrets', message);
}
