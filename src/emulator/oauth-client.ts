import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestContext } from './http.js';
import { fail } from './http.js';
import type { ApplicationRecord } from './state.js';

/** Client credentials read from an `Authorization: Basic` header. */
export interface BasicCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * Reads `Authorization: Basic` credentials the way RFC 6749 section 2.3.1 sends them: the client ID
 * and secret are each form-urlencoded, joined with `:`, then base64-encoded. Returns undefined
 * when the header is not Basic at all, and `'malformed'` when it is Basic but unreadable (no `:`,
 * bad base64, bad percent-encoding, empty client ID).
 */
export function parseBasicAuth(header: string | undefined): BasicCredentials | 'malformed' | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic(?: +(\S*))?\s*$/i.exec(header.trim());
  if (!match) return undefined;
  const encoded = match[1] ?? '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return 'malformed';
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const clientId = formDecode(decoded.slice(0, colon));
    const clientSecret = formDecode(decoded.slice(colon + 1));
    return clientId === '' ? 'malformed' : { clientId, clientSecret };
  } catch {
    return 'malformed';
  }
}

/** Undoes `application/x-www-form-urlencoded` for one value (`+` is a space); throws on bad `%`. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/** Builds the Basic header value for client credentials (RFC 6749 2.3.1); tests and clients use it. */
export function formatBasicAuth(clientId: string, clientSecret: string): string {
  const encode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

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
    if (formSecret !== null) fail(400, 'send the client credentials once: either HTTP Basic or the client_secret form field', { oauthError: 'invalid_request' });
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
