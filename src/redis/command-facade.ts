import { RedisUnavailableError, type RedisClient } from './connection-types.js';
import type { Link } from './links.js';

/**
 * The `client` a connection hands out: the client's own command methods, with every reply seen by
 * the connection first (a `READONLY` reply means the server became a replica). Every command
 * fails after `deadlineMs` without an answer (plus the time a `WAIT` or a `BLOCK` asks the server
 * to take): the client's own timeout ends once a command is written, so a frozen server (stopped,
 * or cut off behind a connection that stays open) would hold it for ever. Behind a Sentinel link
 * it is the Sentinel client under the plain client's `sendCommand(args)`, and a command fails at
 * once while no primary is connected (the Sentinel client would otherwise hold it until the
 * failover is over, past every deadline). On a Redis
 * Cluster, `sendCommand(args)` goes to the primary of the agent's slot (that of `routeKey`), keyless
 * commands too (`ROLE`, `INFO`, `WAIT`, `SCAN`), so that they are about the server the keys are on.
 */

/** Methods that are no commands: passed through as they are, never gated or timed. */
const NOT_COMMANDS = new Set<PropertyKey>([
  'on', 'once', 'off', 'addListener', 'removeListener', 'removeAllListeners', 'prependListener', 'prependOnceListener',
  'emit', 'listeners', 'listenerCount', 'eventNames', 'connect', 'close', 'destroy', 'disconnect', 'quit', 'ref', 'unref',
  'multi', 'MULTI', 'duplicate', 'withCommandOptions', 'withTypeMapping', 'withAbortSignal', 'asap', 'legacy',
]);

/** What the facade tells its connection, and how long a command behind a Sentinel may take. */
export interface FacadeOptions {
  /** On a cluster: the key every command is routed by (the prefix, a hash tag: the slot of every key of the agent). */
  routeKey: string;
  /** Every error a command rejects with. */
  observe(error: unknown): void;
  /** The longest a command may wait for its answer (the client's own timeout ends once a command is written). */
  deadlineMs: number;
  /** A command had no answer within its deadline. */
  late(): void;
  /** Behind a Sentinel: why a command cannot be sent now (the connection's down reason). */
  unavailable(): string;
}

/**
 * Commands without a key, that the cluster client would send to any node (or to all): the
 * connection sends them to the primary of the agent's slot itself, on the connection its writes go
 * through (`WAIT` counts the replicas that have this connection's writes).
 */
const KEYLESS = new Set(['ROLE', 'INFO', 'CONFIG', 'SCAN', 'WAIT', 'PING', 'CLIENT', 'TIME', 'DBSIZE', 'SCRIPT']);

interface ClusterTarget {
  sendCommand(key: string, readonly: boolean, args: readonly string[], commandOptions?: unknown): Promise<unknown>;
  getNodeClientForKey(key: string): Promise<{ sendCommand(args: readonly string[], commandOptions?: unknown): Promise<unknown> }>;
}

/** `args` on the cluster: routed by `routeKey` (a `MOVED` followed), or to the primary of its slot when keyless. */
async function clusterSend(target: unknown, routeKey: string, args: readonly string[], commandOptions: unknown): Promise<unknown> {
  const cluster = target as ClusterTarget;
  if (!KEYLESS.has(String(args[0]).toUpperCase())) return cluster.sendCommand(routeKey, false, args, commandOptions);
  const node = await cluster.getNodeClientForKey(routeKey);
  return node.sendCommand(args, commandOptions);
}

/** `promise`, or a `RedisUnavailableError` once `ms` passed without its answer (and then `onLate`). */
export function withDeadline(promise: Promise<unknown>, ms: number, onLate?: () => void): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new RedisUnavailableError(`Redis: no answer within ${ms} ms`));
      onLate?.();
    }, ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** How long the server itself is asked to wait before it answers `args`: a `WAIT`'s timeout, a `BLOCK`'s. */
function serverWaitMs(args: unknown): number {
  if (!Array.isArray(args)) return 0;
  const words = args.map(String);
  if (words[0]?.toUpperCase() === 'WAIT') return Number(words[2]) || 0;
  const block = words.findIndex((word) => word.toUpperCase() === 'BLOCK');
  return block < 0 ? 0 : Number(words[block + 1]) || 0;
}

/** The client `link` sends commands through, as the connection hands it out. */
export function commandFacade(link: Link, options: FacadeOptions): RedisClient {
  const target = link.target as unknown as Record<PropertyKey, unknown>;
  // Behind Sentinels or a cluster the client holds a command until it has a primary: the facade does not.
  const followed = link.kind !== 'server';
  const run = (call: () => unknown, args?: unknown): unknown => {
    if (followed && !link.canSend()) {
      const error = new RedisUnavailableError(`Redis: no primary connected (${options.unavailable()})`);
      return Promise.reject(error);
    }
    const called = call();
    if (!(called instanceof Promise)) return called;
    const result = withDeadline(called, options.deadlineMs + serverWaitMs(args), options.late);
    return result.catch((error: unknown) => {
      options.observe(error);
      throw error;
    });
  };
  const facade = new Proxy(target, {
    get(object, property) {
      if (link.kind === 'cluster' && property === 'sendCommand') {
        const { routeKey } = options;
        return (args: readonly string[], commandOptions?: unknown) => run(() => clusterSend(object, routeKey, args, commandOptions), args);
      }
      if (link.kind === 'sentinel' && property === 'sendCommand') {
        const send = object.sendCommand as (readonly: boolean, args: unknown, commandOptions?: unknown) => Promise<unknown>;
        return (args: unknown, commandOptions?: unknown) => run(() => send.call(object, false, args, commandOptions), args);
      }
      const value = Reflect.get(object, property, object) as unknown;
      if (typeof value !== 'function') return value;
      if (NOT_COMMANDS.has(property) || typeof property === 'symbol') return (value as (...a: unknown[]) => unknown).bind(object);
      return (...args: unknown[]) => run(() => Reflect.apply(value as (...a: unknown[]) => unknown, object, args), args[0]);
    },
  });
  return facade as unknown as RedisClient;
}
