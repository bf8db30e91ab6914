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

/**
 * How often the number of replicas is read again (`INFO replication`) when it is not set. On one
 * server, what is read only ever raises what is asked: a primary seen with a replica that now has
 * none (its replica promoted away from it, so it is about to be demoted, or its replica died) is
 * asked for one all the same, and its writes are refused until a replica has them again. Another
 * server (`forget()`) starts from what it has: a primary just promoted, whose old primary is gone or
 * has not joined it yet, takes writes alone, as any primary without replicas does.
 */
const REPLICAS_READ_EVERY_MS = 5_000;

/** Options of {@link createConfirmer}. */
export interface ConfirmerOptions {
  /** The connection's client: `WAIT` goes where its writes went (on a cluster, the slot's primary). */
  client: () => RedisClient;
  /** Replicas to wait for; undefined: 1 when the primary has (or, on the same server, had) a replica (`connected_slaves`), else 0. */
  replicas: number | undefined;
  /** The deadline of one `WAIT`. */
  timeoutMs: number;
  /** Called when writes start being refused (the reason) and when one is confirmed again (undefined); not for each write. */
  onRefused?: (reason: string | undefined) => void;
  /** The clock (ms) the count of replicas ages by. Default `performance.now`. */
  now?: () => number;
}

/** Confirms this connection's writes so far on the replicas asked for; rejects when they cannot. */
export type Confirm = (what: string) => Promise<void>;

/** The confirmer of one connection (and `forget()`, for a new server: the replicas are read again). */
export function createConfirmer(options: ConfirmerOptions): { confirm: Confirm; forget(): void } {
  const now = options.now ?? (() => performance.now());
  let known: { replicas: number; at: number } | undefined;
  /** This server was seen with a replica: it is asked for one until another server is reached. */
  let hadReplica = false;
  /** Why writes are refused now, as last told to `onRefused`. */
  let refused: string | undefined;
  const tell = (reason: string | undefined) => {
    if (reason === refused) return;
    refused = reason;
    options.onRefused?.(reason);
  };
  let inFlight: Promise<number> | undefined;
  let next: Promise<number> | undefined;

  const wanted = async (): Promise<number> => {
    if (options.replicas !== undefined) return options.replicas;
    if (known === undefined || now() - known.at > REPLICAS_READ_EVERY_MS) {
      const info = String(await options.client().sendCommand(['INFO', 'replication']));
      const replicas = Math.min(1, Number(infoField(info, 'connected_slaves') ?? 0));
      hadReplica ||= replicas > 0;
      known = { replicas, at: now() };
    }
    return hadReplica ? 1 : known.replicas;
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
        if (needed === 0) return tell(undefined);
        got = await shared(needed);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        throw new RedisUnavailableError(`Redis: could not confirm ${what} on a replica: ${detail}`, { cause: error });
      }
      if (got >= needed) return tell(undefined);
      const on = `${needed} replica${needed === 1 ? '' : 's'}`;
      // Asked for a replica this primary no longer has: say why, and how to stop asking.
      const gone = options.replicas === undefined && known?.replicas === 0
        ? '; this primary had a replica and has none now (promoted away from it, or gone: ' +
          'set state.redis.replicas to 0 if you removed it)'
        : '';
      const shortfall = `not confirmed on ${on} within ${options.timeoutMs} ms (${got} confirmed)`;
      tell(`${shortfall}${gone}`);
      throw new RedisUnavailableError(
        `Redis: ${what} is ${shortfall}: a failover could take it back, so it is refused (state.redis.replicas)${gone}`,
      );
    },
    forget() {
      known = undefined;
      hadReplica = false;
      tell(undefined);
    },
  };
}
