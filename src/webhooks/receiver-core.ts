import type { IncomingHttpHeaders } from 'node:http';
import { SIGNATURE_HEADER } from '../contract/limits.js';
import { projectProblem, type VoteFieldProblem } from '../contract/vote-fields.js';
import { voteKey, type Vote } from '../contract/vote.js';
import type { WebhookDeliveriesLabels } from '../runtime/metrics.js';
import type { IntegrationCreateData, IntegrationDeleteData, LegacyVote, VoteCreateData, WebhookEvent, WebhookTestData } from './events.js';
import {
  parseLegacyVote,
  verifyDelivery,
  verifyLegacyAuthorization,
  type VerifyFailure,
  type VerifyResult,
  type WebhookHeaders,
} from './verify.js';

/**
 * The webhook receiver's decisions, apart from its sockets: from a delivery's bytes, its headers,
 * the secrets accepted now and the clock, to a {@link Verdict} (what to answer, and the vote to
 * record). Nothing here reads a socket, starts a timer, logs or counts: `receiver-record.ts` acts
 * on the verdicts and `receiver.ts` (node:http) writes the answers. The framework adapters verify
 * through {@link verifySignedDelivery}, the way octokit/webhooks keeps `verify` apart from its
 * middleware.
 */

/** What the receiver answers. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Close the connection after the answer without reading what is left of the body. */
  close?: boolean;
}

/** A delivery the receiver accepted, as its `onDelivery` option hears it (after the answer). */
export type ReceivedDelivery =
  | { generation: 'v1'; event: WebhookEvent; traceId: string | undefined; outcome: 'accepted' | 'duplicate' }
  | { generation: 'v0'; vote: LegacyVote; outcome: 'accepted' | 'duplicate' };

/** The counter label of a delivery (`listing_agent_webhook_deliveries_total{outcome}`). */
export type Outcome = WebhookDeliveriesLabels['outcome'];

/** A delivery refused: counted under `outcome`, logged with `reason` (and `problem`), answered `reply`. */
export interface Refusal {
  readonly kind: 'refuse';
  readonly outcome: Outcome;
  readonly reason: string;
  readonly reply: Reply;
  /** For a vote refused for its fields or its project: the field and why, for the log line. */
  readonly problem?: string;
}

/** A verified v1 `vote.create`, with the vote it records. */
export interface VoteVerdict {
  readonly kind: 'vote';
  readonly event: { type: 'vote.create'; data: VoteCreateData };
  readonly traceId: string | undefined;
  readonly vote: Vote;
}

/** A verified v1 event that is not a vote: a test, or an integration connected or disconnected. */
export interface EventVerdict {
  readonly kind: 'event';
  readonly event:
    | { type: 'webhook.test'; data: WebhookTestData }
    | { type: 'integration.create'; data: IntegrationCreateData }
    | { type: 'integration.delete'; data: IntegrationDeleteData };
  readonly traceId: string | undefined;
}

/** An authorized v0 delivery: a test, or an upvote for `projectId` (its key needs the anchor store). */
export type LegacyVerdict =
  | { readonly kind: 'legacy_test'; readonly vote: LegacyVote }
  | { readonly kind: 'legacy_vote'; readonly vote: LegacyVote; readonly projectId: string };

/** A v0 upvote before the service answered: its project is not known yet (answered 503, retried). */
export interface NotReady {
  readonly kind: 'not_ready';
  readonly reply: Reply;
}

/** What to do with one delivery. */
export type Verdict = Refusal | VoteVerdict | EventVerdict | LegacyVerdict | NotReady;

/** The rules the verdicts follow, fixed when the receiver is made. */
export interface ReceiverRules {
  /** The one path deliveries go to. */
  readonly path: string;
  readonly maxBodyBytes: number;
  /** The v0 `Authorization` secret; undefined: v0 deliveries are not taken. */
  readonly legacyAuthorization: string | undefined;
  readonly toleranceSeconds: number | undefined;
  /** Accept an `integration.create` signed with the secret it carries (the emulator's handshake). */
  readonly acceptSelfSignedHandshakes: boolean;
  /**
   * The agent's project (service ID): v0 votes, which do not name it, are filed under it, and a
   * signed vote for another project is refused; undefined until the service answered.
   */
  readonly projectId: () => string | undefined;
  /**
   * The agent's project's platform ID (the project token's `id`): a v0 vote for another bot or
   * guild is refused, and so is a signed vote for another project while `projectId` is not known.
   */
  readonly projectPlatformId: string | undefined;
  /** The refusals whose words name these rules, made once. */
  readonly notFound: Refusal;
  readonly tooLarge: Refusal;
}

/** Options of {@link receiverRules}: the receiver's options, defaults applied by the caller. */
export interface ReceiverRulesOptions {
  path: string;
  maxBodyBytes: number;
  legacyAuthorization?: string | undefined;
  toleranceSeconds?: number | undefined;
  acceptSelfSignedHandshakes?: boolean | undefined;
  projectId?: (() => string | undefined) | undefined;
  projectPlatformId?: string | undefined;
}

/** The answers the receiver gives. */
export const REPLIES = {
  noContent: Object.freeze({ status: 204 }),
  notInTime: Object.freeze({ status: 503, body: { error: 'not recorded in time, retry' }, headers: { 'retry-after': '1' } }),
  notRecorded: Object.freeze({ status: 503, body: { error: 'not recorded, retry' }, headers: { 'retry-after': '1' } }),
  /** An anchor of a v0 vote that could not be stored (no `retry-after`: the service's own pace). */
  anchorFailed: Object.freeze({ status: 503, body: { error: 'not recorded, retry' } }),
  notReady: Object.freeze({ status: 503, body: { error: 'not ready, retry' }, headers: { 'retry-after': '5' } }),
  gone: Object.freeze({ status: 400 }),
  internalError: Object.freeze({ status: 500, body: { error: 'internal error' } }),
  secretNotStored: Object.freeze({ status: 503, body: { error: 'could not store the secret' } }),
  secretNotForgotten: Object.freeze({ status: 503, body: { error: 'could not forget the secret' } }),
} satisfies Record<string, Reply>;

const refusal = (outcome: Outcome, reason: string, reply: Reply, problem?: string): Refusal =>
  Object.freeze({ kind: 'refuse', outcome, reason, reply: Object.freeze(reply), ...(problem === undefined ? {} : { problem }) });

/**
 * A vote refused for a field (`bad_vote_id`, `bad_vote_weight`, `bad_vote_time`: malformed) or its
 * project (`other_project`: rejected), answered 400, final for the service (a 4xx is never
 * retried): the same vote would be refused again. The body names the field, never its value.
 */
function voteRefusal(problem: VoteFieldProblem, prefix = ''): Refusal {
  const outcome = problem.reason === 'other_project' ? 'rejected' : 'malformed';
  const error = problem.reason === 'other_project' ? 'other_project' : 'invalid_vote';
  return refusal(outcome, `${prefix}${problem.reason}`, { status: 400, body: { error, field: problem.field } }, problem.message);
}

const OUTCOME_OF: Record<VerifyFailure, Outcome> = {
  missing_signature: 'bad_signature',
  malformed_signature: 'bad_signature',
  bad_signature: 'bad_signature',
  stale: 'stale',
  future: 'stale',
  malformed_body: 'malformed',
  unknown_event: 'malformed',
  invalid_vote: 'malformed',
};

/** A refused v1 delivery: the status `verifyDelivery` gave, and the reason as the body of a 400. */
const v1Refusal = (reason: VerifyFailure, status: number): Refusal =>
  refusal(OUTCOME_OF[reason], reason, status === 400 ? { status, body: { error: reason } } : { status });

/** The refusal of each verification failure at its usual status, made once. */
const V1_REFUSALS = Object.fromEntries(
  (Object.keys(OUTCOME_OF) as VerifyFailure[]).map((reason) => {
    const status = reason === 'malformed_body' || reason === 'unknown_event' || reason === 'invalid_vote' ? 400 : 401;
    return [reason, v1Refusal(reason, status)];
  }),
) as Record<VerifyFailure, Refusal>;

const METHOD_NOT_ALLOWED = refusal('rejected', 'method', {
  status: 405,
  body: { error: 'only POST is allowed' },
  headers: { allow: 'POST' },
  close: true,
});
const LEGACY_UNAUTHORIZED = refusal('bad_signature', 'legacy_authorization', { status: 401 });
const LEGACY_MALFORMED = {
  malformed_body: refusal('malformed', 'legacy_malformed_body', { status: 400, body: { error: 'malformed_body' } }),
  unknown_event: refusal('malformed', 'legacy_unknown_event', { status: 400, body: { error: 'unknown_event' } }),
  invalid_vote: refusal('malformed', 'legacy_invalid_vote', { status: 400, body: { error: 'invalid_vote' } }),
};
/** An `integration.create` to a receiver with no store for secrets. */
export const INTEGRATIONS_OFF = refusal('rejected', 'integrations_off', {
  status: 400,
  body: { error: 'this receiver does not take integrations' },
});
const NOT_READY: NotReady = Object.freeze({ kind: 'not_ready', reply: REPLIES.notReady });

/** The rules of a receiver, with the refusals that name them. */
export function receiverRules(options: ReceiverRulesOptions): ReceiverRules {
  const { path, maxBodyBytes } = options;
  return {
    path,
    maxBodyBytes,
    legacyAuthorization: options.legacyAuthorization,
    toleranceSeconds: options.toleranceSeconds,
    acceptSelfSignedHandshakes: options.acceptSelfSignedHandshakes === true,
    projectId: options.projectId ?? (() => undefined),
    projectPlatformId: options.projectPlatformId,
    notFound: refusal('rejected', 'not_found', { status: 404, body: { error: `not found: deliveries go to POST ${path}` }, close: true }),
    tooLarge: refusal('too_large', 'too_large', {
      status: 413,
      body: { error: `the body is larger than ${maxBodyBytes} bytes` },
      close: true,
    }),
  };
}

/** The request's path without its query or fragment. */
export function pathOfUrl(url: string | undefined): string {
  const text = url ?? '/';
  const query = text.indexOf('?');
  const fragment = text.indexOf('#');
  const cut = query < 0 ? fragment : fragment < 0 ? query : Math.min(query, fragment);
  return cut < 0 ? text : text.slice(0, cut);
}

/** Before the body is read: a request to another path (404) or with another method (405) is refused. */
export function judgeRequest(rules: ReceiverRules, method: string | undefined, url: string | undefined): Refusal | undefined {
  if (url !== rules.path && pathOfUrl(url) !== rules.path) return rules.notFound;
  if (method !== 'POST') return METHOD_NOT_ALLOWED;
  return undefined;
}

/**
 * `verifyDelivery` with the secrets and clock of this moment and a tolerance (default 300 s): the
 * one verification of signed deliveries, shared by the receiver and the framework adapters.
 */
export function verifySignedDelivery(
  rawBody: Uint8Array | string,
  headers: WebhookHeaders,
  secrets: readonly string[],
  now: number,
  toleranceSeconds: number | undefined,
): VerifyResult {
  const delivery = { rawBody, headers, secrets, now };
  return verifyDelivery(toleranceSeconds === undefined ? delivery : { ...delivery, toleranceSeconds });
}

/** The vote of a `vote.create`: keyed like the poller's, so one vote on both roads fires once. */
function voteFromEvent(data: VoteCreateData): Vote {
  const createdMs = Date.parse(data.created_at);
  return {
    key: voteKey(data.user.id, createdMs),
    userId: data.user.id,
    platformId: data.user.platform_id,
    projectId: data.project.id,
    weight: data.weight,
    // Not a date: `toISOString` throws a RangeError (the event check lets none through).
    createdAt: new Date(createdMs).toISOString(),
    expiresAt: new Date(Date.parse(data.expires_at)).toISOString(),
    road: 'webhook',
    voteId: data.id,
    user: { name: data.user.name, avatarUrl: data.user.avatar_url },
  };
}

/**
 * Whether a vote is for the agent's project: its service ID once the service answered, before
 * that its platform ID (the project token's); neither known (a receiver of the library given
 * neither): not checked.
 */
function otherProject(rules: ReceiverRules, project: VoteCreateData['project']): VoteFieldProblem | undefined {
  const own = rules.projectId();
  if (own !== undefined) return projectProblem('data.project.id', project.id, own);
  const platformId = rules.projectPlatformId;
  return platformId === undefined ? undefined : projectProblem('data.project.platform_id', project.platform_id, platformId);
}

/** The verdict of a verification: a refusal, the vote of a `vote.create`, or another event. */
function verdictOfVerified(rules: ReceiverRules, result: VerifyResult): Refusal | VoteVerdict | EventVerdict {
  if (!result.ok) {
    if (result.problem !== undefined) return voteRefusal(result.problem);
    const known = V1_REFUSALS[result.reason];
    return known.reply.status === result.status ? known : v1Refusal(result.reason, result.status);
  }
  const { event, traceId } = result;
  if (event.type !== 'vote.create') return { kind: 'event', event, traceId };
  const other = otherProject(rules, event.data.project);
  return other === undefined ? { kind: 'vote', event, traceId, vote: voteFromEvent(event.data) } : voteRefusal(other);
}

/** Whether a delivery is a v0 one: an `Authorization` header, no signature, and v0 taken at all. */
const isLegacy = (rules: ReceiverRules, headers: IncomingHttpHeaders) =>
  headers[SIGNATURE_HEADER] === undefined && headers.authorization !== undefined && rules.legacyAuthorization !== undefined;

/** The verdict of a v0 delivery: authorized, a known body, and for an upvote a known project. */
function judgeLegacyDelivery(rules: ReceiverRules, rawBody: Uint8Array, headers: IncomingHttpHeaders): Refusal | LegacyVerdict | NotReady {
  if (!verifyLegacyAuthorization(headers.authorization, [rules.legacyAuthorization ?? ''])) return LEGACY_UNAUTHORIZED;
  const parsed = parseLegacyVote(rawBody);
  if (!parsed.ok) return parsed.problem === undefined ? LEGACY_MALFORMED[parsed.reason] : voteRefusal(parsed.problem, 'legacy_');
  if (parsed.vote.type === 'test') return { kind: 'legacy_test', vote: parsed.vote };
  const target = 'bot' in parsed.vote ? { field: 'bot', id: parsed.vote.bot } : { field: 'guild', id: parsed.vote.guild };
  const other = rules.projectPlatformId === undefined ? undefined : projectProblem(target.field, target.id, rules.projectPlatformId);
  if (other !== undefined) return voteRefusal(other, 'legacy_');
  const projectId = rules.projectId();
  return projectId === undefined ? NOT_READY : { kind: 'legacy_vote', vote: parsed.vote, projectId };
}

/**
 * The verdict on one delivery from its bytes, headers, the secrets accepted now and the clock
 * (epoch ms). A v1 `bad_signature` may still pass after a refresh of the secrets or as a
 * self-signed handshake ({@link judgeHandshake}): the receiver tries those before refusing.
 */
export function judgeDelivery(
  rules: ReceiverRules,
  rawBody: Uint8Array,
  headers: IncomingHttpHeaders,
  secrets: readonly string[],
  now: number,
): Verdict {
  if (isLegacy(rules, headers)) return judgeLegacyDelivery(rules, rawBody, headers);
  return verdictOfVerified(rules, verifySignedDelivery(rawBody, headers, secrets, now, rules.toleranceSeconds));
}

/** Whether a refused delivery might pass with newer secrets (a rotation not seen yet). */
export const mayPassWithNewSecrets = (verdict: Verdict): boolean => verdict.kind === 'refuse' && verdict.reason === 'bad_signature';

/**
 * An `integration.create` signed with the secret it carries (the emulator's handshake), when the
 * rules accept those; undefined for anything else.
 */
export function judgeHandshake(
  rules: ReceiverRules,
  rawBody: Uint8Array,
  headers: IncomingHttpHeaders,
  now: number,
): EventVerdict | undefined {
  if (!rules.acceptSelfSignedHandshakes) return undefined;
  let carried: unknown;
  try {
    const text = Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8');
    const body = JSON.parse(text) as { type?: unknown; data?: { webhook_secret?: unknown } };
    if (body?.type !== 'integration.create') return undefined;
    carried = body.data?.webhook_secret;
  } catch {
    return undefined;
  }
  if (typeof carried !== 'string' || carried === '') return undefined;
  const verdict = verdictOfVerified(rules, verifySignedDelivery(rawBody, headers, [carried], now, rules.toleranceSeconds));
  if (verdict.kind !== 'event' || verdict.event.type !== 'integration.create') return undefined;
  return verdict.event.data.webhook_secret === carried ? verdict : undefined;
}

/** The answer to an `integration.create`: where votes go, and which events it wants. */
export const integrationReply = (webhookUrl: string | undefined): Reply => ({
  status: 200,
  body: { webhook_url: webhookUrl, routes: ['vote.create'] },
});

/** The log fields of a recorded vote. */
export function recordFields(verdict: VoteVerdict | LegacyVerdict): Record<string, unknown> {
  if (verdict.kind !== 'vote') return { generation: 'v0' };
  const fields = { type: verdict.event.type, voteId: verdict.event.data.id };
  return verdict.traceId ? { type: fields.type, traceId: verdict.traceId, voteId: fields.voteId } : fields;
}

/** The log fields of a v1 event. */
export const eventFields = (verdict: EventVerdict | VoteVerdict): Record<string, unknown> =>
  verdict.traceId ? { type: verdict.event.type, traceId: verdict.traceId } : { type: verdict.event.type };

/** What `onDelivery` hears of a delivery that was accepted (or a duplicate). */
export function receivedOf(verdict: VoteVerdict | EventVerdict | LegacyVerdict, outcome: 'accepted' | 'duplicate'): ReceivedDelivery {
  if (verdict.kind === 'vote' || verdict.kind === 'event') {
    return { generation: 'v1', event: verdict.event as WebhookEvent, traceId: verdict.traceId, outcome };
  }
  return { generation: 'v0', vote: verdict.vote, outcome };
}
