import type { IncomingMessage } from 'node:http';
import type { Vote } from '../runtime/votes.js';
import {
  eventFields,
  INTEGRATIONS_OFF,
  integrationReply,
  judgeDelivery,
  judgeHandshake,
  mayPassWithNewSecrets,
  receivedOf,
  REPLIES,
  type EventVerdict,
  type LegacyVerdict,
  type NotReady,
  type Verdict,
  type VoteVerdict,
} from './receiver-core.js';
import type { Reply } from './receiver-http.js';
import { record } from './receiver-record.js';
import { fixFor } from './receiver-unrecorded.js';
import { count, errorText, refreshable, refuse, secretStore, type ReceiverState } from './receiver-state.js';
import type { ReceivedDelivery } from './receiver-types.js';

/**
 * What the receiver does with every verdict but the hot one (a `vote.create` verified at the first
 * try, which `receiver.ts` records without a promise of its own): a refusal looked at again with
 * fresh secrets, tests, integration handshakes, v0 deliveries.
 */

/** The answer to a delivery, and what `onDelivery` hears of it when it was accepted. */
export interface Answer {
  reply: Reply;
  accepted?: ReceivedDelivery;
}

/** Acts on `first`, the verdict of the delivery's first look. */
export async function act(s: ReceiverState, req: IncomingMessage, rawBody: Buffer, first: Verdict): Promise<Answer> {
  const verdict = mayPassWithNewSecrets(first) ? await judgeAgain(s, req, rawBody, first) : first;
  switch (verdict.kind) {
    case 'refuse':
      return { reply: refuse(s, req, verdict) };
    case 'vote':
      return recordAnswer(s, verdict, [verdict.vote]);
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
  const source = refreshable(s);
  if (source !== undefined && (await source.refresh())) verdict = judgeDelivery(s.rules, rawBody, req.headers, source.current(), s.now());
  if (mayPassWithNewSecrets(verdict)) verdict = judgeHandshake(s.rules, rawBody, req.headers, s.now()) ?? verdict;
  return verdict;
}

async function recordAnswer(s: ReceiverState, verdict: VoteVerdict | LegacyVerdict, votes: Vote[]): Promise<Answer> {
  const { reply, outcome } = await record(s, verdict, votes);
  return outcome === 'error' ? { reply } : { reply, accepted: receivedOf(verdict, outcome) };
}

async function actOnEvent(s: ReceiverState, req: IncomingMessage, verdict: EventVerdict): Promise<Answer> {
  const { event } = verdict;
  const accepted = (reply: Reply): Answer => {
    count(s, 'accepted');
    return { reply, accepted: receivedOf(verdict, 'accepted') };
  };
  switch (event.type) {
    case 'webhook.test':
      s.logger.info({ ...eventFields(verdict), project: event.data.project.id }, 'webhook test event received');
      return accepted(REPLIES.noContent);
    case 'integration.create': {
      const store = secretStore(s);
      if (store === undefined) return { reply: refuse(s, req, INTEGRATIONS_OFF) };
      try {
        await store.addIntegration(event.data.connection_id, event.data.webhook_secret);
      } catch (error) {
        s.logger.error({ ...eventFields(verdict), err: errorText(error) }, 'could not store an integration secret; handshake refused');
        count(s, 'error');
        return { reply: REPLIES.secretNotStored };
      }
      s.logger.info({ ...eventFields(verdict), connection: event.data.connection_id, project: event.data.project.id }, 'integration connected; its secret is stored');
      return accepted(integrationReply(s.publicUrl ?? s.listeningUrl));
    }
    case 'integration.delete': {
      const store = secretStore(s);
      if (store !== undefined) {
        try {
          await store.removeIntegration(event.data.connection_id);
        } catch (error) {
          s.logger.error({ ...eventFields(verdict), err: errorText(error) }, 'could not forget an integration secret');
          count(s, 'error');
          return { reply: REPLIES.secretNotForgotten };
        }
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
    s.unrecorded.failed({ msg: 'could not record a legacy vote anchor; answered 503 so the service retries', cause: errorText(error), fix: fixFor(error) }, { generation: 'v0' });
    count(s, 'error');
    return { reply: REPLIES.anchorFailed };
  }
  return recordAnswer(s, verdict, [made]);
}

/** A v0 upvote before the service answered: v0 bodies do not name the project, and its ID comes from the service. */
function notReady(s: ReceiverState, verdict: NotReady): Reply {
  count(s, 'error');
  if (s.refusals.take('legacy_no_project')) {
    s.logger.warn({ generation: 'v0', status: 503 }, 'legacy v0 vote before the service answered (its project ID is not known yet): answered 503 so the service retries it');
  }
  return verdict.reply;
}
