/**
 * Keys whose values never reach a log line, whatever object they are in: the daemon's pino logger
 * censors them (log/logger.ts), the embedded agent's stderr logger leaves them out
 * (runtime/console-logger.ts). Here, apart from pino, so that the second need not load it.
 */
export const REDACTED_KEYS: readonly string[] = [
  'token',
  'secret',
  'secrets',
  'authorization',
  'password',
  'clientSecret',
  'client_secret',
  'accessToken',
  'refreshToken',
  'access_token',
  'refresh_token',
];
