import { z } from 'zod';
import { isLoopbackHost } from '../contract/webhook-url.js';
import { HOST_NAME_PATTERN } from '../http/host-check.js';
import { parseDuration } from './duration.js';
import { LISTEN_ADDRESS_PROBLEM, parseListenAddress } from './listen-address.js';

/*
 * The kinds of field the configuration's sections are made of (schema-build.ts): secrets, durations,
 * URLs, listen addresses. Each is made by a function, as the sections are.
 */

/** Field paths whose values are secrets (masked in `config check`, redacted from logs). */
export const SECRET_PATHS = new Set<string>();

/** A secret field at `path` (noted in SECRET_PATHS): a non-empty string with no `${VAR}` left in it. */
export function secret(path: string) {
  SECRET_PATHS.add(path);
  return z
    .string()
    .min(1)
    .superRefine((value, ctx) => {
      // A `${VAR}` left in a secret would be sent as it is: a hook signed with the text `${SECRET}`.
      const variable = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(value)?.[1];
      if (variable === undefined) return;
      const message = `holds \${${variable}}, which is not replaced here: only a config file read by loadConfig or listing-agent run ` +
        `has its \${VAR}s replaced; in code, pass the value of ${variable} itself`;
      ctx.addIssue({ code: 'custom', message, continue: false });
    })
    .meta({ description: 'secret: masked in every printout', writeOnly: true });
}

/** Names of the agent's own variables: its settings and credentials (`LISTING_AGENT_*`, `LISTING_OAUTH_*`). */
const AGENT_CREDENTIAL_VARIABLE = /^LISTING_(AGENT|OAUTH)_/;

/**
 * A variable an exec hook copies from the agent's environment (`votes.hooks[].env[]`): a name,
 * never one of the agent's own (`LISTING_*`: its settings, its OAuth tokens, the vote's variables
 * it sets for each call). A variable the config reads is refused where that is known (the loader).
 */
export function hookVariableName() {
  return z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable (letters, digits and _, not beginning with a digit)')
    .superRefine((name, ctx) => {
      if (AGENT_CREDENTIAL_VARIABLE.test(name)) {
        const message =
          `${name} is one of the agent's own variables (LISTING_AGENT_*, LISTING_OAUTH_*): an exec hook never gets the agent's ` +
          'settings or credentials; give the hook what it needs under a name of its own';
        ctx.addIssue({ code: 'custom', message });
      } else if (name.startsWith('LISTING_')) {
        const message =
          `${name} begins with LISTING_, the agent's own names (it sets LISTING_VOTE_*, LISTING_IDEMPOTENCY_KEY and ` +
          'LISTING_HOOK_TYPE for each call): give the variable a name of its own';
        ctx.addIssue({ code: 'custom', message });
      }
    });
}

/** What a shared secret that requests carry is told when it is too short. */
const SHORT_SHARED_SECRET =
  'must be at least 16 characters: whoever reaches its port can try values, and a shorter one can be guessed ' +
  '(make one with: openssl rand -hex 32)';

/**
 * A secret that requests carry, compared by the agent (`health.adminToken`, `stats.push.key`,
 * `webhooks.legacyAuthorization`): anyone who reaches the port can send guesses, so it has at
 * least 16 characters.
 */
export function sharedSecret(path: string) {
  return secret(path).min(16, SHORT_SHARED_SECRET);
}

/** A host name a request may name in its `Host` header (`health.allowedHosts[]`). */
export function hostName() {
  const message = 'must be a host name such as listing-agent or status.example.com, without a scheme or a port (the port is not compared)';
  return z.string().regex(HOST_NAME_PATTERN, message);
}

/** An http(s) URL the project token is sent to: plain http only to this machine (a local emulator). */
export function serviceUrl() {
  return absoluteUrl().refine((value) => {
    // Not a URL at all: absoluteUrl() says so.
    if (!URL.canParse(value)) return true;
    const url = new URL(value);
    return url.protocol !== 'http:' || isLoopbackHost(url.hostname);
  }, 'is plain http to another machine: the project token would cross the network unencrypted; use https (plain http only on 127.0.0.1, ' +
    'localhost or [::1], for a local emulator)');
}

/** A duration: `500ms`, `30s`, `5m`, `12h`, `1d`, `1h30m`. Read as milliseconds. */
export function duration(min: string, max: string) {
  const minMs = parseDuration(min)!;
  const maxMs = parseDuration(max)!;
  return z
    .string()
    .regex(/^(\d+(\.\d+)?(ms|s|m|h|d))+$/, 'must be a duration such as 30s, 5m, 12h or 1h30m')
    .transform((text) => parseDuration(text)!)
    .refine((ms) => ms >= minMs && ms <= maxMs, `must be from ${min} to ${max}`)
    .meta({ description: `a duration from ${min} to ${max} (units ms, s, m, h, d)` });
}

/** An absolute URL of one of `protocols`. */
export const absoluteUrl = (protocols: readonly string[] = ['http:', 'https:']) =>
  z.string().refine((value) => {
    try {
      return protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, `must be an absolute URL (${protocols.map((p) => p.slice(0, -1)).join(' or ')})`);

/** `host:port`, `[v6]:port` or a bare port; read as `{host, port}` (listen-address.ts). */
export function listenAddress(defaultHost: string) {
  return z
    .string()
    .transform((text, ctx) => {
      const address = parseListenAddress(text, defaultHost);
      if (address === undefined) {
        ctx.addIssue({ code: 'custom', message: LISTEN_ADDRESS_PROBLEM });
        return z.NEVER;
      }
      return address;
    })
    .meta({ description: 'host:port, [v6]:port, or a port (host 127.0.0.1)' });
}
