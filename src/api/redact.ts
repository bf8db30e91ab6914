/**
 * Replaces every occurrence of each secret in `text` with `[redacted]`, also in its URL-encoded
 * form (how it shows inside a URL). Secrets shorter than 4 characters are left alone (they would
 * shred ordinary text).
 */
export function redact(text: string, secrets: readonly string[]): string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    forms.add(secret);
    const encoded = urlEncoded(secret);
    if (encoded !== undefined) forms.add(encoded);
  }
  // Longest first: a shorter secret inside a longer one would otherwise leave the longer one's rest.
  let result = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    result = result.split(form).join('[redacted]');
  }
  return result;
}

/** `secret` as it shows inside a URL; undefined for a text with a lone surrogate, which has no such form. */
function urlEncoded(secret: string): string | undefined {
  try {
    return encodeURIComponent(secret);
  } catch {
    return undefined;
  }
}

const SECRET_QUERY_KEYS = new Set([
  'token',
  'code',
  'client_secret',
  'refresh_token',
  'access_token',
  'code_verifier',
  'id_token',
  'secret',
  'password',
  'api_key',
  'apikey',
  'key',
  'auth',
  'sig',
  'signature',
]);

/** A query key or value as it reads (`+` a space, `%xx` decoded); as written when it is not well encoded. */
function decodeQueryPart(part: string): string {
  try {
    return decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    return part;
  }
}

/** A percent-encoded part of a URL (its user or password) decoded; as written when it is not well encoded. */
function decodeUrlPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Whether `key` (as written in a query) names a secret: `token`, `client_secret`, `api_key`, ... in any case. */
function isSecretQueryKey(key: string): boolean {
  return SECRET_QUERY_KEYS.has(decodeQueryPart(key).toLowerCase());
}

/**
 * A URL inside text: a scheme, `://`, then up to a space, a quote or a bracket. The scheme is bounded (no real one
 * is longer than 32 characters): unbounded, a long run of letters with no `://` is scanned again from each of its
 * characters, quadratic in its length, and a hostile service's error body or a config value can be that run.
 */
const URL_IN_TEXT = /[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^\s"'<>`]+/g;
/** A sentence's punctuation after a URL; only from the start of a run of it (so a long run is scanned once). */
const TRAILING_PUNCTUATION = /(?<![.,;:!?)\]}])[.,;:!?)\]}]+$/;

/** The credentials one URL carries, as {@link urlCredentialForms} lists them; none when `text` is not a URL. */
function credentialsOfUrl(text: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return [];
  }
  const forms: string[] = [];
  if (parsed.password !== '') {
    forms.push(parsed.password, decodeUrlPart(parsed.password));
    if (parsed.username !== '') {
      forms.push(`${parsed.username}:${parsed.password}`, `${decodeUrlPart(parsed.username)}:${decodeUrlPart(parsed.password)}`);
    }
  }
  for (const pair of parsed.search.slice(1).split('&')) {
    const equals = pair.indexOf('=');
    if (equals <= 0 || equals === pair.length - 1 || !isSecretQueryKey(pair.slice(0, equals))) continue;
    const value = pair.slice(equals + 1);
    forms.push(value, decodeQueryPart(value));
  }
  return forms;
}

/**
 * The credentials a URL carries, in every form they show in text: the password of its user info
 * (as written and decoded) and `user:password`, and the values of its secret-looking query keys
 * (`?token=`, `client_secret=`, `api_key=`, ...; as written and decoded). `text` may be a URL or
 * hold some (`--db=postgres://app:pw@db/rewards`). Empty when it carries none.
 */
export function urlCredentialForms(text: string): string[] {
  // A sentence's punctuation after a URL is not part of it.
  const urls = new Set([text, ...(text.match(URL_IN_TEXT) ?? []).map((url) => url.replace(TRAILING_PUNCTUATION, ''))]);
  return [...new Set([...urls].flatMap(credentialsOfUrl))].filter((form) => form !== '');
}

/** `<scheme word> <credentials>`: an `Authorization` value such as `Bearer x` or `Basic dXNlcjpwdw==`. */
const SCHEMED = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+(\S[\s\S]*)$/;

/** `user:password` of a Basic credential, when `encoded` is base64 of printable text with a colon. */
function basicPair(encoded: string): string | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  return decoded.includes(':') && !/[\u0000-\u001f\u007f\ufffd]/.test(decoded) ? decoded : undefined;
}

/**
 * Every form a credential of the configuration can show in text, the value itself first: an
 * `Authorization` value without its scheme word (`Bearer x` -> `x`); for Basic, the decoded
 * `user:password` and the password alone; for a URL, its {@link urlCredentialForms}. What
 * {@link redact} is given to scrub a credential wherever it shows, however it was written.
 */
export function credentialForms(value: string): string[] {
  const inUrl = urlCredentialForms(value);
  // A URL holding no credential (`redis://10.0.0.5:6379`) is no secret: it names where the agent
  // connects, and a log line about that connection would otherwise say `redis [redacted]`.
  if (inUrl.length === 0 && isUrl(value)) return [];
  const forms = [value];
  const schemed = SCHEMED.exec(value.trim());
  if (schemed !== null) {
    const credentials = schemed[2]!.trim();
    forms.push(credentials);
    const pair = schemed[1]!.toLowerCase() === 'basic' ? basicPair(credentials) : undefined;
    if (pair !== undefined) forms.push(pair, pair.slice(pair.indexOf(':') + 1));
  }
  forms.push(...inUrl);
  return [...new Set(forms)].filter((form) => form !== '');
}

/** `value` is one URL with an authority (`scheme://host...`) and nothing else. */
function isUrl(value: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\/\S+$/.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * A URL safe to show: the password of its user info, query values of secret-looking keys (any
 * case) and every known secret replaced.
 */
export function redactUrl(url: string, secrets: readonly string[]): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = 'redacted';
    // Pair by pair, so the other pairs keep their encoding and a second pass changes nothing.
    parsed.search = parsed.search
      .slice(1)
      .split('&')
      .map((pair) => {
        const key = pair.split('=', 1)[0]!;
        return isSecretQueryKey(key) ? `${key}=redacted` : pair;
      })
      .join('&');
    return redact(parsed.toString(), secrets);
  } catch {
    return redact(url, secrets);
  }
}
