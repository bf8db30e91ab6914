import { ListingAgentError } from '../errors.js';
import { redact, redactUrl } from './redact.js';

/** Which part of the service answered: the shape of its error bodies differs. */
export type ApiFamily = 'v1' | 'v0' | 'oauth';

/** A v1 problem+json body. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
}

/** Everything known about a failed response, with secrets already removed. */
export interface ApiErrorInit {
  status: number;
  method: string;
  /** The request URL, secrets redacted. */
  url: string;
  family: ApiFamily;
  /** v1 problem+json, when the body was one. */
  problem?: ProblemDetails;
  /** v0 `{error}`, or the OAuth `error` code. */
  error?: string;
  /** OAuth `error_description`. */
  errorDescription?: string;
  /** Milliseconds the service asked to wait (429), when it said. */
  retryAfterMs?: number;
  /** What the client tried before giving up. */
  attempts: number;
  /**
   * Values to keep out of the error (tokens, secrets). The transport removes them already; they are
   * removed again here so that an error built anywhere else cannot show one either.
   */
  secrets?: readonly string[];
}

/** `init` with `secrets` removed from everything the error shows. */
function scrub(init: ApiErrorInit): ApiErrorInit {
  const secrets = init.secrets ?? [];
  const scrubbed: ApiErrorInit = {
    status: init.status,
    method: init.method,
    url: redactUrl(init.url, secrets),
    family: init.family,
    attempts: init.attempts,
  };
  if (init.problem) {
    const { type, title, status, detail } = init.problem;
    scrubbed.problem = { type: redact(type, secrets), title: redact(title, secrets), status, detail: redact(detail, secrets) };
  }
  if (init.error !== undefined) scrubbed.error = redact(init.error, secrets);
  if (init.errorDescription !== undefined) scrubbed.errorDescription = redact(init.errorDescription, secrets);
  if (init.retryAfterMs !== undefined) scrubbed.retryAfterMs = init.retryAfterMs;
  return scrubbed;
}

/** The service answered with an error status. Subclasses per status; see {@link createApiError}. */
export class ApiError extends ListingAgentError {
  readonly status: number;
  readonly method: string;
  readonly url: string;
  readonly family: ApiFamily;
  readonly problem: ProblemDetails | undefined;
  readonly error: string | undefined;
  readonly errorDescription: string | undefined;
  readonly attempts: number;

  constructor(code: string, given: ApiErrorInit, hint: string) {
    const init = scrub(given);
    // An empty `detail` says nothing; fall through to the other fields.
    const said = init.problem?.detail || init.errorDescription || init.error;
    const tries = init.attempts > 1 ? ` after ${init.attempts} attempts` : '';
    super(code, `${init.method} ${init.url} failed with ${init.status}${tries}${said ? `: ${said}` : ''}. ${hint}`.trim());
    this.status = init.status;
    this.method = init.method;
    this.url = init.url;
    this.family = init.family;
    this.problem = init.problem;
    this.error = init.error;
    this.errorDescription = init.errorDescription;
    this.attempts = init.attempts;
  }
}

/** 400: the request or the credential's form is wrong (token schema, project ID, cursor, query). */
export class BadRequestError extends ApiError {
  constructor(init: ApiErrorInit) {
    super('api_bad_request', init,
      init.family === 'oauth'
        ? 'The grant is bad, used, expired, or its verifier or redirect_uri does not match: start the authorization again.'
        : 'Check the request; a project token must be the one from the project\'s Integrations and API settings, used on `@me` paths.');
  }
}

/** 401: the credential is missing, invalid, expired or revoked. */
export class UnauthorizedError extends ApiError {
  constructor(init: ApiErrorInit) {
    const hint =
      init.family === 'v0' ? 'v0 takes the raw project token in `Authorization`, without `Bearer `.'
      : init.family === 'oauth' ? 'The client ID or client secret is wrong (a rotated secret stops working at once).'
      : 'v1 needs `Authorization: Bearer <token>`; an expired access token needs a refresh, a revoked one a new authorization.';
    super('api_unauthorized', init, hint);
  }
}

/** 403: the credential cannot do this (scope not granted, wrong credential kind for the route). */
export class ForbiddenError extends ApiError {
  constructor(init: ApiErrorInit) {
    super('api_forbidden', init,
      init.family === 'v1'
        ? 'Authorize the application with the scope this call needs, or use the credential the route takes (a project token works only ' +
          'on `@me` paths).'
        : 'Authorize the application with the scope this call needs, or use the credential the route takes.');
  }
}

/** 404: not found, not part of the authorization, or no live authorization. */
export class NotFoundError extends ApiError {
  constructor(init: ApiErrorInit) {
    super('api_not_found', init, 'Check the ID; with OAuth or an application token the project must be granted to the application.');
  }
}

/** 409: a limit or a state conflict (webhook limit, already connected, test rejected, already listed). */
export class ConflictError extends ApiError {
  constructor(init: ApiErrorInit) {
    super('api_conflict', init, 'The service\'s state does not allow this now; see the detail.');
  }
}

/** 422: the service refused the body (lengths, locales, metrics shape, batch size, ...). */
export class UnprocessableEntityError extends ApiError {
  constructor(init: ApiErrorInit) {
    super('api_unprocessable', init, 'Fix the field the detail names.');
  }
}

/** 429: rate limited or in a cooldown. `retryAfterMs` says how long to wait, when known. */
export class RateLimitError extends ApiError {
  readonly retryAfterMs: number | undefined;

  constructor(init: ApiErrorInit) {
    const wait = init.retryAfterMs === undefined ? '' : ` Wait ${Math.ceil(init.retryAfterMs / 1000)} s before trying again.`;
    super('api_rate_limited', init, `Too many requests, or a cooldown (announcements: one per 4 h).${wait}`);
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 5xx: the service failed (502 on metrics: upstream unavailable). Retried for idempotent calls. */
export class ServerError extends ApiError {
  constructor(init: ApiErrorInit) {
    super('api_server', init, 'The service failed; it is retried automatically for idempotent calls. Try again later.');
  }
}

/** Any other error status. */
export class UnexpectedStatusError extends ApiError {
  constructor(init: ApiErrorInit) {
    super('api_unexpected_status', init, 'The contract does not list this status for this call.');
  }
}

/** The one place that maps a status to its error class. */
export function createApiError(init: ApiErrorInit): ApiError {
  switch (init.status) {
    case 400: return new BadRequestError(init);
    case 401: return new UnauthorizedError(init);
    case 403: return new ForbiddenError(init);
    case 404: return new NotFoundError(init);
    case 409: return new ConflictError(init);
    case 422: return new UnprocessableEntityError(init);
    case 429: return new RateLimitError(init);
    default: return init.status >= 500 ? new ServerError(init) : new UnexpectedStatusError(init);
  }
}

/** The request did not get an answer: connection refused or reset, DNS, TLS. */
export class NetworkError extends ListingAgentError {
  readonly method: string;
  readonly url: string;
  readonly attempts: number;

  /** `secrets` are removed from the URL and from the reason taken from `cause`. */
  constructor(method: string, url: string, attempts: number, cause: unknown, secrets: readonly string[] = []) {
    const shownUrl = redactUrl(url, secrets);
    const reason = redact(cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : String(cause), secrets);
    const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
    // A closed dispatcher is the caller's doing, not the network's: say so.
    const fix = /^UND_ERR_(CLOSED|DESTROYED)$/.test(reason)
      ? 'The client (its dispatcher) was closed; create a new one.'
      : 'Check the base URL and the network.';
    super('network', `${method} ${shownUrl} got no answer${tries} (${reason}). ${fix}`, { cause });
    this.method = method;
    this.url = shownUrl;
    this.attempts = attempts;
  }
}

/** No answer within the per-request timeout. */
export class TimeoutError extends ListingAgentError {
  readonly method: string;
  readonly url: string;
  readonly timeoutMs: number;
  readonly attempts: number;

  /** `secrets` are removed from the URL. */
  constructor(method: string, url: string, timeoutMs: number, attempts: number, cause?: unknown, secrets: readonly string[] = []) {
    const shownUrl = redactUrl(url, secrets);
    const tries = attempts > 1 ? ` (${attempts} attempts)` : '';
    super('timeout', `${method} ${shownUrl} got no answer within ${timeoutMs} ms${tries}. Raise timeoutMs or check the service.`, {
      cause,
    });
    this.method = method;
    this.url = shownUrl;
    this.timeoutMs = timeoutMs;
    this.attempts = attempts;
  }
}

/** The call was refused locally: this credential cannot make it (the message says which can). */
export class CredentialError extends ListingAgentError {
  constructor(message: string) {
    super('credential', message);
  }
}

