import {
  ApiError,
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  RateLimitError,
  UnauthorizedError,
  UnprocessableEntityError,
} from '../api/errors.js';
import { ListingAgentError, ValidationError } from '../errors.js';
import type { Sample } from './samples.js';

/**
 * The pure policy of a failed post: how long to wait, whether a retry timer is needed, and what a
 * refused batch means for the buffer. The poster applies it; nothing here has a clock or a timer.
 */

/** The token's project cannot take server and shard counts (it is not a Discord bot). */
export class ProjectKindError extends ListingAgentError {
  constructor(platform: string, type: string) {
    super(
      'stats_project_kind',
      `the project of service.token ` +
        `is ${platform}/${type}: stats posts a Discord bot's server and shard counts, which only a discord bot project takes; check ` +
        `service.token`,
    );
  }
}

/** What kind of failure a post met. */
export type FailureKind =
  /** 429: wait for the service's Retry-After. */
  | 'rate_limited'
  /** 5xx, timeout, network, anything unexpected: back off and retry. */
  | 'unavailable'
  /**
   * 401, 403 (and 400/404 on `@me`: the token's project is gone or the token is malformed; a
   * project that is not a bot): a person must fix the token.
   */
  | 'refused'
  /** 422 (or the client's own check): the payload is wrong; retrying it as it is cannot help. */
  | 'rejected';

/** What to do after a failure. */
export interface FailureDecision {
  kind: FailureKind;
  /** How long to wait before the next try, ms. */
  retryInMs: number;
  /**
   * True: arm a retry timer at `retryInMs` and hold regular posts back until then (429, outage).
   * False: the next regular post is the retry (token refused, payload rejected).
   */
  retryTimer: boolean;
  /** Stable text of the condition, so that a log line is written once per change of condition. */
  condition: string;
}

/** Options of {@link decideFailure}. */
export interface FailurePolicy {
  /** Failures in a row of this target, this one included (from 1). */
  failures: number;
  /** The posting interval: the cap of the backoff and the pace of slow retries. */
  intervalMs: number;
  /** The first backoff wait. Default 30 s (the client already retried within the call). */
  backoffBaseMs?: number;
}

/** The default first backoff wait after a 5xx or network failure (the client retried already). */
export const DEFAULT_BACKOFF_BASE_MS = 30_000;

/** Exponential backoff: base, 2 x base, 4 x base, ..., capped at the interval. */
function backoffMs(failures: number, intervalMs: number, baseMs: number = DEFAULT_BACKOFF_BASE_MS): number {
  const exponent = Math.min(Math.max(0, failures - 1), 30);
  return Math.min(intervalMs, baseMs * 2 ** exponent);
}

/** Decides what happens after `error`. */
export function decideFailure(error: unknown, policy: FailurePolicy): FailureDecision {
  const backoff = () => backoffMs(policy.failures, policy.intervalMs, policy.backoffBaseMs);
  if (error instanceof RateLimitError) {
    return { kind: 'rate_limited', retryInMs: error.retryAfterMs ?? backoff(), retryTimer: true, condition: 'rate limited (429)' };
  }
  if (
    error instanceof UnauthorizedError ||
    error instanceof ForbiddenError ||
    error instanceof NotFoundError ||
    error instanceof BadRequestError
  ) {
    return { kind: 'refused', retryInMs: policy.intervalMs, retryTimer: false, condition: `refused (${error.status})` };
  }
  if (error instanceof ProjectKindError) {
    return { kind: 'refused', retryInMs: policy.intervalMs, retryTimer: false, condition: 'refused (project kind)' };
  }
  if (error instanceof UnprocessableEntityError || (error instanceof ValidationError && error.subject === 'request')) {
    return { kind: 'rejected', retryInMs: policy.intervalMs, retryTimer: false, condition: 'payload rejected' };
  }
  const what = error instanceof ApiError ? `${error.status}` : error instanceof Error && 'code' in error ? String(error.code) : 'error';
  return { kind: 'unavailable', retryInMs: backoff(), retryTimer: true, condition: `unavailable (${what})` };
}

/** The fix a person should make for a refused token, by status. */
export function refusedHint(error: unknown): string {
  if (error instanceof ProjectKindError) return error.message;
  if (error instanceof NotFoundError) return "the service refused the project token: its project no longer exists; check service.token";
  return 'the service refused the project token: check service.token (the project token from the project\'s Integrations and API settings)';
}

/** Where a refused batch went wrong, as the service or the client named it. */
interface NamedProblem {
  index: number;
  /** The field below the entry (`timestamp`, `metrics.server_count`), or '' for the entry itself. */
  field: string;
}

const ENTRY_PATH = /data\[(\d+)\](?:\.([\w.[\]]+))?/g;

function namedProblems(error: unknown): NamedProblem[] {
  const texts: string[] = [];
  if (error instanceof UnprocessableEntityError) texts.push(error.problem?.detail ?? error.message);
  else if (error instanceof ValidationError) texts.push(...error.issues.map((issue) => issue.path));
  const found: NamedProblem[] = [];
  for (const text of texts) {
    for (const match of text.matchAll(ENTRY_PATH)) found.push({ index: Number(match[1]), field: match[2] ?? '' });
  }
  return found;
}

/** What a refused batch means for the buffer. */
export interface RejectionPlan {
  /** Samples to drop from the buffer. */
  drop: Sample[];
  /** True when the refusal is about timestamps ahead of the service's clock (our clock is ahead). */
  clockAhead: boolean;
  /** One sentence for the log. */
  summary: string;
}

/**
 * Which of the `sent` samples (in request order, which is the service's application order: every
 * entry is timestamped and the timestamps ascend) a refused batch costs.
 *
 * - A 422 from the service: processing stopped at the first bad entry, and every entry before it
 *   was applied. The applied ones are dropped (sending them again would only duplicate them). The
 *   bad entry is dropped too when its payload is wrong (it can never be accepted), but kept when
 *   only its timestamp is too far ahead: our clock is ahead of the service's, and the same
 *   timestamp becomes acceptable as the service's clock moves on.
 * - The client's own check (nothing was sent): only the entries it names with a payload problem
 *   are dropped.
 * - Nothing named (the project takes no bot metrics, an unreadable answer): the whole batch is
 *   dropped, since sending it again cannot succeed, and the buffer must not grow for ever.
 */
export function planRejection(error: unknown, sent: readonly Sample[]): RejectionPlan {
  const problems = namedProblems(error).filter((p) => p.index < sent.length);
  if (problems.length === 0) {
    return { drop: [...sent], clockAhead: false, summary: `dropped the ${sent.length} entries of the refused batch (no entry was named)` };
  }
  const isTimestamp = (p: NamedProblem) => p.field === 'timestamp';
  if (error instanceof UnprocessableEntityError) {
    const first = Math.min(...problems.map((p) => p.index));
    const atFirst = problems.filter((p) => p.index === first);
    const clockAhead = atFirst.every(isTimestamp);
    const drop = sent.slice(0, clockAhead ? first : first + 1);
    const applied = first === 0 ? '' : ` (the ${first} before it were applied)`;
    const summary = clockAhead
      ? `entry ${first} is too far in the future for the service${applied}; it is kept and sent again later`
      : `entry ${first} was refused and dropped${applied}`;
    return { drop, clockAhead, summary };
  }
  const badPayload = new Set(problems.filter((p) => !isTimestamp(p)).map((p) => p.index));
  const drop = sent.filter((_, index) => badPayload.has(index));
  return {
    drop,
    clockAhead: problems.some(isTimestamp),
    summary:
      drop.length > 0 ? `dropped ${drop.length} entries the client refused to send` : 'kept every entry (only timestamps were refused)',
  };
}
