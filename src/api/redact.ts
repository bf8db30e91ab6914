/** Replaces every occurrence of each secret in `text` with `[redacted]`. Secrets shorter than 4 characters are left alone (they would shred ordinary text). */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length >= 4) result = result.split(secret).join('[redacted]');
  }
  return result;
}

const SECRET_QUERY_KEYS = new Set(['token', 'code', 'client_secret', 'refresh_token', 'access_token', 'code_verifier']);

/** A URL safe to show: query values of secret-looking keys and every known secret replaced. */
export function redactUrl(url: string, secrets: readonly string[]): string {
  try {
    const parsed = new URL(url);
    for (const key of [...parsed.searchParams.keys()]) {
      if (SECRET_QUERY_KEYS.has(key)) parsed.searchParams.set(key, 'redacted');
    }
    return redact(parsed.toString(), secrets);
  } catch {
    return redact(url, secrets);
  }
}
