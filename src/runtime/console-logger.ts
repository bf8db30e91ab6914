import { redact } from '../api/redact.js';
import { HEADLINES, type AgentLogger } from '../log/agent-logger.js';
import { REDACTED_KEYS } from '../log/redacted-keys.js';
import type { Delay } from '../contract/timer-delay.js';
import { createLineLimiter, type IntervalSummary } from './line-limiter.js';

/*
 * The embedded agent's default logger (no `logger` option): what a person running a bot needs to
 * see, on stderr, in plain text. Every `warn` and `error` line, and of the `info` lines only the
 * two {@link HEADLINES} (ready, first post); never `debug`. One line each, beginning
 * `listing-agent:`: the message, the error, the other fields, then the fix (a child's bindings are
 * left out); secrets left out (by key) and scrubbed (by value). The same message is written once a minute at most; its repeats are
 * told in one line at the end of that minute, or at `flush()` (the agent's stop):
 * `listing-agent: the service still refuses the project token (repeated 12 times in the last 60 s)`.
 * No pino: a bot posting stats loads none of the daemon's logging.
 */

/** Options of {@link createConsoleLogger}. */
export interface ConsoleLoggerOptions {
  /** Epoch ms. */
  now: () => number;
  /** Writes one line (without its newline). Default `console.error`: stderr. */
  write?: (line: string) => void;
  /** Secret values scrubbed from every line (the config's tokens and secrets). Default: none. */
  secrets?: readonly string[];
  /** The timer of the repeats' summary. Default: an unref'd `setTimeout`. */
  schedule?: Delay;
}

/** The logger made by {@link createConsoleLogger}: an {@link AgentLogger}, and what writes the repeats' summary now. */
export interface ConsoleLogger extends AgentLogger {
  /** Writes the summary of the repeats not told yet (the agent calls it when it stopped). */
  flush(): void;
}

const PREFIX = 'listing-agent: ';
/** One line of each message per interval; the rest are counted. */
const REPEAT_INTERVAL_MS = 60_000;
const HEADLINE_MESSAGES: ReadonlySet<string> = new Set(Object.values(HEADLINES));
const HIDDEN_KEYS: ReadonlySet<string> = new Set(REDACTED_KEYS.map((key) => key.toLowerCase()));

/** A field's value as words: strings as they are, an error by its message, anything else as JSON. */
function valueText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.message;
  if (typeof value !== 'object') return String(value);
  try {
    // A field named like a secret is left out at any depth, as at the top.
    return JSON.stringify(value, (key, inner: unknown) => (HIDDEN_KEYS.has(key.toLowerCase()) ? undefined : inner));
  } catch {
    return String(value);
  }
}

/** `message: err (field: value, ...); fix: fix`, on one line. */
function lineOf(message: string, fields: Record<string, unknown>): string {
  const { err, fix, ...rest } = fields;
  const errText = valueText(err);
  const fixText = valueText(fix);
  const details: string[] = [];
  for (const [key, value] of Object.entries(rest)) {
    const text = HIDDEN_KEYS.has(key.toLowerCase()) ? undefined : valueText(value);
    if (text !== undefined) details.push(`${key}: ${text}`);
  }
  const line = [
    message,
    errText !== undefined && !message.includes(errText) ? `: ${errText}` : '',
    details.length > 0 ? ` (${details.join(', ')})` : '',
    fixText !== undefined ? `; fix: ${fixText}` : '',
  ].join('');
  return line.replace(/\s+/g, ' ').trim();
}

/** Creates the stderr logger (see the module comment). */
export function createConsoleLogger(options: ConsoleLoggerOptions): ConsoleLogger {
  const { now } = options;
  const write = options.write ?? ((line: string) => console.error(line));
  const secrets = options.secrets ?? [];
  const put = (text: string) => write(redact(`${PREFIX}${text}`, secrets));
  const summarise = ({ kinds, startedAt }: IntervalSummary<string>) => {
    const seconds = Math.max(1, Math.round((now() - startedAt) / 1_000));
    for (const [message, { total, written }] of kinds) {
      const repeats = total - written;
      if (repeats > 0) put(`${message} (repeated ${repeats === 1 ? 'once' : `${repeats} times`} in the last ${seconds} s)`);
    }
  };
  const limiter = createLineLimiter<string>({
    now,
    linesPerInterval: 1,
    intervalMs: REPEAT_INTERVAL_MS,
    summarise,
    ...(options.schedule ? { schedule: options.schedule } : {}),
  });

  const line = (obj: object | string, msg?: string) => {
    const message = typeof obj === 'string' ? obj : (msg ?? '');
    if (limiter.take(message)) put(lineOf(message, typeof obj === 'string' ? {} : (obj as Record<string, unknown>)));
  };
  // A child's bindings (`capability: stats`, `component: health`) name parts of the agent; the
  // messages say what they are about, so the line leaves the bindings out.
  const logger: ConsoleLogger = {
    error: line,
    warn: line,
    info(obj, msg) {
      if (HEADLINE_MESSAGES.has(typeof obj === 'string' ? obj : (msg ?? ''))) line(obj, msg);
    },
    debug() {},
    child: () => logger,
    flush: () => limiter.flush(),
  };
  return logger;
}
