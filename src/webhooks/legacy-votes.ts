import { DECISION_DEFAULTS } from '../contract/limits.js';
import type { StateStore } from '../store/types.js';
import type { Vote } from '../contract/vote.js';
import type { LegacyVote } from './events.js';

/**
 * Vote keys for legacy (v0) deliveries, which carry neither the service's user ID nor the vote's
 * `created_at` nor a vote ID: only the voter's platform (Discord) ID and the bot or guild.
 *
 * **The scheme.** The first v0 delivery of a vote opens an *anchor* for its (project, voter): the
 * receive time, kept durably. Every delivery of the same (project, voter) within
 * {@link LEGACY_RETRY_WINDOW_MS} (6 h) of the anchor is a retry of that vote and gets the same key
 * `v0:<project>:<platform user>:<anchor epoch ms>`, so the ledger drops it as a duplicate; a
 * delivery later than that opens a new anchor, and so a new vote.
 *
 * **Why it never merges two real votes.** A user votes at most once per 12 h. Two real votes'
 * first deliveries are thus at least 12 h apart less the delay of the first one's delivery; they
 * share an anchor only if that delay passed 6 h (the service retries for minutes, not hours).
 * **What it costs.** A retry arriving more than 6 h after the first delivery of its vote would
 * count as a new vote. These keys never match the poller's (`<user_id>:<created_at>`): a vote seen
 * by v0 and by the cursor fires the hooks twice, so use one road or the other for a project.
 */

/** How long after a v0 vote's first delivery a delivery of the same voter is taken as its retry: half the vote window. */
const LEGACY_RETRY_WINDOW_MS = (DECISION_DEFAULTS.voteExpirySeconds * 1000) / 2;

/** The part of a state store the anchors need (the agent's store, or none: memory). */
export type AnchorStore = Pick<StateStore, 'get' | 'set' | 'delete' | 'keys'>;

/** Options of {@link createLegacyVoteKeys}. */
export interface LegacyVoteKeysOptions {
  /** Where anchors are kept across restarts. Default: memory (a retry after a restart may count twice). */
  store?: AnchorStore;
  /** Epoch ms. */
  now: () => number;
  /** Default {@link LEGACY_RETRY_WINDOW_MS}. */
  windowMs?: number;
}

/** Makes the {@link Vote} of a v0 upvote. */
export interface LegacyVoteKeys {
  /** The vote of `legacy` for `projectId`; resolves once its anchor is durable. Rejects when the store cannot write. */
  voteFor(legacy: LegacyVote, projectId: string): Promise<Vote>;
}

const PREFIX = 'webhooks:v0:';
/** Anchors past the window are swept at most this often. */
const SWEEP_EVERY_MS = 10 * 60_000;

/** The memory stand-in of a store. */
function memoryStore(): AnchorStore {
  const map = new Map<string, unknown>();
  return {
    get: async <T>(key: string) => map.get(key) as T | undefined,
    set: async (key, value) => void map.set(key, value),
    delete: async (key) => void map.delete(key),
    keys: async (prefix) => [...map.keys()].filter((key) => key.startsWith(prefix)),
  };
}

/** Creates the v0 key maker (see the scheme above). */
export function createLegacyVoteKeys(options: LegacyVoteKeysOptions): LegacyVoteKeys {
  const { now } = options;
  const store = options.store ?? memoryStore();
  const windowMs = options.windowMs ?? LEGACY_RETRY_WINDOW_MS;
  /** One anchor decision at a time per voter: two retries racing must not open two anchors. */
  const lanes = new Map<string, Promise<unknown>>();
  let lastSweep = now();

  async function sweep(at: number): Promise<void> {
    lastSweep = at;
    for (const key of await store.keys(PREFIX)) {
      const anchor = await store.get<{ anchor: number }>(key);
      if (anchor === undefined || at - anchor.anchor >= windowMs) await store.delete(key);
    }
  }

  async function anchorFor(storeKey: string): Promise<number> {
    const at = now();
    const known = await store.get<{ anchor: number }>(storeKey);
    if (known !== undefined && typeof known.anchor === 'number' && at - known.anchor < windowMs && at >= known.anchor) return known.anchor;
    // Durable before the answer: a retry after a crash must find it.
    await store.set(storeKey, { anchor: at }, { durable: true });
    if (at - lastSweep > SWEEP_EVERY_MS) await sweep(at).catch(() => undefined);
    return at;
  }

  return {
    async voteFor(legacy, projectId) {
      const target = 'bot' in legacy ? legacy.bot : legacy.guild;
      const storeKey = `${PREFIX}${projectId}:${target}:${legacy.user}`;
      const previous = lanes.get(storeKey) ?? Promise.resolve();
      const decided = previous.then(() => anchorFor(storeKey), () => anchorFor(storeKey));
      const settled = decided.catch(() => undefined);
      lanes.set(storeKey, settled);
      void settled.then(() => {
        if (lanes.get(storeKey) === settled) lanes.delete(storeKey);
      });
      const anchor = await decided;
      const weekend = 'isWeekend' in legacy && legacy.isWeekend === true;
      return {
        key: `v0:${projectId}:${legacy.user}:${anchor}`,
        // v0 names the voter by their platform ID only: it stands in for the service user ID.
        userId: legacy.user,
        platformId: legacy.user,
        projectId,
        weight: weekend ? 2 : 1,
        createdAt: new Date(anchor).toISOString(),
        expiresAt: new Date(anchor + DECISION_DEFAULTS.voteExpirySeconds * 1000).toISOString(),
        road: 'webhook',
      };
    },
  };
}
