import type { z } from 'zod';
import { ValidationError, type FieldIssue } from '../errors.js';
import { type Validated, invalid } from '../contract/field-problems.js';
import type { Credential } from './credentials.js';
import { botIdFromToken } from './credentials.js';
import { CredentialError } from './errors.js';
import { createCooldownTracker, createSlidingWindow, type CooldownTracker, type SlidingWindow } from './limits.js';
import type { Transport, TransportClock, TransportRequest } from './transport.js';
import { CONTRACT_LIMITS } from '../contract/limits.js';

/** Per-call options every method takes last. */
export interface CallOptions {
  /** Aborts the call, retries and waits included. */
  signal?: AbortSignal;
  /** Per-attempt timeout; default the client's (15 000 ms). */
  timeoutMs?: number;
}

/** One v1 or v0 call, as an API module describes it. */
export interface ApiCall<T> {
  /** `projects.get`, for messages. */
  operation: string;
  method: TransportRequest['method'];
  /** Path below the base URL, segments already encoded (`/projects/@me/votes`). */
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  /** May it be sent again after it may have reached the service? */
  idempotent: boolean;
  /** Validates (and types) the answer's body. Absent: the body is ignored. */
  response?: z.ZodType<T>;
  options?: CallOptions | undefined;
  /** v0 only: counts against the 60/min bot-endpoint bucket. Default true (false for `/users/:id`). */
  botRoute?: boolean;
}

/** What every API module is built on: the credential, the bases, the transport, the limits. */
export interface ApiContext {
  credential: Credential;
  v1BaseUrl: string;
  v0BaseUrl: string;
  clock: TransportClock;
  transport: Transport;
  /** Answers are checked against the contract's schemas unless false. Default true. */
  validateResponses: boolean;
  /** The announcement cooldown learnt per project segment. */
  announcementCooldown: CooldownTracker;
  /** Sends a v1 call with the client's credential (`Authorization: Bearer`). */
  v1<T>(call: ApiCall<T>): Promise<T>;
  /** Sends a v0 call with the raw project token, through the 60/min bucket. */
  v0<T>(call: ApiCall<T>): Promise<T>;
  /** The bot ID of the v0 token (v0's default `:bot_id`). */
  v0BotId(operation: string): string;
  /** Secrets to keep out of messages. */
  secrets(): string[];
}

/** Throws a request `ValidationError` when `issues` is not empty. */
export function checkRequest(operation: string, issues: readonly FieldIssue[]): void {
  if (issues.length > 0) throw new ValidationError('request', `the request of ${operation}`, [...issues]);
}

/**
 * The value of a contract validator's result, or the request `ValidationError` naming every
 * problem (thrown before anything is sent). A typed companion of `checkRequest`.
 */
export function requireValid<T>(operation: string, result: Validated<T>): T {
  if (result.ok) return result.value;
  checkRequest(operation, result.problems);
  // A failed Validated always names a problem, so checkRequest has thrown; this keeps the types honest.
  throw new TypeError(`${operation}: a validator failed without naming a problem`);
}

/** Throws the request `ValidationError` for one problem at `path` (nothing is sent). */
export function refuseRequest(operation: string, path: string, message: string): never {
  return requireValid<never>(operation, invalid(path, message));
}

/** Zod issues as field issues (`data[0].metrics.server_count`). */
export function zodIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.reduce<string>(
      (text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)),
      '',
    ),
    message: issue.message,
  }));
}

function buildUrl(base: string, path: string, query: ApiCall<unknown>['query']): string {
  const url = new URL(base.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

/** Options of {@link createApiContext}. */
export interface ApiContextOptions {
  credential: Credential;
  v1BaseUrl: string;
  v0BaseUrl: string;
  /** The raw token for v0; default the project token of `credential`. */
  v0Token?: string | undefined;
  transport: Transport;
  clock: TransportClock;
  validateResponses: boolean;
}

/** What the shared calls work with: the options, the v0 token and its 60/min bucket. */
interface CallState {
  readonly options: ApiContextOptions;
  readonly v0Token: string | undefined;
  readonly v0Bucket: SlidingWindow;
}

/** Every secret the client holds (the credential's tokens, the v0 token), for redaction. */
function secretsOf({ options, v0Token }: CallState): string[] {
  const { credential } = options;
  const list: string[] = [];
  if (credential.kind === 'oauth') {
    if (typeof credential.accessToken === 'string') list.push(credential.accessToken);
    else list.push(...(credential.accessToken.secrets?.() ?? []));
  } else {
    list.push(credential.token);
  }
  if (v0Token) list.push(v0Token);
  return list;
}

async function bearer({ options: { credential } }: CallState, signal: AbortSignal | undefined): Promise<string> {
  if (credential.kind !== 'oauth') return credential.token;
  return typeof credential.accessToken === 'string' ? credential.accessToken : credential.accessToken.getAccessToken(signal);
}

/** The answer's body, checked against the call's schema unless validation is off. */
function parse<T>(state: CallState, call: ApiCall<T>, body: unknown): T {
  if (!call.response) return undefined as T;
  if (!state.options.validateResponses) return body as T;
  const result = call.response.safeParse(body);
  if (!result.success) throw new ValidationError('response', `the answer to ${call.operation}`, zodIssues(result.error));
  return result.data;
}

async function sendV1<T>(state: CallState, call: ApiCall<T>): Promise<T> {
  const token = await bearer(state, call.options?.signal);
  const res = await state.options.transport.send({
    family: 'v1',
    method: call.method,
    url: buildUrl(state.options.v1BaseUrl, call.path, call.query),
    headers: { authorization: `Bearer ${token}` },
    json: call.json,
    idempotent: call.idempotent,
    secrets: [...secretsOf(state), token],
    signal: call.options?.signal,
    timeoutMs: call.options?.timeoutMs,
  });
  return parse(state, call, res.body);
}

async function sendV0<T>(state: CallState, call: ApiCall<T>): Promise<T> {
  const { v0Token, options } = state;
  if (!v0Token) {
    throw new CredentialError(`${call.operation} is a v0 call: it needs a project token (pass projectToken or v0Token)`);
  }
  if (call.botRoute !== false) {
    const wait = state.v0Bucket.reserve(options.clock.now());
    if (wait > 0) await options.clock.sleep(wait, call.options?.signal);
  }
  const res = await options.transport.send({
    family: 'v0',
    method: call.method,
    url: buildUrl(options.v0BaseUrl, call.path, call.query),
    headers: { authorization: v0Token },
    json: call.json,
    idempotent: call.idempotent,
    secrets: secretsOf(state),
    signal: call.options?.signal,
    timeoutMs: call.options?.timeoutMs,
  });
  return parse(state, call, res.body);
}

/** Builds the context the API modules share. */
export function createApiContext(options: ApiContextOptions): ApiContext {
  const { credential } = options;
  const state: CallState = {
    options,
    v0Token: options.v0Token ?? (credential.kind === 'project' ? credential.token : undefined),
    v0Bucket: createSlidingWindow(CONTRACT_LIMITS.v0BotRequestsPerMinute, 60_000),
  };
  return {
    credential,
    v1BaseUrl: options.v1BaseUrl,
    v0BaseUrl: options.v0BaseUrl,
    clock: options.clock,
    transport: options.transport,
    validateResponses: options.validateResponses,
    announcementCooldown: createCooldownTracker(),
    v1: (call) => sendV1(state, call),
    v0: (call) => sendV0(state, call),
    v0BotId(operation) {
      if (!state.v0Token) throw new CredentialError(`${operation} needs the bot ID: pass botId, or a project token to read it from`);
      return botIdFromToken(state.v0Token);
    },
    secrets: () => secretsOf(state),
  };
}
