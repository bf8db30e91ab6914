import { RedisUnavailableError, type RedisClient } from './connection-types.js';
import { infoField } from './server.js';

/**
 * Confirmed writes: before the agent takes a write as done (a webhook vote answered 2xx, the
 * votes cursor's checkpoint moved, a hook's completion final, a fencing token handed out), `WAIT`
 * asks the primary for that many replicas to have it, within a deadline. A write a failover could
 * still take back is refused as a write to a Redis that is down is: the caller fails (the webhook
 * is answered 503, and the service sends it again).
 *
 * `WAIT` counts the replicas that have every write this connection made, so a confirmation covers
 * every write before it: the callers that ask while one `WAIT` is in flight share the next one
 * (at 1 000 votes a second, a few `WAIT`s a millisecond apart, not one each).
 */

/** How often the number of replicas is read again (`INFO replication`) when it is not set. */
const REPLICAS_READ_EVERY_MS = 5_000;

/** Options of {@link createConfirmer}. */
export interface ConfirmerOptions {
  /** The connection's client: `WAIT` goes where its writes went (on a cluster, the slot's primary). */
  client: () => RedisClient;
  /** Replicas to wait for; undefined: 1 when the primary has a replica (`connected_slaves`), else 0. */
  replicas: number | undefined;
  /** The deadline of one `WAIT`. */
  timeoutMs: number;
  /** The clock (ms) the count of replicas ages by. Default `performance.now`. */
  now?: () => number;
}

/** Confirms this connection's writes so far on the replicas asked for; rejects when they cannot. */
export type Confirm = (what: string) => Promise<void>;

/** The confirmer of one connection (and `forget()`, for a new server: the replicas are read again). */
export function createConfirmer(options: ConfirmerOptions): { confirm: Confirm; forget(): void } {
  const now = options.now ?? (() => performance.now());
  let known: { replicas: number; at: number } | undefined;
  let inFlight: Promise<number> | undefined;
  let next: Promise<number> | undefined;

  const wanted = async (): Promise<number> => {
    if (options.replicas !== undefined) return options.replicas;
    if (known === undefined || now() - known.at > REPLICAS_READ_EVERY_MS) {
      const info = String(await options.client().sendCommand(['INFO', 'replication']));
      known = { replicas: Math.min(1, Number(infoField(info, 'connected_slaves') ?? 0)), at: now() };
    }
    return known.replicas;
  };

  const send = (needed: number): Promise<number> => {
    const waited = options.client().sendCommand(['WAIT', String(needed), String(options.timeoutMs)]);
    inFlight = Promise.resolve(waited)
      .then(Number)
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  /** A `WAIT` sent after this call: the one in flight may have left before the caller's write. */
  const shared = (needed: number): Promise<number> => {
    if (inFlight === undefined) return send(needed);
    next ??= inFlight
      .catch(() => 0)
      .then(() => {
        next = undefined;
        return shared(needed);
      });
    return next;
  };

  return {
    async confirm(what) {
      let needed: number;
      let got: number;
      try {
        needed = await wanted();
        if (needed === 0) return;
        got = await shared(needed);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        throw new RedisUnavailableError(`Redis: could not confirm ${what} on a replica: ${detail}`, { cause: error });
      }
      if (got >= needed) return;
      const on = `${needed} replica${needed === 1 ? '' : 's'}`;
      throw new RedisUnavailableError(
        `Redis: ${what} is not confirmed on ${on} within ${options.timeoutMs} ms (${got} confirmed): ` +
          'a failover could take it back, so it is refused (state.redis.replicas)',
      );
    },
    forget() {
      known = undefined;
    },
  };
}
