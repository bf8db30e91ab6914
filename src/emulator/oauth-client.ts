import { createHash, timingSafeEqual } from 'node:crypto';
import { parseBasicAuth } from '../contract/basic-auth.js';
import type { RequestContext } from './http.js';
import { fail } from './http.js';
import type { ApplicationRecord } from './state.js';

/** Compares two secrets in constant time; digests first so that lengths leak nothing either. */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="oauth2", charset="UTF-8"' };

/**
 * Authenticates the client of a token or revoke request: `client_id` and `client_secret` form
 * fields, or HTTP Basic. Using both is a 400 `invalid_request` (RFC 6749 2.3: one method per
 * request). An unknown client, a wrong secret or no credentials is a 401 `invalid_client`, with a
 * `WWW-Authenticate: Basic` challenge when Basic was tried or nothing was sent.
 */
export function authenticateClient(ctx: RequestContext, form: URLSearchParams): ApplicationRecord {
  const basic = parseBasicAuth(ctx.req.headers.authorization);
  const formId = form.get('client_id');
  const formSecret = form.get('client_secret');
  const invalidClient = (detail: string, challenge: boolean): never =>
    fail(401, detail, { oauthError: 'invalid_client', ...(challenge ? { headers: BASIC_CHALLENGE } : {}) });

  let clientId: string;
  let clientSecret: string;
  if (basic === 'malformed') {
    return invalidClient('the Basic credentials could not be read: send base64(urlencode(client_id) ":" urlencode(client_secret))', true);
  } else if (basic) {
    if (formSecret !== null)
      fail(400, 'send the client credentials once: either HTTP Basic or the client_secret form field', { oauthError: 'invalid_request' });
    if (formId !== null && formId !== basic.clientId) {
      fail(400, 'client_id in the form differs from the one in the Basic credentials', { oauthError: 'invalid_request' });
    }
    ({ clientId, clientSecret } = basic);
  } else {
    if (!formId || formSecret === null) {
      return invalidClient('client authentication is required: send client_id and client_secret, or HTTP Basic', formId === null);
    }
    clientId = formId;
    clientSecret = formSecret;
  }
  const application = ctx.emu.state.applications.get(clientId);
  // Hash-compare even for an unknown client so both failures take the same time.
  const secretOk = secretsEqual(clientSecret, application?.client_secret ?? '\u0000unknown');
  if (!application || !secretOk) {
    return invalidClient('client authentication failed: unknown client or wrong client secret', basic !== undefined);
  }
  ctx.credential = 'client';
  return application;
}
