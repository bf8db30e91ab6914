import { errorMessage, ListingAgentError } from '../errors.js';

/** Where a server listens: a host (name, IPv4 or IPv6 without brackets) and a port (0: any free one). */
export interface ListenAddress {
  host: string;
  port: number;
}

/** The setting that chose the address, so that the error can say what to change. */
export interface ListenSetting {
  /** The config path (`health.listen`). */
  path: string;
  /** The environment variable that sets it (`LISTING_AGENT_HEALTH_LISTEN`), when there is one. */
  env?: string;
}

/** Why listening failed: `in_use` (EADDRINUSE), `not_local` (not an address of this machine), `denied` (EACCES), `other`. */
export type ListenProblem = 'in_use' | 'not_local' | 'denied' | 'other';

/** `127.0.0.1:9464`, or `[::1]:9464` for IPv6. */
export function formatAddress({ host, port }: ListenAddress): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function problemOf(code: string | undefined): ListenProblem {
  switch (code) {
    case 'EADDRINUSE':
      return 'in_use';
    // A host name that does not resolve is as unusable as an IP this machine does not have.
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return 'not_local';
    case 'EACCES':
    case 'EPERM':
      return 'denied';
    default:
      return 'other';
  }
}

/** The fix phrase: `set health.listen to X (ENV)`, or a generic one when no setting is known. */
function setTo(setting: ListenSetting | undefined, value: string): string {
  if (!setting) return `listen on ${value}`;
  return `set ${setting.path} to ${value}${setting.env ? ` (${setting.env})` : ''}`;
}

function describe(problem: ListenProblem, address: ListenAddress, cause: unknown, setting: ListenSetting | undefined): string {
  const where = formatAddress(address);
  switch (problem) {
    case 'in_use':
      return `${where} is in use: ${setTo(setting, 'a free port')} or stop the other process`;
    case 'not_local':
      return `${address.host} is not an address of this ` +
        `machine: ${setTo(setting, formatAddress({ host: '127.0.0.1', port: address.port }))}, or 0.0.0.0:${address.port} to listen on ` +
        `every interface`;
    case 'denied':
      return `not allowed to listen on ${where}: ${setTo(setting, address.port < 1024 ? 'a port above 1023' : 'another port')}`;
    case 'other': {
      // Keep the message on one line whatever the cause says.
      const said = errorMessage(cause).replace(/\s+/g, ' ').trim();
      return `cannot listen on ${where} (${said}): ${setTo(setting, 'another address')}`;
    }
  }
}

/**
 * A server could not listen. The message is one line naming the address and the fix, for example
 * `health server: 127.0.0.1:9464 is in use: set health.listen to a free port
 * (LISTING_AGENT_HEALTH_LISTEN) or stop the other process`. Code `listen`; the system error is the
 * `cause`. Shared by every server the agent runs (health, webhook receiver).
 */
export class ListenError extends ListingAgentError {
  /** The server that failed (`health server`). */
  readonly what: string;
  readonly address: ListenAddress;
  readonly problem: ListenProblem;
  /** The system error code (`EADDRINUSE`), when there was one. */
  readonly systemCode: string | undefined;

  /**
   * @param what The server, as the message names it (`health server`, `webhook receiver`).
   * @param address Where it tried to listen.
   * @param cause The error `listen` failed with.
   * @param setting The setting to change. Default: none (the fix is then phrased generically).
   */
  constructor(what: string, address: ListenAddress, cause: unknown, setting?: ListenSetting) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const systemCode = typeof code === 'string' ? code : undefined;
    const problem = problemOf(systemCode);
    super('listen', `${what}: ${describe(problem, address, cause, setting)}`, { cause });
    this.what = what;
    this.address = { ...address };
    this.problem = problem;
    this.systemCode = systemCode;
  }
}
