import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import { credentialForms, redact, redactUrl, urlCredentialForms } from '../../api/redact.js';
import { CLIENT_VERSION } from '../../api/version.js';
import { signDelivery } from '../../contract/signature.js';
import type { HookCallContext, Vote, VoteHook } from '../types.js';
import { voteHookBody, type HookKind } from './body.js';
import { errorLine, HOOK_DEFAULTS, hookError, oneLine, type VoteHookError } from './errors.js';

/** The header that carries the call's number (1 for the first call, 2 for the first retry, ...). */
const ATTEMPT_HEADER = 'x-listing-agent-attempt';
/** The header that carries the vote key, for the receiver to make its reward idempotent. */
const IDEMPOTENCY_HEADER = 'idempotency-key';

/** How much of an error answer is read: enough for a message, never a whole page. */
const EXCERPT_READ_BYTES = 4096;
/** How much of an error answer shows in the failure message. */
const EXCERPT_CHARS = 200;

/** Options of {@link createHttpHook}. */
export interface HttpHookOptions {
  /** Names the hook in logs, metrics and dead letters. */
  name: string;
  /** Where each vote is POSTed. */
  url: string;
  /**
   * Signs each call: `x-topgg-signature: t=<unix s>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
   * the service's own scheme, so the bot verifies hook calls with the code it uses for deliveries.
   * Default: unsigned.
   */
  secret?: string;
  /** Sent as the `Authorization` header, as it is (include any scheme word). Default: none. */
  authorization?: string;
  /** How long one call may take, answer body included. Default 10 000 ms. */
  timeoutMs?: number;
  /** Retries after a failure before the vote is dead-lettered for this hook. Default 5. */
  retries?: number;
  /** The undici dispatcher. Default: undici's global dispatcher. */
  dispatcher?: Dispatcher;
  /** The clock for the signature's `t`, in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  /**
   * More values to keep out of the hook's error texts, besides its own credentials (`secret`,
   * `authorization` with and without its scheme word, Basic's password, the URL's password and
   * token-like query values), which are always kept out. The agent passes every credential form
   * of its configuration. Default: none.
   */
  secrets?: readonly string[];
  /** What the hook carries, the body's `type`: `reminder` for the hooks of `votes.reminders`. Default `vote`. */
  kind?: HookKind;
}

/**
 * A hook that POSTs each vote as JSON ({@link VoteHookBody}) to a URL, typically the bot's own
 * local endpoint. A 2xx answer is success; any other status (redirects are not followed), a
 * timeout or a network error rejects with a {@link VoteHookError} that says what happened (the
 * status and the start of the answer) and never shows a credential: the secret, the
 * authorization (with or without its scheme word, Basic's password), the URL's password and
 * token-like query values, and `secrets`, wherever the answer repeats them.
 *
 * Headers: `content-type: application/json`, `idempotency-key: <vote key>`,
 * `x-listing-agent-attempt: <n>`, `x-topgg-signature` when `secret` is set, `authorization` when
 * set. The body is the same bytes on every attempt; the signature's `t` is the time of each attempt.
 */
export function createHttpHook(options: HttpHookOptions): VoteHook {
  const { name, url, secret, authorization } = options;
  const timeoutMs = options.timeoutMs ?? HOOK_DEFAULTS.timeoutMs;
  const now = options.now ?? Date.now;
  const own = [secret, authorization].flatMap((value) => (value === undefined ? [] : credentialForms(value)));
  const secrets = [...own, ...urlCredentialForms(url), ...(options.secrets ?? [])];
  const shownUrl = redactUrl(url, secrets);

  type Failure = 'status' | 'timeout' | 'network' | 'aborted';
  const fail = (reason: Failure, message: string, details: { cause?: unknown; status?: number } = {}) =>
    hookError(name, reason, message, secrets, details);

  async function run(vote: Vote, context: HookCallContext): Promise<void> {
    if (context.signal.aborted) throw fail('aborted', `POST ${shownUrl} not sent: the call was aborted (the agent is stopping)`);
    const rawBody = JSON.stringify(voteHookBody(vote, options.kind));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `listing-agent/${CLIENT_VERSION}`,
      [IDEMPOTENCY_HEADER]: context.idempotencyKey,
      [ATTEMPT_HEADER]: String(context.attempt),
    };
    if (secret !== undefined) {
      // Only the signature header: the trace header belongs to the service's deliveries.
      Object.assign(headers, signDelivery({ secret, rawBody, timestampSeconds: Math.floor(now() / 1000) }));
    }
    if (authorization !== undefined) headers.authorization = authorization;

    const timeout = AbortSignal.timeout(timeoutMs);
    let status: number;
    let excerpt = '';
    // undici loaded on first use: a bot that never calls an http hook does not pay for it.
    const { request } = await import('undici');
    try {
      const response = await request(url, {
        method: 'POST',
        headers,
        body: rawBody,
        // One signal for the whole call (connect, headers, body), so `timeoutMs` is a real bound.
        signal: AbortSignal.any([context.signal, timeout]),
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      });
      status = response.statusCode;
      if (status >= 200 && status < 300) {
        // Read to the end so the connection goes back to the pool. The receiver has accepted the
        // vote already: a body that breaks off now does not undo that.
        await drain(response.body).catch(() => undefined);
        return;
      }
      // Scrubbed before it is cut: a credential the answer repeats never shows in part.
      excerpt = oneLine(redact(await readExcerpt(response.body), secrets), EXCERPT_CHARS);
    } catch (error) {
      if (timeout.aborted || isUndiciTimeout(error)) {
        const sooner = 'raise votes.hooks[].timeout or make the receiver answer sooner';
        throw fail('timeout', `POST ${shownUrl} got no answer within ${timeoutMs} ms (${sooner})`, { cause: error });
      }
      if (context.signal.aborted) throw fail('aborted', `POST ${shownUrl} was aborted (the agent is stopping)`, { cause: error });
      throw fail('network', `POST ${shownUrl} failed: ${errorLine(error)}`, { cause: error });
    }
    const text = STATUS_CODES[status];
    const said = excerpt === '' ? '' : `: ${excerpt}`;
    const hint = status >= 300 && status < 400 ? ' (redirects are not followed: configure the final URL)' : '';
    throw fail('status', `POST ${shownUrl} answered ${status}${text ? ` ${text}` : ''}${said}${hint}`, { status });
  }

  return { name, retries: options.retries ?? HOOK_DEFAULTS.retries, run };
}

/**
 * Reads an accepted answer's body (at most {@link EXCERPT_READ_BYTES}) so that the connection goes
 * back to the pool: undici's `dump()`, or where it is missing (Bun's stand-in for undici) the same
 * bounded read as an excerpt's.
 */
async function drain(body: Dispatcher.ResponseData['body']): Promise<void> {
  if (typeof body.dump === 'function') await body.dump({ limit: EXCERPT_READ_BYTES });
  else await readExcerpt(body);
}

/** The start of an answer's body, reading at most {@link EXCERPT_READ_BYTES}. */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      // The rest is of no use for a message: leaving the loop drops it (and the connection).
      if (size >= EXCERPT_READ_BYTES) break;
    }
  } catch {
    // The status is the failure; a body that breaks off only shortens the excerpt.
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_READ_BYTES).toString('utf8');
}

/** undici's own timeouts (a custom dispatcher may set them shorter than the hook's). */
function isUndiciTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}
