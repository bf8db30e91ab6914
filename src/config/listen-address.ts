/**
 * The listen address of the config's servers (`health.listen`, `webhooks.listen`,
 * `stats.push.listen`): `host:port`, `[v6]:port` or a bare port. One reading for the schema and
 * for the container's health probe (src/cli/healthcheck.ts), which must ask where the daemon listens.
 */

/** `health.listen`'s default: where the health server listens, and the probe asks, when nothing says otherwise. */
export const HEALTH_LISTEN_DEFAULT = '127.0.0.1:9464';

/** The problem with a value that is not a listen address, as the config reports it. */
export const LISTEN_ADDRESS_PROBLEM = 'must be host:port (for example 127.0.0.1:9464) or a port';

/**
 * Reads `text` as a listen address (`defaultHost` for a bare port): the host without brackets and
 * the port (http/listen-error.ts's `ListenAddress`), or undefined when it is not one.
 */
export function parseListenAddress(text: string, defaultHost: string): { host: string; port: number } | undefined {
  const match = /^(?:(\[[^\]]+\]|[^:\s]+):)?(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65_535) return undefined;
  return { host: (match[1] ?? defaultHost).replace(/^\[|\]$/g, ''), port };
}
