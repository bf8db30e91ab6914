import { request, type Dispatcher } from 'undici';
import { DEFAULT_USER_AGENT } from '../api/transport.js';
import { credentialForms, redact, redactUrl, urlCredentialForms } from '../api/redact.js';
import { errorMessage } from '../errors.js';

/**
 * One `GET /projects/@me` with the project token, kept raw: the token check wants the status and
 * the body, the clock check the `Date` header and when the request went and came back. One
 * request, no retry: the doctor reports what the service answers now.
 */

/** What the service answered, or why it did not. */
export type ServiceAnswer =
  | {
      kind: 'answer';
      /** The URL asked, as shown (its password and token-like query values redacted). */
      url: string;
      status: number;
      /** The `Date` header, as sent. */
      date: string | undefined;
      /** Our clock (epoch ms) when the request left and when the answer's headers came. */
      sentAt: number;
      receivedAt: number;
      /** Parsed JSON, else the text (cut), else undefined. */
      body: unknown;
    }
  | {
      kind: 'unreachable';
      /** The URL asked, as shown (its password and token-like query values redacted). */
      url: string;
      /** One line: `connection refused`, `no answer within 5 s`, ... */
      reason: string;
      timedOut: boolean;
    };

/** Options of {@link probeService}. */
export interface ProbeServiceOptions {
  /** `service.v1`. */
  v1BaseUrl: string;
  token: string;
  timeoutMs: number;
  now: () => number;
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (nothing listens there)',
  ECONNRESET: 'the connection was reset',
  UND_ERR_SOCKET: 'the connection closed before an answer',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now (DNS)',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate cannot be verified',
};

/** The first errno-like code in an error's cause chain. */
function codeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    const first: unknown = current instanceof AggregateError ? (current.errors as unknown[])[0] : undefined;
    current = current.cause ?? first;
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Asks `GET {v1}/projects/@me`; never rejects (an abort answers `unreachable`). */
export async function probeService(options: ProbeServiceOptions): Promise<ServiceAnswer> {
  const url = `${options.v1BaseUrl.replace(/\/+$/, '')}/projects/@me`;
  const secrets = [...credentialForms(options.token), ...urlCredentialForms(url)];
  // What the answer names: a password or ?token= of service.v1 replaced, as in every printout.
  const shown = redactUrl(url, secrets);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const sentAt = options.now();
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { authorization: `Bearer ${options.token}`, accept: 'application/json', 'user-agent': `${DEFAULT_USER_AGENT} doctor` },
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    const receivedAt = options.now();
    const text = await res.body.text();
    const date = res.headers.date;
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = redact(text, secrets).slice(0, 200);
    }
    return { kind: 'answer', url: shown, status: res.statusCode, date: Array.isArray(date) ? date[0] : date, sentAt, receivedAt, body };
  } catch (error) {
    const timedOut = timeout.aborted || codeOf(error) === 'UND_ERR_HEADERS_TIMEOUT' || codeOf(error) === 'UND_ERR_BODY_TIMEOUT';
    if (timedOut) return { kind: 'unreachable', url: shown, reason: `no answer within ${options.timeoutMs} ms`, timedOut: true };
    if (options.signal?.aborted) return { kind: 'unreachable', url: shown, reason: 'the check was stopped', timedOut: false };
    const code = codeOf(error);
    const said = errorMessage(error);
    const reason = (code && REASONS[code]) ?? `${code ? `${code}: ` : ''}${redact(said, secrets)}`;
    return { kind: 'unreachable', url: shown, reason, timedOut: false };
  }
}
