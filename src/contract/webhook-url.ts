import { CONTRACT_LIMITS } from './limits.js';

/**
 * The webhook label and URL rule of the contract ("label: required, up to 100 characters. url:
 * required, absolute https URL, up to 2048 characters"), shared by the emulator (422 on
 * `POST .../webhooks`, integration handshakes) and clients that validate before sending.
 * Lengths count Unicode code points, so an emoji is one character.
 */

/** Options of {@link webhookUrlProblem}. */
export interface WebhookUrlOptions {
  /**
   * Also accept `http://127.0.0.1`, `http://localhost` and `http://[::1]` (any port), for local
   * receivers. Default false: https only, as the service.
   */
  allowHttpLoopback?: boolean;
}

/** Hosts an `http:` URL may name when {@link WebhookUrlOptions.allowHttpLoopback} is set (as `URL.hostname` spells them). */
const LOOPBACK_HTTP_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '[::1]'];

/** Whether a URL's `hostname` is this machine (`127.0.0.1`, `localhost`, `[::1]`): where plain http stays local. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HTTP_HOSTS.includes(hostname);
}

/** A field of the webhook body that broke the rule, and why (the message starts with the field name). */
export interface WebhookInputProblem {
  field: 'label' | 'url';
  message: string;
}

const codePoints = (text: string): number => [...text].length;

// Whitespace, control characters and backslashes are not part of any URL (RFC 3986); the WHATWG
// parser would silently strip or rewrite them, so the stored URL would differ from the one given.
const NOT_IN_URL = /[\s\\\u0000-\u001f\u007f]/;
// `https:example.com` and `https:///example.com` parse (WHATWG, rewritten) but have no authority.
const SCHEME_AND_AUTHORITY = /^[a-z][a-z\d+.-]*:\/\/[^/?#]/i;

/**
 * Why `label` is not a valid webhook label, or null when it is: a string of 1 to 100 characters
 * that is not only whitespace.
 */
export function webhookLabelProblem(label: unknown): string | null {
  const max = CONTRACT_LIMITS.webhookLabelMaxLength;
  if (label === undefined || label === null) return `label is required: a string of 1 to ${max} characters`;
  if (typeof label !== 'string') return `label must be a string of 1 to ${max} characters`;
  // A blank label would show as nothing in the dashboard: treat it as missing.
  if (label.trim() === '') return `label is required: a string of 1 to ${max} characters, not only whitespace`;
  const length = codePoints(label);
  if (length > max) return `label is ${length} characters long; at most ${max} are allowed`;
  return null;
}

/**
 * Why `url` is not a valid webhook URL, or null when it is: an absolute `https://` URL with a host,
 * at most 2048 characters (with `allowHttpLoopback`, also `http://` on a loopback host).
 */
export function webhookUrlProblem(url: unknown, options: WebhookUrlOptions = {}): string | null {
  const max = CONTRACT_LIMITS.webhookUrlMaxLength;
  const wanted = options.allowHttpLoopback
    ? 'an absolute https URL (or http on 127.0.0.1, localhost or [::1])'
    : 'an absolute https URL';
  if (url === undefined || url === null || url === '') return `url is required: ${wanted}`;
  if (typeof url !== 'string') return `url must be a string: ${wanted}`;
  const length = codePoints(url);
  if (length > max) return `url is ${length} characters long; at most ${max} are allowed`;
  if (NOT_IN_URL.test(url)) return 'url must not contain whitespace, control characters or backslashes';
  if (!SCHEME_AND_AUTHORITY.test(url)) return `url must be ${wanted} (scheme://host/...)`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `url is not a valid URL: it must be ${wanted}`;
  }
  if (parsed.protocol === 'https:') return parsed.hostname === '' ? 'url must name a host' : null;
  if (parsed.protocol === 'http:' && options.allowHttpLoopback && isLoopbackHost(parsed.hostname)) {
    return null;
  }
  const scheme = parsed.protocol.slice(0, -1);
  return `url must be ${wanted}; got the scheme '${scheme}'${scheme === 'http' ? ` on host ${parsed.hostname}` : ''}`;
}

/** Every problem of a webhook creation body `{label, url}`, label first; empty when it is valid. */
export function webhookInputProblems(
  input: { label?: unknown; url?: unknown },
  options: WebhookUrlOptions = {},
): WebhookInputProblem[] {
  const problems: WebhookInputProblem[] = [];
  const label = webhookLabelProblem(input.label);
  if (label !== null) problems.push({ field: 'label', message: label });
  const url = webhookUrlProblem(input.url, options);
  if (url !== null) problems.push({ field: 'url', message: url });
  return problems;
}
