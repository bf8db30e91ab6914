import type { IncomingMessage, ServerResponse } from 'node:http';
import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import type { IntervalSummary, LineLimiter } from '../runtime/line-limiter.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { Vote, VoteSink } from '../runtime/votes.js';
import type { LateWatch, Watched } from './late-watch.js';
import type { LegacyVoteKeys } from './legacy-votes.js';
import type { LegacyVerdict, Outcome, ReceiverRules, RecordOutcome, Refusal, VoteVerdict } from './receiver-core.js';
import { REPLIES, receivedOf } from './receiver-core.js';
import { send, type Reply } from './receiver-http.js';
import type { ReceivedDelivery, WebhookReceiverOptions } from './receiver-types.js';
import type { UnrecordedLog } from './receiver-unrecorded.js';
import type { SecretSource, WebhookSecrets } from './secrets.js';

/**
 * The webhook receiver's state, one plain object per receiver, and the small acts every path of
 * it shares (count, refuse, answer). The receiver's functions take it as their first argument, so
 * a delivery allocates no closure over it.
 */

/** One vote on its way into the pipeline: all its answer needs, in one object. */
export interface Recording {
  readonly verdict: VoteVerdict | LegacyVerdict;
  readonly votes: Vote[];
  /** The request and its response, when the answer is written from the recording (the hot path). */
  readonly req: IncomingMessage | undefined;
  readonly res: ServerResponse | undefined;
  /** Told once, with `reply` and `outcome` set: the turn batch of the hot path, or a promise's resolve. */
  readonly answer: (recording: Recording) => void;
  watched: Watched | undefined;
  reply: Reply;
  outcome: RecordOutcome;
}

/** The state of one receiver. */
export interface ReceiverState {
  readonly rules: ReceiverRules;
  readonly secrets: WebhookReceiverOptions['secrets'];
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
  /** One labels object per outcome, made once (a counter call per delivery need not allocate). */
  readonly labelsOf: Map<Outcome, { outcome: Outcome }>;
  /** Recordings in flight, each with the moment it is late (one coarse timer for all). */
  readonly lateWatch: LateWatch<Recording>;
  /** Answers recorded votes together, once per turn of the event loop (see `createTurnBatch`). */
  readonly finishSoon: (recording: Recording) => void;
  /** Whether a debug line would be written: not built at all otherwise (a line per vote at thousands a second). */
  readonly debugOn: () => boolean;
  listeningUrl: string | undefined;
}

export const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

const isSource = (secrets: WebhookReceiverOptions['secrets']): secrets is SecretSource => !Array.isArray(secrets);

/** The secrets a {@link SecretSource} can refresh, or undefined for a fixed list. */
export const refreshable = (s: ReceiverState): SecretSource | undefined => (isSource(s.secrets) ? s.secrets : undefined);

/** The secret store of integration handshakes, or undefined when the secrets cannot store. */
export const secretStore = (s: ReceiverState): WebhookSecrets | undefined => (isSource(s.secrets) && 'addIntegration' in s.secrets ? (s.secrets as WebhookSecrets) : undefined);

/** The secrets accepted now. */
export const currentSecrets = (s: ReceiverState): readonly string[] => (isSource(s.secrets) ? s.secrets.current() : s.secrets);

/** Whether `logger` writes debug lines (a silent or unknown logger: asked once, as pino is). */
export function debugCheck(logger: AgentLogger): () => boolean {
  const levelCheck = (logger as { isLevelEnabled?: unknown }).isLevelEnabled;
  return () => logger !== silentLogger && (typeof levelCheck !== 'function' || (levelCheck as (level: string) => boolean).call(logger, 'debug'));
}

export function count(s: ReceiverState, outcome: Outcome): void {
  if (s.metrics === undefined) return;
  let labels = s.labelsOf.get(outcome);
  if (labels === undefined) s.labelsOf.set(outcome, (labels = { outcome }));
  s.metrics.webhookDeliveries.inc(labels);
}

/** A refusal: counted, logged at most once per reason per 10 s (a flood must not flood the log). */
export function refuse(s: ReceiverState, req: IncomingMessage, refusal: Refusal): Reply {
  count(s, refusal.outcome);
  const remote = req.socket.remoteAddress;
  if (s.refusals.take(refusal.reason, remote)) s.logger.warn({ reason: refusal.reason, status: refusal.reply.status, remote }, 'webhook delivery refused');
  return refusal.reply;
}

/** The summary of an interval's refusals past the first of each reason (`summarise` of `refusals`). */
export function refusalSummary(logger: AgentLogger, { kinds, notes, notesLeftOut, intervalMs }: IntervalSummary<string>): void {
  const byReason: Record<string, number> = {};
  let written = 0;
  for (const [reason, seen] of kinds) {
    byReason[reason] = seen.total;
    written += seen.written;
  }
  const words = Object.entries(byReason).map(([reason, total]) => `${total} ${reason}`);
  logger.warn(
    { refused: byReason, loggedOneByOne: written, remotes: notesLeftOut > 0 ? [...notes, `${notesLeftOut} more`] : notes, intervalMs },
    `webhook deliveries refused in the last ${intervalMs / 1000} s: ${words.join(', ')} (the first of each reason was logged)`,
  );
}

/** Answers, then tells `onDelivery` of an accepted delivery. */
export function finish(s: ReceiverState, req: IncomingMessage, res: ServerResponse, reply: Reply, accepted: ReceivedDelivery | undefined): void {
  send(req, res, reply);
  if (accepted !== undefined && s.onDelivery) {
    try {
      s.onDelivery(accepted);
    } catch (error) {
      s.logger.warn({ err: errorText(error) }, 'onDelivery threw');
    }
  }
}

/** {@link finish} for a recording of the hot path (what `onDelivery` hears is built only when someone listens). */
export function finishRecording(s: ReceiverState, recording: Recording): void {
  const { req, res, outcome } = recording;
  if (req === undefined || res === undefined) return;
  finish(s, req, res, recording.reply, outcome !== 'error' && s.onDelivery ? receivedOf(recording.verdict, outcome) : undefined);
}

/** Nothing here should throw; if it does, the sender gets a 500 and retries, and we stay up. */
export function failed(s: ReceiverState, req: IncomingMessage, res: ServerResponse, error: unknown): void {
  s.logger.error({ err: errorText(error) }, 'webhook request failed');
  count(s, 'error');
  send(req, res, REPLIES.internalError);
}
