import type { IncomingMessage } from 'node:http';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Delay } from '../contract/timer-delay.js';
import { createLineLimiter, type IntervalSummary, type LineLimiter } from '../runtime/line-limiter.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import { settleWithin } from '../runtime/settle.js';
import type { Vote } from '../contract/vote.js';
import type { VoteSink } from '../runtime/votes.js';
import type { LegacyVoteKeys } from './legacy-votes.js';
import {
  eventFields,
  INTEGRATIONS_OFF,
  integrationReply,
  judgeDelivery,
  judgeHandshake,
  mayPassWithNewSecrets,
  receivedOf,
  recordFields,
  REPLIES,
  type EventVerdict,
  type LegacyVerdict,
  type NotReady,
  type Outcome,
  type ReceivedDelivery,
  type ReceiverRules,
  type Refusal,
  type Reply,
  type Verdict,
  type VoteVerdict,
} from './receiver-core.js';
import type { SecretSource, WebhookSecrets } from './secrets.js';
import { errorMessage } from '../errors.js';

/**
 * What the receiver does with each verdict of `receiver-core.ts`: a vote into the pipeline within
 * one deadline per delivery (204 once durably pending, also a duplicate; 503 when it cannot be
 * recorded, or not within `answerWithinMs`, and the service retries), a refusal looked at again
 * with fresh secrets, tests, integration handshakes, v0 deliveries. Every outcome is counted and
 * logged here; `receiver.ts` writes the answer.
 */

/** The state of one receiver. */
export interface ReceiverState {
  readonly rules: ReceiverRules;
  readonly secrets: readonly string[] | SecretSource | WebhookSecrets;
  readonly pipeline: VoteSink;
  readonly logger: AgentLogger;
  readonly metrics: Pick<AgentMetrics, 'webhookDeliveries'> | undefined;
  readonly now: () => number;
  readonly answerWithinMs: number;
  readonly publicUrl: string | undefined;
  readonly onDelivery: ((delivery: ReceivedDelivery) => void) | undefined;
  readonly legacyKeys: LegacyVoteKeys;
  /** Refusals (and v0 votes before the service answered), by reason: one line per reason per 10 s, then a summary. */
  readonly refusals: LineLimiter<string>;
  /** Votes answered 503 because they could not be recorded: the first line of an outage, then a summary per 10 s. */
  readonly unrecorded: UnrecordedLog;
  listeningUrl: string | undefined;
}

/** The answer to a delivery, and what `onDelivery` hears of it when it was accepted. */
export interface Answer {
  reply: Reply;
  accepted?: ReceivedDelivery;
}

const isSource = (secrets: ReceiverState['secrets']): secrets is SecretSource => !Array.isArray(secrets);

/** The secrets accepted now. */
export const currentSecrets = (s: ReceiverState): readonly string[] =>
  isSource(s.secrets) ? s.secrets.current() : (s.secrets as readonly string[]);

export function count(s: ReceiverState, outcome: Outcome): void {
  s.metrics?.webhookDeliveries.inc({ outcome });
}

/** A refusal: counted, logged at most once per reason per 10 s (a flood must not flood the log). */
export function refuse(s: ReceiverState, req: IncomingMessage, refusal: Refusal): Reply {
  count(s, refusal.outcome);
  const remote = req.socket.remoteAddress;
  if (s.refusals.take(refusal.reason, remote)) {
    const fields = { reason: refusal.reason, status: refusal.reply.status, remote };
    s.logger.warn(refusal.problem === undefined ? fields : { ...fields, problem: refusal.problem }, 'webhook delivery refused');
  }
  return refusal.reply;
}

/** Acts on `first`, the verdict of the delivery's first look. */
export async function act(s: ReceiverState, req: IncomingMessage, rawBody: Buffer, first: Verdict): Promise<Answer> {
  const verdict = mayPassWithNewSecrets(first) ? await judgeAgain(s, req, rawBody, first) : first;
  switch (verdict.kind) {
    case 'refuse':
      return { reply: refuse(s, req, verdict) };
    case 'vote':
      return record(s, verdict, [verdict.vote]);
    case 'event':
      return actOnEvent(s, req, verdict);
    case 'legacy_test':
      count(s, 'accepted');
      s.logger.info({ generation: 'v0' }, 'legacy webhook test received');
      return { reply: REPLIES.noContent, accepted: receivedOf(verdict, 'accepted') };
    case 'legacy_vote':
      return recordLegacy(s, verdict);
    case 'not_ready':
      return { reply: notReady(s, verdict) };
  }
}

/** A signature that matched no secret: a rotation may have just landed in the secret file, or it is a self-signed handshake. */
async function judgeAgain(s: ReceiverState, req: IncomingMessage, rawBody: Buffer, refused: Verdict): Promise<Verdict> {
  let verdict = refused;
  const source = isSource(s.secrets) ? s.secrets : undefined;
  if (source !== undefined && (await source.refresh())) verdict = judgeDelivery(s.rules, rawBody, req.headers, source.current(), s.now());
  if (mayPassWithNewSecrets(verdict)) verdict = judgeHandshake(s.rules, rawBody, req.headers, s.now()) ?? verdict;
  return verdict;
}

/**
 * Records `votes` within the deadline: 204 once the pipeline has them durably pending (new, or a
 * duplicate), 503 when it refuses them or has not answered within `answerWithinMs`. A record that
 * lands after its 503 stands: the service's retry is then a duplicate.
 */
async function record(s: ReceiverState, verdict: VoteVerdict | LegacyVerdict, votes: Vote[]): Promise<Answer> {
  const traceId = verdict.kind === 'vote' ? verdict.traceId : undefined;
  let ingesting: Promise<{ accepted: readonly Vote[] }>;
  try {
    ingesting = s.pipeline.ingest(votes, 'webhook', traceId === undefined ? undefined : { traceId });
  } catch (error) {
    return notRecorded(s, verdict, error);
  }
  if ((await settleWithin(ingesting, s.answerWithinMs)) === 'timeout') {
    const cause = `not recorded within ${s.answerWithinMs} ms`;
    const why = { msg: 'vote not recorded in time; answered 503 so the service retries', cause, fix: LATE_FIX };
    s.unrecorded.failed(why, recordFields(verdict));
    count(s, 'error');
    return { reply: REPLIES.notInTime };
  }
  let outcome: 'accepted' | 'duplicate';
  try {
    outcome = (await ingesting).accepted.length > 0 ? 'accepted' : 'duplicate';
  } catch (error) {
    return notRecorded(s, verdict, error);
  }
  s.unrecorded.recorded();
  count(s, outcome);
  // A new vote is logged by the pipeline (`vote received`, at info); a repeat only here, at debug.
  if (outcome === 'duplicate') {
    const fields = { ...recordFields(verdict), keys: votes.map((vote) => vote.key), outcome };
    s.logger.debug(fields, 'vote already recorded (a retry or the other road)');
  }
  return { reply: REPLIES.noContent, accepted: receivedOf(verdict, outcome) };
}

function notRecorded(s: ReceiverState, verdict: VoteVerdict | LegacyVerdict, error: unknown): Answer {
  const msg = 'could not record a webhook vote; answered 503 so the service retries';
  const why = { msg, cause: errorMessage(error), fix: fixFor(error) };
  s.unrecorded.failed(why, recordFields(verdict));
  count(s, 'error');
  return { reply: REPLIES.notRecorded };
}

async function actOnEvent(s: ReceiverState, req: IncomingMessage, verdict: EventVerdict): Promise<Answer> {
  const { event } = verdict;
  const accepted = (reply: Reply): Answer => {
    count(s, 'accepted');
    return { reply, accepted: receivedOf(verdict, 'accepted') };
  };
  const store = isSource(s.secrets) && 'addIntegration' in s.secrets ? (s.secrets as WebhookSecrets) : undefined;
  switch (event.type) {
    case 'webhook.test':
      s.logger.info({ ...eventFields(verdict), project: event.data.project.id }, 'webhook test event received');
      return accepted(REPLIES.noContent);
    case 'integration.create': {
      if (store === undefined) return { reply: refuse(s, req, INTEGRATIONS_OFF) };
      try {
        await store.addIntegration(event.data.connection_id, event.data.webhook_secret);
      } catch (error) {
        s.logger.error({ ...eventFields(verdict), err: errorMessage(error) }, 'could not store an integration secret; handshake refused');
        count(s, 'error');
        return { reply: REPLIES.secretNotStored };
      }
      const fields = { ...eventFields(verdict), connection: event.data.connection_id, project: event.data.project.id };
      s.logger.info(fields, 'integration connected; its secret is stored');
      return accepted(integrationReply(s.publicUrl ?? s.listeningUrl));
    }
    case 'integration.delete': {
      try {
        await store?.removeIntegration(event.data.connection_id);
      } catch (error) {
        s.logger.error({ ...eventFields(verdict), err: errorMessage(error) }, 'could not forget an integration secret');
        count(s, 'error');
        return { reply: REPLIES.secretNotForgotten };
      }
      s.logger.info({ ...eventFields(verdict), connection: event.data.connection_id }, 'integration disconnected; its secret is forgotten');
      return accepted(REPLIES.noContent);
    }
  }
}

/** A v0 upvote: its key needs the anchor store (see `legacy-votes.ts`), then it is recorded. */
async function recordLegacy(s: ReceiverState, verdict: LegacyVerdict & { kind: 'legacy_vote' }): Promise<Answer> {
  let made: Vote;
  try {
    made = await s.legacyKeys.voteFor(verdict.vote, verdict.projectId);
  } catch (error) {
    const msg = 'could not record a legacy vote anchor; answered 503 so the service retries';
    const why = { msg, cause: errorMessage(error), fix: fixFor(error) };
    s.unrecorded.failed(why, { generation: 'v0' });
    count(s, 'error');
    return { reply: REPLIES.anchorFailed };
  }
  return record(s, verdict, [made]);
}

/** A v0 upvote before the service answered: v0 bodies do not name the project, and its ID comes from the service. */
function notReady(s: ReceiverState, verdict: NotReady): Reply {
  count(s, 'error');
  if (s.refusals.take('legacy_no_project')) {
    const message = 'legacy v0 vote before the service answered (its project ID is not known yet): answered 503 so the service retries it';
    s.logger.warn({ generation: 'v0', status: 503 }, message);
  }
  return verdict.reply;
}

/*
 * The log of webhook votes answered 503 (not recorded: Redis down, a full or read-only disk, a
 * pipeline too slow or stopping). During an outage every delivery and every retry of the service
 * fails alike, hundreds a second on one agent, so a line each would bury the log: the first one of
 * an outage is an `error` line with its cause and the fix, the ones after it are only counted, one
 * `warn` summary per interval gives the count and the causes seen, and an `info` line says when
 * votes are recorded again. Through the agent's one limiter (`runtime/line-limiter.ts`): even a
 * recording that fails and works in turn writes at most one line of each kind per interval.
 */

/** Why a vote was not recorded: the words of the log line. */
interface Unrecorded {
  /** The line's message (`could not record a webhook vote; answered 503 so the service retries`). */
  readonly msg: string;
  /** What went wrong, in one line (an error's message: never a secret). */
  readonly cause: string;
  /** What to do about it. */
  readonly fix: string;
}

/** Made by {@link createUnrecordedLog}. */
export interface UnrecordedLog {
  /** A vote answered 503; `fields` (the delivery's) go on its line when it is the first of an outage. */
  failed(why: Unrecorded, fields: Record<string, unknown>): void;
  /** A vote was recorded: an outage under way is over. */
  recorded(): void;
  /** Writes the summary of the interval under way (the receiver stops). */
  flush(): void;
}

/** What the receiver answers 503 to every vote it cannot record says, by the error's code. */
const FIXES: Record<string, string> = {
  redis_unavailable: 'bring Redis back (state.redis.url); votes are recorded again by themselves',
  store:
    'free space on the disk of the state directory, or make it writable again (the cause names the file); ' +
    'votes are recorded again by themselves',
  votes_not_running:
    'none if the agent is stopping (the service delivers them to the agent that runs next); ' +
    'otherwise the vote pipeline did not start: see its error',
  votes_stopped: 'none: the agent is stopping, and the service delivers them to the agent that runs next',
};
const RETRIED = 'the service delivers every vote answered 503 again';

/** The fix for an error thrown while recording (by its `code`, when it has one). */
function fixFor(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';
  return `${FIXES[code] ?? 'see the cause'}; ${RETRIED}`;
}

/** The fix for a vote not recorded within the deadline. */
const LATE_FIX = `the state directory's disk or Redis answers too slowly: check its latency and load; ${RETRIED}`;

/** Options of {@link createUnrecordedLog}: one summary per `intervalMs` at most, on `schedule`. */
interface UnrecordedLogOptions {
  logger: AgentLogger;
  now: () => number;
  intervalMs: number;
  schedule: Delay;
}

/** Creates the 503 log of one receiver (see the comment above). */
export function createUnrecordedLog(options: UnrecordedLogOptions): UnrecordedLog {
  const { logger, now, intervalMs } = options;
  /** The outage under way: when it began and how many were answered 503 since. */
  let outage: { since: number; answered: number } | undefined;
  const limiter = createLineLimiter<'failed' | 'recovered'>({
    now,
    linesPerInterval: 1,
    intervalMs,
    schedule: options.schedule,
    summarise: (summary) => summariseUnrecorded(logger, summary, outage !== undefined),
  });
  return {
    failed(why, fields) {
      const first = outage === undefined;
      outage ??= { since: now(), answered: 0 };
      outage.answered += 1;
      // Only the first of an outage may have a line; even that one is counted when an outage of this interval already had one.
      if (!first) limiter.count('failed', why.cause);
      else if (limiter.take('failed', why.cause)) {
        logger.error(
          { ...fields, status: 503, err: why.cause, fix: why.fix, summaryEveryMs: intervalMs },
          `${why.msg} (the next 503s are counted: one summary per ${intervalMs / 1000} s until votes are recorded again)`,
        );
      }
    },
    recorded() {
      if (outage === undefined) return;
      const { since, answered } = outage;
      outage = undefined;
      if (!limiter.take('recovered')) return;
      logger.info(
        { answered503: answered, since: new Date(since).toISOString(), forMs: now() - since },
        `webhook votes are recorded again: ${answered} answered 503 in the ${Math.round((now() - since) / 1000)} s before ` +
          '(the service delivers them again)',
      );
    },
    flush: limiter.flush,
  };
}

function summariseUnrecorded(logger: AgentLogger, summary: IntervalSummary<'failed' | 'recovered'>, failing: boolean): void {
  const { kinds, notes, notesLeftOut, intervalMs } = summary;
  const answered = kinds.get('failed')?.total ?? 0;
  const recovered = kinds.get('recovered')?.total ?? 0;
  const causes = notesLeftOut > 0 ? [...notes, `${notesLeftOut} more`] : notes;
  const state = failing ? 'still failing' : 'recorded again since';
  logger.warn(
    {
      answered503: answered,
      loggedOneByOne: kinds.get('failed')?.written ?? 0,
      causes,
      ...(recovered > 0 ? { recoveredTimes: recovered } : {}),
      failing,
      intervalMs,
    },
    `webhook votes answered 503 in the last ${intervalMs / 1000} s: ${answered} ` +
      `(causes: ${causes.join('; ') || 'none named'}); ${state}; the service delivers them again`,
  );
}
