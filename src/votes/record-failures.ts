import type { AgentLogger } from '../log/agent-logger.js';
import { unrefDelay, type Delay } from '../contract/timer-delay.js';
import { clippedErrorMessage } from './pipeline-state.js';

/**
 * The `warn` lines about records of finished hooks that could not be written (a full or read-only
 * disk). Such a record is not lost at once: the ledger keeps it in memory and writes it with its
 * next write that succeeds, or at the stop; only when none does are those votes rewarded again at
 * the next start (the ledger's close says which). On a full disk every finished vote fails the
 * same way, so the first failure of an interval is a line of its own, with the cause, and the
 * rest are counted into one summary line at the interval's end, with their keys (the first 20).
 */

/** What a record was for: a vote whose every hook is done, or one hook's success. */
type RecordKind = 'finished' | 'hook';

/** Options of {@link createRecordFailureLog}. */
export interface RecordFailureLogOptions {
  logger: AgentLogger;
  /** Epoch ms. */
  now: () => number;
  /** The interval of the summary, ms. Default 10 000. */
  intervalMs?: number;
  /** The summary's timer. Default: an unref'd `setTimeout`. */
  schedule?: Delay;
}

/** See the module comment. */
export interface RecordFailureLog {
  /** A record of `kind` for `key` (and `hook`) could not be written. */
  failed(kind: RecordKind, key: string, hook: string | undefined, error: unknown): void;
  /** Writes the summary of the interval under way, if any (the pipeline stops). */
  flush(): void;
}

const KEYS_LISTED = 20;

/** The first line of an interval (pure): the message and its fields. */
export function recordFailureLine(
  kind: RecordKind,
  key: string,
  hook: string | undefined,
  error: unknown,
): { fields: Record<string, unknown>; message: string } {
  const what = kind === 'finished' ? 'that a vote is finished (its hooks are done)' : `that hook ${hook ?? ''} succeeded for a vote`;
  return {
    fields: { key, ...(hook === undefined ? {} : { hook }), error: clippedErrorMessage(error) },
    message:
      `could not record ${what}: the record waits in memory and is written with the next write that succeeds; ` +
      'if none does before the agent stops, this vote is rewarded again at the next start',
  };
}

/** Creates the lines of one pipeline (see the module comment). */
export function createRecordFailureLog(options: RecordFailureLogOptions): RecordFailureLog {
  const { logger, now } = options;
  const intervalMs = options.intervalMs ?? 10_000;
  const schedule = options.schedule ?? unrefDelay;
  let since: number | undefined;
  let more = 0;
  let keys: string[] = [];
  let lastError = '';
  let cancel: (() => void) | undefined;

  function endInterval(): void {
    cancel?.();
    cancel = undefined;
    if (more > 0) {
      logger.warn(
        { records: more, keys, error: lastError, intervalMs },
        `${more} more record(s) of finished votes or hooks could not be written in the last ${intervalMs / 1000} s (${lastError}): ` +
          'they wait in memory for the next write that succeeds; ' +
          'if none does before the agent stops, those votes are rewarded again at the next start',
      );
    }
    since = undefined;
    more = 0;
    keys = [];
  }

  return {
    failed(kind, key, hook, error) {
      const at = now();
      if (since !== undefined && at - since >= intervalMs) endInterval();
      if (since === undefined) {
        since = at;
        const line = recordFailureLine(kind, key, hook, error);
        logger.warn(line.fields, line.message);
        return;
      }
      more += 1;
      lastError = clippedErrorMessage(error);
      if (keys.length < KEYS_LISTED) keys.push(key);
      cancel ??= schedule(endInterval, since + intervalMs - at);
    },
    flush: endInterval,
  };
}
