import type { ListingClient } from '../api/client.js';
import type { VoteStatus } from '../api/schemas/votes.js';
import type { VoteSource } from '../contract/limits.js';

/** Default of {@link HasVotedOptions.negativeTtlMs}: a "no" is asked again after 30 s. */
const DEFAULT_NEGATIVE_TTL_MS = 30_000;

/** Default of {@link HasVotedOptions.maxEntries}. */
const DEFAULT_HAS_VOTED_ENTRIES = 10_000;

/** Options of {@link createHasVoted}. */
export interface HasVotedOptions {
  client: Pick<ListingClient, 'votes'>;
  /** The project to ask about. Default: the client's (`@me` with a project token). */
  projectId?: string;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  /**
   * How long a "has not voted" answer is reused. Default {@link DEFAULT_NEGATIVE_TTL_MS}: short,
   * because the user may vote right after being told to (a "yes" is reused until `expires_at`).
   */
  negativeTtlMs?: number;
  /** Answers kept at most (the oldest go first). Default {@link DEFAULT_HAS_VOTED_ENTRIES}. */
  maxEntries?: number;
}

/** What `source` a user ID is in: the service's own IDs (default) or the user's Discord ID. */
export interface HasVotedQuery {
  source?: VoteSource;
}

/** `hasVoted` and the status behind it, with one cache. */
export interface HasVoted {
  /** True while the user has an active vote (asked through `GET votes/:user_id`, cached). */
  hasVoted(userId: string, query?: HasVotedQuery): Promise<boolean>;
  /** The user's active vote, or null (same cache). */
  status(userId: string, query?: HasVotedQuery): Promise<VoteStatus | null>;
  /** Forgets every cached answer (a vote just arrived for someone, say). */
  clear(): void;
}

interface Entry {
  status: VoteStatus | null;
  /** Epoch ms after which the answer is asked again. */
  until: number;
}

/**
 * Creates the single-user vote check: the service is asked once, and the answer is reused until
 * the vote's `expires_at` (a "yes"), or for `negativeTtlMs` (a "no"). Concurrent questions about
 * one user share one request. Errors are not cached; they reach the caller.
 */
export function createHasVoted(options: HasVotedOptions): HasVoted {
  const now = options.now ?? Date.now;
  const negativeTtlMs = options.negativeTtlMs ?? DEFAULT_NEGATIVE_TTL_MS;
  const maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_HAS_VOTED_ENTRIES);
  const cache = new Map<string, Entry>();
  const asking = new Map<string, Promise<VoteStatus | null>>();

  function remember(key: string, status: VoteStatus | null, at: number): void {
    const expires = status === null ? Number.NaN : Date.parse(status.expires_at);
    const until = status === null || Number.isNaN(expires) ? at + negativeTtlMs : expires;
    cache.delete(key);
    cache.set(key, { status, until });
    // A Map iterates in insertion order: the first key is the oldest answer.
    while (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
  }

  async function status(userId: string, query: HasVotedQuery = {}): Promise<VoteStatus | null> {
    const key = `${query.source ?? ''}:${userId}`;
    const cached = cache.get(key);
    if (cached && now() < cached.until) return cached.status;
    const inFlight = asking.get(key);
    if (inFlight) return inFlight;
    const request = options.client.votes
      .status(userId, query, options.projectId)
      .then((answer) => {
        remember(key, answer, now());
        return answer;
      })
      .finally(() => asking.delete(key));
    asking.set(key, request);
    return request;
  }

  return {
    status,
    async hasVoted(userId, query) {
      const found = await status(userId, query);
      return found !== null && now() < Date.parse(found.expires_at);
    },
    clear() {
      cache.clear();
    },
  };
}
