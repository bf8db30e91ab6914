import type { EventEmitter } from 'node:events';
import { redactUrl } from '../api/redact.js';
import { CLIENT_VERSION } from '../api/version.js';
import { secretValues } from '../config/secrets.js';
import type { ListingAgentConfig } from '../config/schema.js';
import { stateDirectory } from '../config/state-directory.js';
import { ListingAgentError } from '../errors.js';
import type { LeaderOnlyCapability } from '../leader/gate.js';
import type { AgentLogger } from '../log/agent-logger.js';
import type { Capability } from '../runtime/capability.js';
import type { Readiness } from '../runtime/readiness.js';
import type { RecordedMetrics } from '../runtime/metrics-recorder.js';
import type { StatsCapability } from '../stats/capability.js';
import { ActionError, type StatusActions } from '../status/actions.js';
import { buildStatusDocument, withoutSecrets, type StatusLive } from '../status/build.js';
import { createStatusCollector, type StatusCollector } from '../status/collector.js';
import type { StatusDocument, StatusReminders } from '../status/document.js';
import { createStatusPages, type StatusPages } from '../status/pages.js';
import type { StateStore } from '../store/types.js';
import { cursorStateKey, parseCursorState } from '../votes/cursor-state.js';
import type { VotesCapability } from '../votes/capability.js';
import type { SecretEntry } from '../webhooks/secrets-file.js';
import type { WebhooksCapability } from '../webhooks/capability.js';
import type { AgentCluster } from './cluster.js';
import type { AgentEvents } from './events.js';

/**
 * The status page, wired to the agent: a collector fed by the agent's events, the live reads
 * (readiness, the vote pipeline, the stored cursor, the secret file, the delivery counters), and
 * the actions. The status capability sees none of the others: only what this file hands it.
 */

/** What {@link createAgentStatus} reads from the agent. */
export interface AgentStatusOptions {
  events: EventEmitter<AgentEvents>;
  config: ListingAgentConfig;
  store: StateStore;
  logger: AgentLogger;
  now: () => number;
  readiness: Readiness;
  /** The agent's metrics (the delivery counters are read from them). */
  metrics: RecordedMetrics;
  cluster: AgentCluster | undefined;
  mode: 'embedded' | 'daemon';
  phase: () => string;
  /** The capabilities started now. */
  started: () => readonly Capability[];
}

/** The status page of one agent. */
export interface AgentStatus {
  /** The routes the health server serves. */
  readonly pages: StatusPages;
  /** The document `/status.json` serves now, secrets removed. */
  document(): Promise<StatusDocument>;
  /** The agent started: uptime counts from now, and the delivery counters are read every minute. */
  start(): void;
  stop(): void;
}

const DELIVERIES_METRIC = 'listing_agent_webhook_deliveries_total';
const DELIVERY_READING_MS = 60_000;
const SECRETS_READ_EVERY_MS = 10_000;

function subscribe(
  events: EventEmitter<AgentEvents>,
  collector: StatusCollector,
  onProject: (project: { id: string; name: string }) => void,
): void {
  events.on('posted', (result) => collector.posted(result));
  events.on('postFailed', (failure) => collector.postFailed(failure));
  events.on('commandsSynced', (result) => collector.commandsSynced(result));
  events.on('commandsSyncFailed', (failure) => collector.commandsSyncFailed(failure));
  events.on('voteReceived', (vote) => collector.voteReceived(vote));
  events.on('voteHookRan', (run) => collector.hookRan(run));
  events.on('error', (error) => collector.error(error));
  events.on('ready', ({ projectId, projectName }) => onProject({ id: projectId, name: projectName }));
}

/** The running capability called `name`, through a leader gate when there is one (`standby`: the gate is closed). */
function capability<C extends Capability>(
  started: readonly Capability[],
  name: string,
  has: (c: Capability) => c is C,
): { found?: C; standby?: boolean } {
  const c = started.find((s) => s.name === name);
  if (c === undefined) return {};
  if ('inner' in c) {
    const gate = c as LeaderOnlyCapability;
    return gate.active && has(gate.inner) ? { found: gate.inner } : { standby: !gate.active };
  }
  return has(c) ? { found: c } : {};
}

const isVotes = (c: Capability): c is VotesCapability => 'pollNow' in c;
const isStats = (c: Capability): c is StatsCapability => 'postNow' in c;
const isWebhooks = (c: Capability): c is WebhooksCapability => 'url' in c;

function newest(
  entries: readonly SecretEntry[],
  now: number,
  entryLive: (entry: SecretEntry, now: number) => boolean,
): { stored: number; newestStoredAt: number | null } {
  const live = entries.filter((e) => entryLive(e, now));
  const times = live.map((e) => Date.parse(e.addedAt)).filter(Number.isFinite);
  return { stored: live.length, newestStoredAt: times.length > 0 ? Math.max(...times) : null };
}

/** The delivery counters now, per outcome (`listing_agent_webhook_deliveries_total`). */
async function readDeliveries(metrics: RecordedMetrics): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const series = metrics.counters.find((counter) => counter.name === DELIVERIES_METRIC)?.series() ?? [];
  for (const { labels, value } of series) counts[String(labels.outcome)] = value;
  return counts;
}

/** The stored secrets (the file, and Redis with a cluster): how many, and when the newest was added; read at most every 10 s. */
function storedSecretsReader(options: AgentStatusOptions): () => Promise<{ stored: number; newestStoredAt: number | null }> {
  const { config, cluster, now } = options;
  let last: { at: number; value: Promise<{ stored: number; newestStoredAt: number | null }> } | undefined;
  return () => {
    if (last && now() - last.at < SECRETS_READ_EVERY_MS) return last.value;
    const value = (async () => {
      // Read only with webhooks on: loaded then, not by every agent with a status page.
      const { entryLive, readSecretFile, secretFilePath } = await import('../webhooks/secrets-file.js');
      const file = await readSecretFile(secretFilePath(stateDirectory(config))).catch(() => undefined);
      const redisSecrets = cluster ? (await import('../webhooks/secrets-redis.js')).readRedisSecrets : undefined;
      const shared = redisSecrets && cluster ? await redisSecrets(cluster.connection).catch(() => undefined) : undefined;
      return newest([...(file?.secrets ?? []), ...(shared?.secrets ?? [])], now(), entryLive);
    })();
    last = { at: now(), value };
    return value;
  };
}

/** The store's directory and whether it takes writes, for the page's header. */
function stateDirectoryWrites(store: StateStore): StatusLive['stateDirectory'] {
  const health = store.writeHealth;
  if (health === undefined) return null;
  const { writable, problem, reason, since } = health.state();
  return { path: health.directory, writable, problem, reason, since };
}

/**
 * The vote reminders now (the next 10 due, the count, the last sent); undefined when off. A
 * schedule that cannot be read (Redis down) shows as enabled with the count unknown: the page
 * still answers.
 */
async function remindersNow(config: ListingAgentConfig, votes: VotesCapability | undefined): Promise<StatusReminders | undefined> {
  if (!config.votes.reminders.enabled || !(config.votes.enabled || config.webhooks.enabled)) return undefined;
  const reminders = votes?.reminders;
  if (reminders === undefined) return { enabled: true, scheduled: null, next: [], lastSent: [] };
  const [scheduled, next, lastSent] = await Promise.all([
    reminders.size().catch(() => null),
    reminders.next(10).catch(() => []),
    reminders.lastSent().catch(() => []),
  ]);
  return { enabled: true, scheduled, next, lastSent };
}

/** What the agent knows now, for the document: readiness, the pipeline, the cursor, the secrets, the counters. */
function liveReader(
  options: AgentStatusOptions,
  collector: StatusCollector,
  known: { project: StatusLive['project']; startedAt: number | null },
): () => Promise<StatusLive> {
  const { config, store, readiness, metrics, cluster } = options;
  const secretAges = storedSecretsReader(options);
  async function cursor(): Promise<StatusLive['votes']['cursor']> {
    if (!config.votes.enabled || known.project === null) return null;
    const state = parseCursorState(await store.get(cursorStateKey(known.project.id)).catch(() => undefined));
    collector.cursor(state?.cursor ?? null);
    return { position: state?.cursor ?? null, newestVoteAt: state?.newestCreatedAt ?? null };
  }
  return async () => {
    const started = options.started();
    const votes = capability(started, 'votes', isVotes).found;
    const pipeline = votes?.pipeline;
    const [deadLetters, cursorNow, stored, deliveries, reminders] = await Promise.all([
      pipeline ? pipeline.failed().catch(() => []) : Promise.resolve([]),
      cursor(),
      config.webhooks.enabled ? secretAges() : Promise.resolve({ stored: 0, newestStoredAt: null }),
      readDeliveries(metrics),
      remindersNow(config, votes),
    ]);
    return {
      version: CLIENT_VERSION,
      mode: options.mode,
      phase: options.phase(),
      startedAt: known.startedAt,
      project: known.project,
      cluster: cluster
        ? { agentId: cluster.agentId, leader: cluster.leadership.isLeader, leaderId: cluster.leadership.leaderId ?? null }
        : null,
      readiness: readiness.snapshot(),
      stateDirectory: stateDirectoryWrites(store),
      stats: { enabled: config.stats.enabled },
      commands: { enabled: config.commands.enabled, intervalMs: config.commands.interval ?? null },
      votes: {
        enabled: config.votes.enabled || config.webhooks.enabled,
        polling: config.votes.enabled,
        pending: pipeline ? pipeline.stats().votes : null,
        deadLetters: deadLetters.map((l) => ({
          key: l.key,
          hook: l.hook,
          userId: l.vote.userId,
          attempts: l.attempts,
          error: l.error,
          failedAt: l.failedAt,
        })),
        cursor: cursorNow,
        ...(reminders === undefined ? {} : { reminders }),
      },
      webhooks: {
        enabled: config.webhooks.enabled,
        receiverUrl: capability(started, 'webhooks', isWebhooks).found?.url ?? null,
        // The page needs no token: a password or ?token= in the URL is not shown.
        publicUrl: config.webhooks.publicUrl === undefined ? null : redactUrl(config.webhooks.publicUrl, []),
        secrets: { configured: config.webhooks.secrets.length + (config.webhooks.legacyAuthorization ? 1 : 0), ...stored },
        deliveries,
      },
      actions: config.health.adminToken !== undefined,
    };
  };
}

/** Creates the status page of an agent; `events` is the agent. */
export function createAgentStatus(options: AgentStatusOptions): AgentStatus {
  const { config, logger, now, metrics } = options;
  const collector = createStatusCollector({ now, historyMs: config.health.history });
  const secrets = secretValues(config);
  const known: { project: StatusLive['project']; startedAt: number | null } = { project: null, startedAt: null };
  subscribe(options.events, collector, (reached) => (known.project = reached));
  const live = liveReader(options, collector, known);
  let timer: NodeJS.Timeout | undefined;

  let building: Promise<StatusDocument> | undefined;
  /** One build at a time: viewers asking at once share it. */
  function document(): Promise<StatusDocument> {
    building ??= live()
      .then((values) => withoutSecrets(buildStatusDocument(collector.collected(), values, now(), config.health.history), secrets))
      .finally(() => (building = undefined));
    return building;
  }

  const { adminToken } = config.health;
  const pages = createStatusPages({ document, actions: statusActions(options), adminToken, logger, mode: options.mode });
  return {
    pages,
    document,
    start() {
      known.startedAt = now();
      const read = () => void readDeliveries(metrics).then((counts) => collector.deliveries(counts), () => undefined);
      read();
      clearInterval(timer);
      timer = setInterval(read, DELIVERY_READING_MS);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      pages.flush();
    },
  };
}

/** The actions: retry dead letters through the running pipeline, post through the running stats capability. */
function statusActions(options: AgentStatusOptions): StatusActions {
  const { config, events } = options;
  const notRunning = (what: string) => new ActionError(409, `${what} is not running: the agent is ${options.phase()}`);
  return {
    async retryDeadLetters(filter) {
      const pipeline = capability(options.started(), 'votes', isVotes).found?.pipeline;
      if (pipeline === undefined) {
        throw config.votes.enabled || config.webhooks.enabled
          ? notRunning('the vote pipeline')
          : new ActionError(409, 'votes are off here (votes.enabled, webhooks.enabled): there are no dead letters');
      }
      try {
        return { retried: await pipeline.retry(filter) };
      } catch (error) {
        if (error instanceof ListingAgentError) throw new ActionError(error.code === 'votes_unknown_hook' ? 400 : 409, error.message);
        throw error;
      }
    },
    async postStatsNow() {
      if (!config.stats.enabled) throw new ActionError(409, 'stats posting is off: set stats.enabled');
      const { found, standby } = capability(options.started(), 'stats', isStats);
      if (standby) {
        const leader = options.cluster?.leadership.leaderId ?? 'none yet';
        throw new ActionError(409, `this agent stands by: the leader (${leader}) posts the stats; ask it`);
      }
      if (found === undefined) throw notRunning('stats posting');
      const posted: { target: string; servers: number | null; shards: number | null }[] = [];
      const failed: { target: string; error: string }[] = [];
      const onPosted = (result: AgentEvents['posted'][0]) => {
        const last = result.samples.at(-1);
        posted.push({ target: result.target, servers: last?.serverCount ?? null, shards: last?.shardCount ?? null });
      };
      const onFailed = (failure: AgentEvents['postFailed'][0]) => failed.push({ target: failure.target, error: failure.error.message });
      events.on('posted', onPosted);
      events.on('postFailed', onFailed);
      try {
        await found.postNow();
      } finally {
        events.off('posted', onPosted);
        events.off('postFailed', onFailed);
      }
      const note =
        posted.length + failed.length === 0
          ? 'nothing was posted: the counts are not ready, or a rate limit or backoff holds posts back (see the stats component)'
          : undefined;
      return { posted, failed, ...(note ? { note } : {}) };
    },
  };
}
