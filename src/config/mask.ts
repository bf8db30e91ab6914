import { z } from 'zod';
import { redactUrl, urlCredentialForms } from '../api/redact.js';
import { formatDuration } from './duration.js';
import { schemaAt } from './fields.js';
import { SECRET_PATHS, type ListingAgentConfig } from './schema.js';

export { secretValues } from './secrets.js';

/** What a secret is printed as; nothing of the secret (not even its length) survives. */
export const MASK = '********';

/** A JSON value, as {@link maskConfig} returns it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

function isListen(value: unknown): value is { host: string; port: number } {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { host?: unknown }).host === 'string' &&
    typeof (value as { port?: unknown }).port === 'number'
  );
}

function formatListen({ host, port }: { host: string; port: number }): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function mask(value: unknown, secretPath: string, schemaPath: string[]): JsonValue {
  if (value === undefined) return null;
  if (SECRET_PATHS.has(secretPath)) return MASK;
  // Transforms turn what people write into what the code reads; print the written form back.
  // Among the fields written as strings, the ones read as numbers are durations and the ones read
  // as {host, port} are listen addresses.
  const writtenAsString = schemaAt(schemaPath) instanceof z.ZodString;
  if (writtenAsString && typeof value === 'number') return formatDuration(value);
  if (writtenAsString && isListen(value)) return formatListen(value);
  // A URL that carries a password or a ?token= (a hook's url, webhooks.publicUrl, a command's
  // argument) is shown as the daemon shows URLs: those parts replaced, the rest as written.
  if (typeof value === 'string') {
    const credentials = urlCredentialForms(value);
    if (credentials.length > 0) return redactUrl(value, credentials);
  }
  if (Array.isArray(value)) return value.map((item) => mask(item, `${secretPath}[]`, [...schemaPath, '[]']));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [key, child] of Object.entries(value)) {
      if (child === undefined) continue;
      out[key] = mask(child, secretPath ? `${secretPath}.${key}` : key, [...schemaPath, key]);
    }
    return out;
  }
  return value as JsonValue;
}

/**
 * A printable copy of a validated config: every secret (`SECRET_PATHS`, list items and fields of
 * array items included) replaced by `********`, the password and token-like query values of any
 * other URL by `redacted`, durations written back (`90000` -> `1m30s`), listen addresses as
 * `host:port`. `$schema` is left out: it configures nothing.
 */
export function maskConfig(config: ListingAgentConfig): { [key: string]: JsonValue } {
  const { $schema: _ignored, ...rest } = config;
  return mask(rest, '', []) as { [key: string]: JsonValue };
}
