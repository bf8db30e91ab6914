import { isIP } from 'node:net';

/*
 * Which `Host` a request to one of the agent's pages may name (issue 34: the health server
 * answered any Host, so a page the operator visited could read `/status.json` through DNS
 * rebinding: its own name, made to resolve to 127.0.0.1). A rebinding attack needs a name the
 * attacker controls, so the server answers:
 *
 * - an IP address (`127.0.0.1`, `[::1]`, `10.0.0.5`): a page can only be of that origin if it
 *   came from that address, that is from the agent;
 * - `localhost`, which browsers resolve to this machine themselves;
 * - its listen host, when that is a name, and the names the operator lists
 *   (`health.allowedHosts`: the name Prometheus, a proxy or a container network uses).
 *
 * The port is not compared: the name is what rebinding changes, and a forwarded port
 * (`docker run -p 8080:9464`) makes browsers send `:8080`. A request without a `Host` (HTTP/1.0;
 * node refuses an HTTP/1.1 request without one) is answered: no browser sends one.
 */

/** One label of a host name: letters, digits, `-` and `_`, 63 at most, no `-` at either end. */
const LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';

/** A host name as `health.allowedHosts` takes it: labels joined by dots (253 characters at most, a final dot allowed); no port. */
export const HOST_NAME_PATTERN = new RegExp(`^(?=.{1,253}\\.?$)${LABEL}(?:\\.${LABEL})*\\.?$`, 'i');

/** The name a `Host` header names, lower case, without its port or a final dot (`[::1]:9464` -> `::1`); undefined for none. */
export function hostOf(header: string): string | undefined {
  const text = header.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return isIP(bracketed[1]!) === 6 ? bracketed[1] : undefined;
  const named = /^([^:]+)(?::\d{1,5})?$/.exec(text);
  if (!named || !HOST_NAME_PATTERN.test(named[1]!)) return undefined;
  return named[1]!.replace(/\.$/, '');
}

/** The names (besides IP addresses and `localhost`) a server answers: its listen host when it is a name, and the listed ones. */
export function allowedHostNames(listenHost: string, listed: readonly string[]): ReadonlySet<string> {
  const names = new Set<string>(['localhost']);
  for (const name of [listenHost, ...listed]) {
    const host = hostOf(name);
    if (host !== undefined) names.add(host);
  }
  return names;
}

/** Whether a request with this `Host` header may be answered (see the module comment). */
export function hostAllowed(header: string | undefined, names: ReadonlySet<string>): boolean {
  if (header === undefined || header === '') return true;
  const host = hostOf(header);
  return host !== undefined && (isIP(host) !== 0 || names.has(host));
}
