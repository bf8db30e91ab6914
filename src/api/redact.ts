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
    forms.add(encodeURIComponent(secret));
  }
  // Longest first: a shorter secret inside a longer one would otherwise leave the longer one's rest.
  let result = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    result = result.split(form).join('[redacted]');
  }
  return result;
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
]);

function decodeQueryKey(key: string): string {
  try {
    return decodeURIComponent(key.replaceAll('+', ' '));
  } catch {
    return key;
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
        return SECRET_QUERY_KEYS.has(decodeQueryKey(key).toLowerCase()) ? `${key}=redacted` : pair;
      })
      .join('&');
    return redact(parsed.toString(), secrets);
  } catch {
    return redact(url, secrets);
  }
}
