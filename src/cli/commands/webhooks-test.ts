import { randomInt, randomUUID } from 'node:crypto';
import { DECISION_DEFAULTS } from '../../contract/limits.js';
import type { VoteCreateData, WebhookTestData } from '../../webhooks/events.js';
import { credentialForms, redact, redactUrl, urlCredentialForms } from '../../api/redact.js';
import { signDelivery } from '../../contract/signature.js';
import { printable } from '../../contract/printable.js';
import { parseCommandArgs } from '../args.js';
import { EXIT, UsageError, type CliIo } from '../io.js';
import { errorMessage } from '../../errors.js';

const COMMAND = 'webhooks test';

export const WEBHOOKS_TEST_HELP = `Usage: listing-agent webhooks test --url URL --secret SECRET [--type TYPE] [--timeout MS]
       listing-agent webhooks test --url URL --v0 --authorization SECRET [--type TYPE]

Send one test delivery to any webhook URL, signed as the listing service signs it (like a
"send test event" button), and print the answer's status and how long it took.

Options:
  -u, --url URL              where to POST (http or https)
  -s, --secret SECRET        the webhook secret (whs_...) to sign a v1 delivery with
  -t, --type TYPE            webhook.test (default) or vote.create; with --v0: test or upvote
      --v0                   send a legacy v0 vote instead (Authorization header, no signature)
      --authorization SECRET the legacy v0 Authorization secret (with --v0)
      --timeout MS           how long to wait for the answer (default 5000, the service's deadline)
  -h, --help                 show this help

The payload is realistic but made up (example IDs); the secret is never printed.
Exit codes: 0 the URL answered 2xx, 1 any other answer, a timeout or a network error, 2 usage error.
`;

/** A made-up but well-formed project and user (Snowflake-shaped IDs), as a real delivery carries. */
const EXAMPLE_PROJECT = { id: '1230000000000000001', type: 'bot', platform: 'discord', platform_id: '1230000000000000002' };
const EXAMPLE_USER = { id: '1230000000000000003', platform_id: '1230000000000000004', name: 'listing-agent test', avatar_url: null };

type TestType = 'webhook.test' | 'vote.create';

/** The Snowflake epoch (2015-01-01, Discord's and the service's). */
const SNOWFLAKE_EPOCH_MS = 1_420_070_400_000;

/** A Snowflake-shaped vote ID for `nowMs` (random below the time), as the agent takes a vote's `data.id`. */
const voteIdAt = (nowMs: number) => String((BigInt(nowMs - SNOWFLAKE_EPOCH_MS) << 22n) | BigInt(randomInt(0, 1 << 22)));

/** Whether a UTC instant falls on the service's weekend (Friday to Sunday). */
function isWeekend(ms: number): boolean {
  const day = new Date(ms).getUTCDay();
  return day === 5 || day === 6 || day === 0;
}

/** The `{ type, data }` body of a v1 test delivery. */
function v1TestBody(type: TestType, nowMs: number): string {
  if (type === 'webhook.test') {
    const data: WebhookTestData = { project: EXAMPLE_PROJECT, user: EXAMPLE_USER };
    return JSON.stringify({ type, data });
  }
  const data: VoteCreateData = {
    id: voteIdAt(nowMs),
    weight: isWeekend(nowMs) ? 2 : 1,
    created_at: new Date(nowMs).toISOString(),
    expires_at: new Date(nowMs + DECISION_DEFAULTS.voteExpirySeconds * 1000).toISOString(),
    project: EXAMPLE_PROJECT,
    user: EXAMPLE_USER,
  };
  return JSON.stringify({ type, data });
}

/** The body of a legacy v0 test vote. */
function v0TestBody(type: TestType, nowMs: number): string {
  return JSON.stringify({
    bot: EXAMPLE_PROJECT.platform_id,
    user: EXAMPLE_USER.platform_id,
    type: type === 'vote.create' ? 'upvote' : 'test',
    isWeekend: isWeekend(nowMs),
    query: '',
  });
}

function parseType(value: string | undefined, v0: boolean): TestType {
  switch (value) {
    case undefined:
    case 'webhook.test':
      return 'webhook.test';
    case 'vote.create':
      return 'vote.create';
    case 'test':
    case 'upvote':
      if (v0) return value === 'test' ? 'webhook.test' : 'vote.create';
  }
  const choices = v0 ? 'test, upvote, webhook.test or vote.create' : 'webhook.test or vote.create';
  throw new UsageError(`--type must be ${choices} (got '${value}')`, COMMAND);
}

interface TestRequest {
  url: URL;
  v0: boolean;
  type: TestType;
  timeoutMs: number;
  /** The signing secret (v1) or the Authorization value (v0). */
  secret: string;
}

function parse(argv: string[]): TestRequest | 'help' {
  const { values } = parseCommandArgs(COMMAND, argv, {
    url: { type: 'string', short: 'u' },
    secret: { type: 'string', short: 's' },
    type: { type: 'string', short: 't' },
    v0: { type: 'boolean' },
    authorization: { type: 'string' },
    timeout: { type: 'string' },
  });
  if (values.help) return 'help';
  const str = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const urlText = str('url');
  if (urlText === undefined || urlText === '') throw new UsageError('give the URL to send to: --url URL', COMMAND);
  let url: URL;
  try {
    url = new URL(urlText);
  } catch {
    throw new UsageError(`--url is not a URL (got '${urlText}')`, COMMAND);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--url must be http or https (got '${url.protocol}')`, COMMAND);
  if (url.username !== '' || url.password !== '') {
    // fetch refuses such a URL, and its message would repeat the password; this one repeats nothing of it.
    throw new UsageError(
      '--url holds user info (a user or a password before the @), which fetch cannot send: give the URL without it',
      COMMAND,
    );
  }
  const v0 = values.v0 === true;
  const secret = str('secret');
  const authorization = str('authorization');
  // The secrets' values never reach a message: only which flag is missing or misplaced.
  if (v0) {
    if (authorization === undefined || authorization === '')
      throw new UsageError('--v0 needs the legacy secret: --authorization SECRET', COMMAND);
    if (secret !== undefined) throw new UsageError('--secret signs v1 deliveries; with --v0 give --authorization only', COMMAND);
  } else {
    if (authorization !== undefined) throw new UsageError('--authorization is for legacy deliveries: add --v0', COMMAND);
    if (secret === undefined || secret === '') throw new UsageError('give the webhook secret: --secret SECRET', COMMAND);
  }
  const timeoutText = str('timeout');
  const timeoutMs = timeoutText === undefined ? DECISION_DEFAULTS.deliveryTimeoutMs : Number(timeoutText);
  if (timeoutText !== undefined && (!/^\d+$/.test(timeoutText) || timeoutMs < 1 || timeoutMs > 600_000)) {
    throw new UsageError(`--timeout must be a whole number of milliseconds from 1 to 600000 (got '${timeoutText}')`, COMMAND);
  }
  return { url, v0, type: parseType(str('type'), v0), timeoutMs, secret: (v0 ? authorization : secret) ?? '' };
}

/** A short, single-line excerpt of an answer body, for the user to see why a receiver refused. */
function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

async function send(request: TestRequest, io: CliIo): Promise<number> {
  const now = Date.now();
  const traceId = randomUUID();
  const rawBody = request.v0 ? v0TestBody(request.type, now) : v1TestBody(request.type, now);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'listing-agent webhooks test',
    ...(request.v0
      ? { authorization: request.secret }
      : signDelivery({ secret: request.secret, rawBody, timestampSeconds: Math.floor(now / 1000), traceId })),
  };
  const what = request.v0 ? `legacy ${request.type === 'vote.create' ? 'upvote' : 'test'}` : request.type;
  // What is printed never holds the secret, the URL's password or its ?token=, even when the
  // receiver's answer or an error repeats them.
  const secrets = [...credentialForms(request.secret), ...urlCredentialForms(request.url.href)];
  const target = redactUrl(request.url.href, secrets);
  const started = performance.now();
  const elapsed = () => `${Math.round(performance.now() - started)} ms`;
  try {
    // No redirects: the service posts to the URL itself, so a redirect is an answer to report.
    const response = await fetch(request.url, {
      method: 'POST',
      headers,
      body: rawBody,
      redirect: 'manual',
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    const text = await response.text().catch(() => '');
    const ok = response.status >= 200 && response.status < 300;
    const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    const trace = request.v0 ? '' : `, trace ${traceId}`;
    io.stdout(`${what} to ${target}: ${status} in ${elapsed()}${trace}\n`);
    if (text !== '') io.stdout(`answer: ${printable(excerpt(redact(text, secrets)))}\n`);
    if (!ok) io.stderr(`listing-agent webhooks test: the URL did not accept the delivery (a receiver answers 2xx)\n`);
    return ok ? EXIT.ok : EXIT.failure;
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    const cause =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : errorMessage(error);
    const why = timedOut ? `no answer within ${request.timeoutMs} ms` : `could not be reached (${redact(cause, secrets)})`;
    io.stderr(`listing-agent webhooks test: ${what} to ${target}: ${printable(why)} after ${elapsed()}\n`);
    return EXIT.failure;
  }
}

/**
 * `listing-agent webhooks test`: sends one signed test delivery (or a legacy v0 vote) to a URL and
 * prints the status and the time it took. Exit 0 on 2xx, 1 otherwise, 2 for a usage error.
 */
export async function runWebhooksTestCommand(argv: string[], io: CliIo): Promise<number> {
  let request: TestRequest | 'help';
  try {
    request = parse(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // A stray word may be a secret pasted without its flag: name the mistake, not the word.
    const message = /^unexpected argument/i.test(error.message)
      ? 'unexpected argument (not shown, in case it is a secret); every value goes after its flag'
      : error.message;
    io.stderr(`listing-agent: ${message}\nSee 'listing-agent ${COMMAND} --help'.\n`);
    return EXIT.usage;
  }
  if (request === 'help') {
    io.stdout(WEBHOOKS_TEST_HELP);
    return EXIT.ok;
  }
  return send(request, io);
}
