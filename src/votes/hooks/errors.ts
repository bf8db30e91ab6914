import { redact } from '../../api/redact.js';
import { causeMessage, ListingAgentError } from '../../errors.js';

/** Why a hook call failed. */
export type VoteHookFailureReason =
  /** http: the receiver answered, but not with a 2xx. */
  | 'status'
  /** http or exec: no answer / no exit within the hook's timeout. */
  | 'timeout'
  /** http: the request never got an answer (refused, reset, DNS). */
  | 'network'
  /** The call's signal was aborted from outside (the agent is stopping). */
  | 'aborted'
  /** exec: the command exited with a non-zero code. */
  | 'exit'
  /** exec: the command was ended by a signal it did not get from the hook. */
  | 'signal'
  /** exec: the command could not be started (not found, not executable). */
  | 'spawn'
  /** in-process: a `vote` listener threw or rejected. */
  | 'listener'
  /** in-process: no listener is attached to the event (every one was removed after the agent started). */
  | 'no_listener';

/** Details of a {@link VoteHookError}, as far as they apply. */
export interface VoteHookErrorDetails {
  cause?: unknown;
  /** http: the answer's status. */
  status?: number;
  /** exec: the exit code (null when a signal ended it). */
  exitCode?: number | null;
  /** exec: the signal that ended it. */
  signal?: string | null;
}

/**
 * A reward hook call failed. Code `vote_hook_failed`; `reason` says how, `hook` names the hook. The
 * message names the hook and what happened, and never carries the hook's secret or
 * authorization, so it can go to logs and dead letters as it is.
 */
export class VoteHookError extends ListingAgentError {
  readonly hook: string;
  readonly reason: VoteHookFailureReason;
  readonly status: number | undefined;
  readonly exitCode: number | null | undefined;
  readonly signal: string | null | undefined;

  constructor(hook: string, reason: VoteHookFailureReason, message: string, details: VoteHookErrorDetails = {}) {
    super('vote_hook_failed', `hook "${hook}": ${message}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.hook = hook;
    this.reason = reason;
    this.status = details.status;
    this.exitCode = details.exitCode;
    this.signal = details.signal;
  }
}

/**
 * A {@link VoteHookError} whose message is scrubbed of `secrets` first: every credential form of
 * the hook (its authorization, secret, URL) and of the agent's configuration. What an answer or a
 * command's output repeats of them never reaches a log line, a dead letter or the status page.
 */
export function hookError(
  hook: string,
  reason: VoteHookFailureReason,
  message: string,
  secrets: readonly string[],
  details: VoteHookErrorDetails = {},
): VoteHookError {
  return new VoteHookError(hook, reason, redact(message, secrets), details);
}

/** An error as one short line: {@link causeMessage}, on one line, cut to 300 characters. */
export function errorLine(error: unknown): string {
  return oneLine(causeMessage(error), 300);
}

/** `text` on one line (runs of whitespace made one space), cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The defaults of every hook, matching the `votes.hooks[]` config defaults. */
export const HOOK_DEFAULTS = {
  /** How long one call may take: 10 s. */
  timeoutMs: 10_000,
  /** Retries after a failure before the vote is dead-lettered for the hook: 5. */
  retries: 5,
} as const;
