import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IngestResult, Vote } from '../runtime/votes.js';
import { recordFields, REPLIES, type LegacyVerdict, type RecordOutcome, type VoteVerdict } from './receiver-core.js';
import type { Reply } from './receiver-http.js';
import { count, errorText, type ReceiverState, type Recording } from './receiver-state.js';
import { fixFor, LATE_FIX } from './receiver-unrecorded.js';

/**
 * Votes into the pipeline within the deadline: answered 204 once durably pending (accepted, or a
 * duplicate), 503 when the pipeline cannot (stopped, disk full) or not within `answerWithinMs`,
 * so the service retries. One {@link Recording} per delivery carries everything; the pipeline's
 * promise gets the only two closures.
 */

/** A recording not started yet; `answer` hears it once, with its reply and outcome. */
export function newRecording(
  verdict: VoteVerdict | LegacyVerdict,
  votes: Vote[],
  req: IncomingMessage | undefined,
  res: ServerResponse | undefined,
  answer: (recording: Recording) => void,
): Recording {
  return { verdict, votes, req, res, answer, watched: undefined, reply: REPLIES.noContent, outcome: 'error' };
}

function settle(recording: Recording, reply: Reply, outcome: RecordOutcome): void {
  recording.reply = reply;
  recording.outcome = outcome;
  recording.answer(recording);
}

/** Records `recording.votes`, then tells `recording.answer` once. */
export function recordThen(s: ReceiverState, recording: Recording): void {
  recording.watched = s.lateWatch.add(recording);
  const { verdict } = recording;
  const traceId = verdict.kind === 'vote' ? verdict.traceId : undefined;
  let ingesting: Promise<IngestResult>;
  try {
    ingesting = s.pipeline.ingest(recording.votes, 'webhook', traceId === undefined ? undefined : { traceId });
  } catch (error) {
    notRecorded(s, recording, error);
    return;
  }
  ingesting.then(
    (result) => recorded(s, recording, result),
    (error: unknown) => notRecorded(s, recording, error),
  );
}

/** {@link recordThen} as a promise, for the paths that are not the hot one. */
export function record(s: ReceiverState, verdict: VoteVerdict | LegacyVerdict, votes: Vote[]): Promise<Recording> {
  return new Promise((resolve) => recordThen(s, newRecording(verdict, votes, undefined, undefined, resolve)));
}

/** The late watch's answer to a recording still in flight at the deadline. */
export function answerLate(s: ReceiverState, recording: Recording): void {
  // Not a lie either way: if the record lands later, the retry is answered as a duplicate.
  s.unrecorded.failed({ msg: 'vote not recorded in time; answered 503 so the service retries', cause: `not recorded within ${s.answerWithinMs} ms`, fix: LATE_FIX }, recordFields(recording.verdict));
  count(s, 'error');
  settle(recording, REPLIES.notInTime, 'error');
}

function notRecorded(s: ReceiverState, recording: Recording, error: unknown): void {
  if (!s.lateWatch.settle(recording.watched!)) return;
  s.unrecorded.failed({ msg: 'could not record a webhook vote; answered 503 so the service retries', cause: errorText(error), fix: fixFor(error) }, recordFields(recording.verdict));
  count(s, 'error');
  settle(recording, REPLIES.notRecorded, 'error');
}

function recorded(s: ReceiverState, recording: Recording, result: IngestResult): void {
  let outcome: 'accepted' | 'duplicate';
  try {
    outcome = result.accepted.length > 0 ? 'accepted' : 'duplicate';
  } catch (error) {
    notRecorded(s, recording, error);
    return;
  }
  if (!s.lateWatch.settle(recording.watched!)) return;
  if (s.unrecorded.failing) s.unrecorded.recorded();
  count(s, outcome);
  // A new vote is logged by the pipeline (`vote received`, at info); a repeat only here, at debug.
  if (outcome === 'duplicate' && s.debugOn()) {
    s.logger.debug({ ...recordFields(recording.verdict), keys: recording.votes.map((v) => v.key), outcome }, 'vote already recorded (a retry or the other road)');
  }
  settle(recording, REPLIES.noContent, outcome);
}
