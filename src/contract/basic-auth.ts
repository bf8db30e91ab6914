/**
 * HTTP Basic client authentication as RFC 6749 section 2.3.1 sends it: the client ID and secret
 * are each form-urlencoded, joined with `:`, then base64-encoded. The client builds it; the
 * emulator reads it.
 */

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

