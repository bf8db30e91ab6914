import type { CollectedStatus } from './collector.js';
import { STATUS_DOCUMENT_VERSION, type StatusDocument, type StatusReminders } from './document.js';

/**
 * What the agent knows right now, read when the page is asked for (the collector holds what
 * happened; this is what is). The agent's composition layer fills it from its readiness, its
 * capabilities and its store.
 */
export interface StatusLive {
  version: string;
  mode: 'embedded' | 'daemon';
  phase: string;
  /** Epoch ms; null before the start. */
  startedAt: number | null;
  project: { id: string; name: string } | null;
  cluster: { agentId: string; leader: boolean; leaderId: string | null } | null;
  readiness: { ready: boolean; components: Record<string, { ready: boolean; detail: string; since: number }> };
  /** The state directory's write health (epoch ms), or null without one. */
  stateDirectory: { path: string; writable: boolean; problem: string | undefined; reason: string | undefined; since: number } | null;
  stats: { enabled: boolean };
  commands: { enabled: boolean; intervalMs: number | null };
  votes: {
    /** The pipeline runs (votes or webhooks enabled). */
    enabled: boolean;
    polling: boolean;
    pending: number | null;
    deadLetters: { key: string; hook: string; userId: string; attempts: number; error: string; failedAt: string }[];
    cursor: { position: string | null; newestVoteAt: string | null } | null;
    /** The vote reminders; omitted: off. */
    reminders?: StatusReminders;
  };
  webhooks: {
    enabled: boolean;
    receiverUrl: string | null;
    publicUrl: string | null;
    secrets: { configured: number; stored: number; newestStoredAt: number | null };
    /** The cumulative delivery counters now, per outcome. */
    deliveries: Record<string, number>;
  };
  actions: boolean;
}

/** Dead letters listed at most (the count says how many there are). */
const MAX_DEAD_LETTERS_LISTED = 100;

const HOUR_MS = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** Every hour of the window, with its counts (0 for an hour without votes). */
function hourly(collected: CollectedStatus, now: number, historyMs: number): StatusDocument['votes']['perHour'] {
  const byHour = new Map(collected.votesPerHour.map((h) => [h.hour, h]));
  const last = Math.floor(now / HOUR_MS) * HOUR_MS;
  const first = Math.floor((now - historyMs) / HOUR_MS) * HOUR_MS + HOUR_MS;
  const out: StatusDocument['votes']['perHour'] = [];
  for (let hour = first; hour <= last; hour += HOUR_MS) {
    const found = byHour.get(hour);
    out.push({ hour: iso(hour), poll: found?.poll ?? 0, webhook: found?.webhook ?? 0 });
  }
  return out;
}

/** Deliveries since the baseline: the counters now less the counters then. */
function lastHour(collected: CollectedStatus, live: StatusLive): Record<string, number> {
  const base = collected.deliveryBaseline?.counts ?? {};
  return Object.fromEntries(
    Object.entries(live.webhooks.deliveries).map(([outcome, count]) => [outcome, Math.max(0, count - (base[outcome] ?? 0))]),
  );
}

function stateDirectoryPart(state: NonNullable<StatusLive['stateDirectory']>): NonNullable<StatusDocument['agent']['stateDirectory']> {
  return {
    path: state.path,
    writable: state.writable,
    problem: state.problem ?? null,
    reason: state.reason ?? null,
    since: iso(state.since),
  };
}

function agentPart(collected: CollectedStatus, live: StatusLive, now: number): StatusDocument['agent'] {
  return {
    version: live.version,
    mode: live.mode,
    phase: live.phase,
    startedAt: isoOrNull(live.startedAt),
    uptimeMs: live.startedAt === null ? null : Math.max(0, now - live.startedAt),
    project: live.project,
    cluster: live.cluster,
    stateDirectory: live.stateDirectory === null ? null : stateDirectoryPart(live.stateDirectory),
    ready: live.readiness.ready,
    components: Object.entries(live.readiness.components)
      .map(([name, c]) => ({ name, ready: c.ready, detail: c.detail, since: iso(c.since) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    recentErrors: collected.errors.map((e) => ({ at: iso(e.at), message: e.message })),
  };
}

function commandsPart(collected: CollectedStatus, live: StatusLive): StatusDocument['commands'] {
  const sync = collected.lastSync;
  const lastCheck = Math.max(sync?.at ?? 0, collected.lastSyncFailure?.at ?? 0);
  return {
    enabled: live.commands.enabled,
    lastSync:
      sync === null
        ? null
        : {
            at: iso(sync.at),
            count: sync.count,
            hash: sync.hash,
            skipped: sync.skipped,
            reason: sync.reason,
            added: sync.added,
            removed: sync.removed,
            changed: sync.changed,
          },
    lastFailure:
      collected.lastSyncFailure === null ? null : { at: iso(collected.lastSyncFailure.at), error: collected.lastSyncFailure.error },
    nextCheckAt: live.commands.intervalMs !== null && lastCheck > 0 ? iso(lastCheck + live.commands.intervalMs) : null,
  };
}

/**
 * The status document (`/status.json`, version 1) from what was collected and what is live, at
 * `now` (epoch ms). Pure: the same inputs give the same document.
 */
export function buildStatusDocument(collected: CollectedStatus, live: StatusLive, now: number, historyMs: number): StatusDocument {
  return {
    version: STATUS_DOCUMENT_VERSION,
    generatedAt: iso(now),
    agent: agentPart(collected, live, now),
    stats: {
      enabled: live.stats.enabled,
      samples: collected.samples.map((s) => ({ at: iso(s.at), servers: s.servers, shards: s.shards })),
      posts: collected.posts.map((p) => ({ ...p, at: iso(p.at), retryAt: isoOrNull(p.retryAt) })),
      nextPostAt: isoOrNull(collected.nextPostAt),
      pendingSamples: collected.pendingSamples,
    },
    commands: commandsPart(collected, live),
    votes: {
      enabled: live.votes.enabled,
      polling: live.votes.polling,
      recent: collected.votes.map((v) => ({ ...v, receivedAt: iso(v.receivedAt) })),
      perHour: hourly(collected, now, historyMs),
      cursor: live.votes.cursor === null ? null : { ...live.votes.cursor, movedAt: isoOrNull(collected.cursorMovedAt) },
      pending: live.votes.pending,
      deadLetters: live.votes.deadLetters.slice(0, MAX_DEAD_LETTERS_LISTED),
      deadLetterCount: live.votes.deadLetters.length,
      reminders: live.votes.reminders ?? { enabled: false, scheduled: null, next: [], lastSent: [] },
    },
    webhooks: {
      enabled: live.webhooks.enabled,
      lastHour: lastHour(collected, live),
      since: isoOrNull(collected.deliveryBaseline?.at ?? null),
      receiverUrl: live.webhooks.receiverUrl,
      publicUrl: live.webhooks.publicUrl,
      secrets: {
        configured: live.webhooks.secrets.configured,
        stored: live.webhooks.secrets.stored,
        newestStoredAt: isoOrNull(live.webhooks.secrets.newestStoredAt),
      },
    },
    actions: { enabled: live.actions },
  };
}

/**
 * A copy of `value` with every occurrence of each secret in its strings replaced by `********`:
 * the last guard before a page leaves the agent (error texts are redacted where they are made;
 * this catches one that was not).
 */
export function withoutSecrets<T>(value: T, secrets: readonly string[]): T {
  const present = secrets.filter((s) => s.length > 0);
  if (present.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return present.reduce((text, secret) => text.split(secret).join('********'), v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, child]) => [k, walk(child)]));
    return v;
  };
  return walk(value) as T;
}
