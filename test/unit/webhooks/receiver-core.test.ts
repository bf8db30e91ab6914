import { describe, expect, it } from 'vitest';
import {
  judgeDelivery,
  judgeHandshake,
  judgeRequest,
  mayPassWithNewSecrets,
  pathOfUrl,
  receivedOf,
  receiverRules,
  recordFields,
  verifySignedDelivery,
  type ReceiverRules,
  type ReceiverRulesOptions,
  type Verdict,
} from '../../../src/webhooks/receiver-core.js';
import { header, NOW, NOW_S, OLD_SECRET, PROJECT, SECRET, VOTE_BODY, VOTE_EVENT } from './fixtures.js';

/**
 * The receiver's pure core: bytes + headers + secrets + clock -> verdict and vote, no socket. The
 * node:http shell around it is tested over real sockets in test/integration/webhooks/receiver.test.ts.
 */

const PATH = '/webhooks/listing';
const LEGACY = 'legacy-authorization-secret';

function rules(overrides: Partial<ReceiverRulesOptions> = {}): ReceiverRules {
  return receiverRules({ path: PATH, maxBodyBytes: 65_536, ...overrides });
}

/** A v1 delivery of `event`, signed with `secret` at `t`. */
function signed(event: unknown, secret = SECRET, t = NOW_S) {
  const body = Buffer.from(typeof event === 'string' ? event : JSON.stringify(event));
  return { body, headers: { 'x-topgg-signature': header(body, secret, t), 'x-topgg-trace': 'trace-1' } };
}

function judge(delivery: { body: Buffer; headers: Record<string, string> }, ruleSet = rules(), secrets: readonly string[] = [SECRET], now = NOW): Verdict {
  return judgeDelivery(ruleSet, delivery.body, delivery.headers, secrets, now);
}

const integrationCreate = (secret: string) => ({
  type: 'integration.create',
  data: { connection_id: '1300000000000000011', webhook_secret: secret, project: PROJECT, user: VOTE_EVENT.data.user },
});

describe('judgeRequest', () => {
  it('takes POST to the path, with or without a query, and refuses other paths (404) and methods (405)', () => {
    const r = rules();
    expect(judgeRequest(r, 'POST', PATH)).toBeUndefined();
    expect(judgeRequest(r, 'POST', `${PATH}?from=service#x`)).toBeUndefined();
    expect(judgeRequest(r, 'POST', '/other')).toMatchObject({ outcome: 'rejected', reason: 'not_found', reply: { status: 404, body: { error: `not found: deliveries go to POST ${PATH}` }, close: true } });
    expect(judgeRequest(r, 'POST', `${PATH}/more`)?.reason).toBe('not_found');
    expect(judgeRequest(r, 'GET', PATH)).toMatchObject({ outcome: 'rejected', reason: 'method', reply: { status: 405, headers: { allow: 'POST' } } });
  });

  it('pathOfUrl cuts the query and the fragment, whichever comes first', () => {
    expect(pathOfUrl('/a?b#c')).toBe('/a');
    expect(pathOfUrl('/a#b?c')).toBe('/a');
    expect(pathOfUrl(undefined)).toBe('/');
  });
});

describe('judgeDelivery, v1', () => {
  it('a signed vote.create is a vote verdict, keyed like the poller, with its trace', () => {
    const verdict = judge(signed(VOTE_EVENT));
    expect(verdict).toMatchObject({ kind: 'vote', traceId: 'trace-1', event: { type: 'vote.create' } });
    if (verdict.kind !== 'vote') throw new Error('not a vote');
    expect(verdict.vote).toMatchObject({
      key: `${VOTE_EVENT.data.user.id}:${Date.parse(VOTE_EVENT.data.created_at)}`,
      userId: VOTE_EVENT.data.user.id,
      projectId: PROJECT.id,
      road: 'webhook',
      voteId: VOTE_EVENT.data.id,
    });
    expect(recordFields(verdict)).toEqual({ type: 'vote.create', traceId: 'trace-1', voteId: VOTE_EVENT.data.id });
    expect(receivedOf(verdict, 'duplicate')).toEqual({ generation: 'v1', event: verdict.event, traceId: 'trace-1', outcome: 'duplicate' });
  });

  it('any of several secrets verifies (a rotation)', () => {
    expect(judge(signed(VOTE_EVENT, OLD_SECRET), rules(), [SECRET, OLD_SECRET]).kind).toBe('vote');
  });

  it('refuses with the counter outcome, the logged reason and the answer of each failure', () => {
    const cases: Array<[Verdict, string, string, number, unknown]> = [
      [judge({ body: Buffer.from(VOTE_BODY), headers: {} }), 'bad_signature', 'missing_signature', 401, undefined],
      [judge({ body: Buffer.from(VOTE_BODY), headers: { 'x-topgg-signature': 't=1,v1=zz' } }), 'bad_signature', 'malformed_signature', 401, undefined],
      [judge(signed(VOTE_EVENT, 'whs_someone_else')), 'bad_signature', 'bad_signature', 401, undefined],
      [judge(signed(VOTE_EVENT, SECRET, NOW_S - 301)), 'stale', 'stale', 401, undefined],
      [judge(signed(VOTE_EVENT, SECRET, NOW_S + 301)), 'stale', 'future', 401, undefined],
      [judge(signed('{"type":')), 'malformed', 'malformed_body', 400, { error: 'malformed_body' }],
      [judge(signed({ type: 'vote.delete', data: {} })), 'malformed', 'unknown_event', 400, { error: 'unknown_event' }],
    ];
    for (const [verdict, outcome, reason, status, body] of cases) {
      expect(verdict).toMatchObject({ kind: 'refuse', outcome, reason, reply: { status } });
      if (verdict.kind === 'refuse') expect(verdict.reply.body).toEqual(body);
    }
  });

  it('the clock and the tolerance decide staleness', () => {
    // Cast before it was signed: judged at the signing time, its created_at is not in the future.
    const cast = { created_at: new Date(NOW - 601_000).toISOString(), expires_at: new Date(NOW - 601_000 + 43_200_000).toISOString() };
    const old = signed({ ...VOTE_EVENT, data: { ...VOTE_EVENT.data, ...cast } }, SECRET, NOW_S - 600);
    expect(judge(old).kind).toBe('refuse');
    expect(judge(old, rules(), [SECRET], NOW - 600_000).kind).toBe('vote');
    expect(judge(old, rules({ toleranceSeconds: 900 })).kind).toBe('vote');
  });

  it('only a bad signature may pass with newer secrets', () => {
    expect(mayPassWithNewSecrets(judge(signed(VOTE_EVENT, 'whs_rotated_in')))).toBe(true);
    expect(judge(signed(VOTE_EVENT, 'whs_rotated_in'), rules(), [SECRET, 'whs_rotated_in']).kind).toBe('vote');
    expect(mayPassWithNewSecrets(judge(signed(VOTE_EVENT, SECRET, NOW_S - 301)))).toBe(false);
    expect(mayPassWithNewSecrets(judge(signed(VOTE_EVENT)))).toBe(false);
  });

  it('a test or an integration event is an event verdict, not a vote', () => {
    const verdict = judge(signed(integrationCreate('whs_new_one')));
    expect(verdict).toMatchObject({ kind: 'event', event: { type: 'integration.create' }, traceId: 'trace-1' });
    if (verdict.kind === 'event') expect(receivedOf(verdict, 'accepted')).toMatchObject({ generation: 'v1', outcome: 'accepted' });
  });
});

describe('judgeHandshake (self-signed integration.create)', () => {
  const handshake = signed(integrationCreate('whs_carried_secret'), 'whs_carried_secret');

  it('is refused by default: the carried secret alone signs nothing', () => {
    expect(judge(handshake).kind).toBe('refuse');
    expect(judgeHandshake(rules(), handshake.body, handshake.headers, NOW)).toBeUndefined();
  });

  it('passes when allowed, only for an integration.create signed with the secret it carries', () => {
    const allowed = rules({ acceptSelfSignedHandshakes: true });
    expect(judgeHandshake(allowed, handshake.body, handshake.headers, NOW)).toMatchObject({ kind: 'event', event: { type: 'integration.create', data: { webhook_secret: 'whs_carried_secret' } } });
    const otherSigner = signed(integrationCreate('whs_carried_secret'), 'whs_someone_else');
    expect(judgeHandshake(allowed, otherSigner.body, otherSigner.headers, NOW)).toBeUndefined();
    const vote = signed(VOTE_EVENT, 'whs_carried_secret');
    expect(judgeHandshake(allowed, vote.body, vote.headers, NOW)).toBeUndefined();
    expect(judgeHandshake(allowed, Buffer.from('not json'), handshake.headers, NOW)).toBeUndefined();
  });
});

describe('judgeDelivery, v0 (Authorization)', () => {
  const upvote = { bot: '1300000000000000002', user: '1300000000000000004', type: 'upvote' };
  const v0 = (body: unknown, authorization = LEGACY) => ({ body: Buffer.from(JSON.stringify(body)), headers: { authorization } });

  it('is v0 only when the receiver takes v0 and no signature is sent', () => {
    const withLegacy = rules({ legacyAuthorization: LEGACY, projectId: () => PROJECT.id });
    expect(judge(v0(upvote), withLegacy)).toEqual({ kind: 'legacy_vote', vote: upvote, projectId: PROJECT.id });
    expect(judge(v0(upvote), rules())).toMatchObject({ kind: 'refuse', reason: 'missing_signature' });
    const both = { body: Buffer.from(JSON.stringify(upvote)), headers: { authorization: LEGACY, 'x-topgg-signature': 't=1,v1=00' } };
    expect(judge(both, withLegacy)).toMatchObject({ kind: 'refuse', reason: 'malformed_signature' });
  });

  it('refuses a wrong Authorization (401) and a bad body (400), with their own reasons', () => {
    const withLegacy = rules({ legacyAuthorization: LEGACY, projectId: () => PROJECT.id });
    expect(judge(v0(upvote, 'wrong'), withLegacy)).toMatchObject({ kind: 'refuse', outcome: 'bad_signature', reason: 'legacy_authorization', reply: { status: 401 } });
    expect(judge(v0({ user: '1' }), withLegacy)).toMatchObject({ kind: 'refuse', outcome: 'malformed', reason: 'legacy_malformed_body', reply: { status: 400, body: { error: 'malformed_body' } } });
  });

  it('a test needs no project; an upvote before the project is known is not ready (503, retried)', () => {
    let project: string | undefined;
    const withLegacy = rules({ legacyAuthorization: LEGACY, projectId: () => project });
    expect(judge(v0({ ...upvote, type: 'test' }), withLegacy)).toEqual({ kind: 'legacy_test', vote: { ...upvote, type: 'test' } });
    expect(judge(v0(upvote), withLegacy)).toMatchObject({ kind: 'not_ready', reply: { status: 503, headers: { 'retry-after': '5' } } });
    project = PROJECT.id;
    const verdict = judge(v0(upvote), withLegacy);
    expect(verdict.kind).toBe('legacy_vote');
    if (verdict.kind === 'legacy_vote') {
      expect(recordFields(verdict)).toEqual({ generation: 'v0' });
      expect(receivedOf(verdict, 'accepted')).toEqual({ generation: 'v0', vote: upvote, outcome: 'accepted' });
    }
  });
});

describe('verifySignedDelivery (shared with the framework adapters)', () => {
  it('applies the tolerance given, else the default 300 s', () => {
    const { body, headers } = signed(VOTE_EVENT, SECRET, NOW_S - 400);
    expect(verifySignedDelivery(body, headers, [SECRET], NOW, undefined)).toMatchObject({ ok: false, reason: 'stale' });
    expect(verifySignedDelivery(body, headers, [SECRET], NOW, 500)).toMatchObject({ ok: true, timestamp: NOW_S - 400 });
  });
});
