import type { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { createRequire } from 'node:module';
import { redact } from '../api/redact.js';
import { REDACTED_KEYS } from './redacted-keys.js';

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Default `info`. */
  level?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `json` lines, `pretty` lines, or `auto`: pretty when `isTTY`. Default `auto`. */
  format?: 'auto' | 'json' | 'pretty';
  /** Where lines go (the CLI passes stdout). */
  destination: Writable;
  /** Whether the destination is a terminal (decides `auto`, and colours). Default false. */
  isTTY?: boolean;
  /** Secret values to scrub from every line, wherever they appear (tokens, webhook secrets). */
  secrets?: readonly string[];
}


/**
 * The daemon's logger: pino, JSON lines by default or readable lines on a terminal. Two layers
 * keep secrets out: keys that name secrets are censored wherever they are, and every line is
 * scrubbed of the configured secret values before it is written (so a token that slipped into a
 * message or an error text is caught too).
 */
export function createLogger(options: LoggerOptions): Logger {
  const pretty = options.format === 'pretty' || (options.format !== 'json' && options.isTTY === true);
  const secrets = [...(options.secrets ?? [])].filter((s) => s.length >= 4);
  // Required only for pretty output: a daemon writing JSON lines never loads it (nor its dependencies).
  const stream = pretty
    ? (createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty'))({
        destination: options.destination,
        colorize: options.isTTY === true,
        translateTime: 'SYS:HH:MM:ss',
        ignore: 'pid,hostname',
        sync: true,
      })
    : options.destination;
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      // Level names and ISO times read better in `journalctl` and `docker logs` than numbers.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [...REDACTED_KEYS, ...REDACTED_KEYS.map((key) => `*.${key}`), ...REDACTED_KEYS.map((key) => `*.*.${key}`)],
        censor: '[redacted]',
      },
      hooks: secrets.length > 0 ? { streamWrite: (line: string) => redact(line, secrets) } : {},
    },
    stream,
  );
}
