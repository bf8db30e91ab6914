import { createRequire } from 'node:module';

/**
 * `@redis/client`, loaded the first time an agent actually uses Redis. It is about a fifth of an
 * idle daemon's memory, so an agent without `state.redis` must not pay for it; the package is
 * CommonJS, so a synchronous `require` keeps `createRedisConnection` synchronous.
 */
type RedisModule = typeof import('@redis/client');

let loaded: RedisModule | undefined;

/** The `@redis/client` module (required once, then cached). */
export function redisModule(): RedisModule {
  loaded ??= createRequire(import.meta.url)('@redis/client') as RedisModule;
  return loaded;
}

/** True when `error` is a Redis error reply (`ERR ...`, `WRONGTYPE ...`), without loading the client for it. */
export function isRedisErrorReply(error: unknown): error is Error {
  return loaded !== undefined && error instanceof loaded.ErrorReply;
}
