import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './io.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `util.parseArgs` in strict mode, with its errors turned into {@link UsageError}s that name the
 * command (so the message can point at `listing-agent <command> --help`).
 */
export function parseCommandArgs(
  command: string,
  argv: string[],
  options: Options,
): { values: Record<string, string | boolean | (string | boolean)[] | undefined> } {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false });
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    throw new UsageError(message, command);
  }
}

/** A `--port` value: an integer from 0 to 65535. */
export function parsePort(command: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535 (got '${value}')`, command);
  }
  return port;
}
