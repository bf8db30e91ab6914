import { randomBytes } from 'node:crypto';

/** The service's Snowflake epoch (2015-01-01, like Discord's). */
const SNOWFLAKE_EPOCH_MS = 1_420_070_400_000n;

/** Makes Snowflake-style IDs from the emulator clock: time in the high bits, a counter below. */
export function createSnowflakeGenerator(now: () => number): () => string {
  let counter = 0n;
  return () => {
    counter = (counter + 1n) & 0x3fffffn;
    const ms = BigInt(Math.max(now(), Number(SNOWFLAKE_EPOCH_MS) + 1)) - SNOWFLAKE_EPOCH_MS;
    return ((ms << 22n) | counter).toString();
  };
}

/** A random URL-safe string with a recognisable prefix (`whs_`, `lat_`, ...). */
export function randomToken(prefix: string, bytes = 24): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}
