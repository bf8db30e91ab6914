import type { StatusDocument, StatusPost, StatusVote } from './document.js';
import { formatCount, formatLatency, formatSpan, plural, shorten, timeView, type TimeView } from './format.js';
import { remindersView, type RemindersView } from './reminders-view.js';
import { settingName } from '../config/setting-names.js';

/**
 * The status page's view model: what the page shows, in words, from a {@link StatusDocument}.
 * Pure (the document carries its own time), so that every line of the page is unit-tested
 * without a server or a browser; html.ts only lays it out.
 */

/** How a line should look: green, amber, red, or plain. Never the only signal: the words say it too. */
export type Tone = 'ok' | 'warn' | 'bad' | 'neutral';

/** One labelled value. */
export interface Fact {
  label: string;
  value: string;
  tone?: Tone;
  /** Shown as a `<time>` after the value. */
  time?: TimeView;
  /** Monospace (IDs, hashes, URLs). */
  code?: boolean;
}

/** What every section has: on or off, a headline and its facts. */
export interface SectionView {
  enabled: boolean;
  /** What to set to turn it on (shown instead of the rest when off). */
  off: string;
  tone: Tone;
  summary: string;
  facts: Fact[];
}

/** One post in the table (newest first). */
interface PostRow {
  at: TimeView;
  target: string;
  outcome: string;
  tone: Tone;
  counts: string;
  note: string;
}

/** One vote in the table (newest first). */
interface VoteRow {
  who: string;
  userId: string;
  source: string;
  cast: TimeView;
  received: TimeView;
  hooks: { hook: string; text: string; tone: Tone }[];
}

/** One dead letter in the table, with what its retry button sends. */
export interface DeadLetterRow {
  key: string;
  hook: string;
  userId: string;
  attempts: string;
  error: string;
  failedAt: TimeView;
}

/** The whole page. */
export interface StatusView {
  title: string;
  facts: Fact[];
  overall: { tone: Tone; text: string };
  components: { name: string; tone: Tone; state: string; detail: string; since: TimeView }[];
  errors: { at: TimeView; message: string }[];
  stats: SectionView & { posts: PostRow[]; plotLabel: string };
  commands: SectionView & { changes: { label: string; names: string[] }[] };
  votes: SectionView & {
    votes: VoteRow[];
    deadLetters: DeadLetterRow[];
    deadLetterNote: string;
    plotLabel: string;
    reminders: RemindersView;
  };
  webhooks: SectionView & { deliveries: { outcome: string; label: string; count: string; tone: Tone }[] };
  actions: { enabled: boolean; text: string };
  generatedAt: TimeView;
}

/** Posts listed in the table (the plot shows them all). */
export const POSTS_LISTED = 10;

/** Votes listed in the table (status.json has the 50 newest). */
export const VOTES_LISTED = 15;

/** What each delivery outcome means, in the order the table lists them. */
const DELIVERY_LABELS: Record<string, string> = {
  accepted: 'accepted',
  duplicate: 'duplicate (already recorded; answered 2xx)',
  bad_signature: 'bad signature',
  stale: 'stale (outside the clock tolerance)',
  malformed: 'malformed',
  too_large: 'too large',
  rejected: 'rejected (wrong path or method, body never came)',
  error: 'not recorded (answered 503, the service retries)',
};

/** What the page says about the actions while they are off, naming the setting as the agent's mode reads it. */
const howToEnableActions = (mode: StatusDocument['agent']['mode']) =>
  `Read-only. To retry dead letters and post stats from here (and with the CLI's --agent), ` +
    `set ${settingName('health.adminToken', mode)} to a long random string and restart the agent.`;

function header(doc: StatusDocument): Pick<StatusView, 'title' | 'facts' | 'overall'> {
  const { agent } = doc;
  const facts: Fact[] = [];
  if (agent.project) facts.push({ label: 'Project ID', value: agent.project.id, code: true });
  facts.push({ label: 'Version', value: agent.version }, { label: 'Mode', value: agent.mode });
  if (agent.cluster) {
    const { cluster } = agent;
    facts.push(
      cluster.leader
        ? { label: 'Role', value: `leader (${cluster.agentId})`, tone: 'ok' }
        : {
            label: 'Role',
            value: `standby (${cluster.agentId}); leader: ${cluster.leaderId ?? 'none yet'}`,
            tone: cluster.leaderId ? 'neutral' : 'warn',
          },
    );
  } else {
    facts.push({ label: 'Role', value: 'the only agent (no Redis)' });
  }
  facts.push(
    { label: 'Up', value: agent.uptimeMs === null ? 'not started' : formatSpan(agent.uptimeMs) },
    { label: 'Phase', value: agent.phase },
  );
  const directory = agent.stateDirectory;
  if (directory) {
    facts.push(
      directory.writable
        ? { label: 'State directory', value: `${directory.path}: takes writes` }
        : {
            label: 'State directory',
            value: `cannot write: ${directory.reason ?? directory.path}; new votes are refused until it can`,
            tone: 'bad',
            time: timeView(directory.since, Date.parse(doc.generatedAt)),
          },
    );
  }
  const waiting = agent.components.filter((c) => !c.ready).map((c) => c.name);
  const overall = agent.ready
    ? { tone: 'ok' as const, text: 'Ready: every component works' }
    : { tone: 'bad' as const, text: waiting.length > 0 ? `Not ready: ${waiting.join(', ')}` : `Not ready (${agent.phase})` };
  return { title: agent.project?.name ?? 'listing-agent', facts, overall };
}

function postRow(post: StatusPost, now: number): PostRow {
  const counts = post.servers === null ? '' : `${formatCount(post.servers)} servers, ${plural(post.shards ?? 0, 'shard')}`;
  if (post.outcome === 'failed') {
    return {
      at: timeView(post.at, now),
      target: post.target,
      outcome: 'failed',
      tone: 'bad',
      counts,
      note: `${post.error ?? 'failed'}${post.retryAt ? `; retry ${timeView(post.retryAt, now).relative}` : ''}`,
    };
  }
  const batch = post.samples > 1 ? `${post.samples} samples` : '';
  return {
    at: timeView(post.at, now),
    target: post.target,
    outcome: post.outcome === 'retried' ? 'ok after retries' : 'ok',
    tone: post.outcome === 'retried' ? 'warn' : 'ok',
    counts,
    note: batch,
  };
}

/** The words beside the counts' plot: over how long, how many samples and posts. */
function plotLabel(doc: StatusDocument, stats: StatusDocument['stats']): string {
  const span = formatSpan(Date.parse(doc.generatedAt) - Date.parse(stats.samples[0]?.at ?? doc.generatedAt));
  const failed = stats.posts.filter((p) => p.outcome === 'failed').length;
  const counts = `${plural(stats.samples.length, 'sample')}, ${plural(stats.posts.length, 'post')} (${failed} failed)`;
  return `Server and shard counts posted over the last ${span}: ${counts}.`;
}

function statsView(doc: StatusDocument, now: number): StatusView['stats'] {
  const { stats } = doc;
  const last = stats.posts.at(-1);
  const lastSuccess = stats.posts.findLast((p) => p.outcome !== 'failed');
  const sample = stats.samples.at(-1);
  const facts: Fact[] = [];
  if (sample) facts.push({ label: 'Servers', value: formatCount(sample.servers) }, { label: 'Shards', value: formatCount(sample.shards) });
  if (lastSuccess) facts.push({ label: 'Last success', value: lastSuccess.target, time: timeView(lastSuccess.at, now), tone: 'ok' });
  if (last?.outcome === 'failed')
    facts.push({ label: 'Last failure', value: last.error ?? 'failed', time: timeView(last.at, now), tone: 'bad' });
  if (stats.nextPostAt)
    facts.push({ label: last?.outcome === 'failed' ? 'Retry' : 'Next post', value: '', time: timeView(stats.nextPostAt, now) });
  if (stats.pendingSamples !== null)
    facts.push({ label: 'Kept for the retry', value: plural(stats.pendingSamples, 'sample'), tone: 'warn' });
  const summary = !last
    ? 'No post yet: the first goes out once the counts are ready.'
    : last.outcome === 'failed'
      ? `The last post (${last.target}) failed: ${last.error ?? 'unknown error'}. The counts are kept and retried.`
      : `Posted ${last.servers === null ? '' : `${formatCount(last.servers)} servers `}` +
        `${timeView(last.at, now).relative} (${last.target}).`;
  return {
    enabled: stats.enabled,
    off: `Stats posting is off: set ${settingName('stats.enabled', doc.agent.mode)}.`,
    tone: !last ? 'neutral' : last.outcome === 'failed' ? 'bad' : last.outcome === 'retried' ? 'warn' : 'ok',
    summary,
    facts,
    posts: stats.posts.slice(-POSTS_LISTED).reverse().map((p) => postRow(p, now)),
    plotLabel: plotLabel(doc, stats),
  };
}

function commandsView(doc: StatusDocument, now: number): StatusView['commands'] {
  const { lastSync, lastFailure, nextCheckAt } = doc.commands;
  const failedLast = lastFailure !== null && (lastSync === null || Date.parse(lastFailure.at) >= Date.parse(lastSync.at));
  const facts: Fact[] = [];
  if (lastSync) {
    facts.push(
      { label: 'Last check', value: lastSync.skipped ? 'unchanged, nothing sent' : 'synced', time: timeView(lastSync.at, now), tone: 'ok' },
      { label: 'Commands', value: formatCount(lastSync.count) },
      { label: 'Hash', value: shorten(lastSync.hash, 8), code: true },
      { label: 'Why', value: lastSync.reason },
    );
  }
  if (lastFailure)
    facts.push({
      label: 'Last failure',
      value: lastFailure.error,
      time: timeView(lastFailure.at, now),
      tone: failedLast ? 'bad' : 'neutral',
    });
  facts.push(
    nextCheckAt
      ? { label: 'Next check', value: '', time: timeView(nextCheckAt, now) }
      : { label: 'Next check', value: 'at the next start (commands.interval is not set)' },
  );
  const changes =
    lastSync && !lastSync.skipped
      ? [
          { label: 'added', names: lastSync.added },
          { label: 'removed', names: lastSync.removed },
          { label: 'changed', names: lastSync.changed },
        ].filter((c) => c.names.length > 0)
      : [];
  return {
    enabled: doc.commands.enabled,
    off: `Command sync is off: set ${settingName('commands.enabled', doc.agent.mode)}.`,
    tone: failedLast ? 'bad' : lastSync ? 'ok' : 'neutral',
    summary: failedLast
      ? `The last sync failed: ${lastFailure!.error}`
      : lastSync
        ? `${plural(lastSync.count, 'command')} on the listing, checked ${timeView(lastSync.at, now).relative}.`
        : 'No sync yet.',
    facts,
    changes,
  };
}

function hookText(hook: StatusVote['hooks'][number]): { hook: string; text: string; tone: Tone } {
  const latency = formatLatency(hook.latencyMs);
  if (hook.outcome === 'ok')
    return {
      hook: hook.hook,
      text: `ok in ${latency}${hook.attempts > 1 ? ` (try ${hook.attempts})` : ''}`,
      tone: hook.attempts > 1 ? 'warn' : 'ok',
    };
  if (hook.outcome === 'retrying')
    return { hook: hook.hook, text: `failed (try ${hook.attempts}, ${latency}), retrying: ${hook.error ?? ''}`, tone: 'warn' };
  return { hook: hook.hook, text: `gave up after ${plural(hook.attempts, 'try', 'tries')}: ${hook.error ?? ''}`, tone: 'bad' };
}

function votesView(doc: StatusDocument, now: number): StatusView['votes'] {
  const { votes } = doc;
  const facts: Fact[] = [];
  if (votes.cursor) {
    const none = 'none yet: the first poll rewards the votes cast from the first start on (earlier ones only with votes.lookback)';
    facts.push({
      label: 'Cursor',
      value: votes.cursor.position === null ? none : shorten(votes.cursor.position),
      code: votes.cursor.position !== null,
    });
    if (votes.cursor.newestVoteAt) facts.push({ label: 'Newest vote seen', value: '', time: timeView(votes.cursor.newestVoteAt, now) });
    if (votes.cursor.movedAt) facts.push({ label: 'Cursor moved', value: '', time: timeView(votes.cursor.movedAt, now) });
  } else if (!votes.polling) {
    facts.push({ label: 'Cursor', value: 'not polled (votes.enabled is off): webhook votes only' });
  }
  if (votes.pending !== null)
    facts.push({ label: 'Pending', value: plural(votes.pending, 'vote'), tone: votes.pending > 0 ? 'warn' : 'ok' });
  facts.push({ label: 'Dead letters', value: formatCount(votes.deadLetterCount), tone: votes.deadLetterCount > 0 ? 'bad' : 'ok' });
  const lastDay = votes.perHour.slice(-24).reduce((sum, h) => sum + h.poll + h.webhook, 0);
  const retrying = votes.recent.some((v) => v.hooks.some((h) => h.outcome === 'retrying'));
  const listed = votes.deadLetters.length;
  return {
    enabled: votes.enabled,
    off: 'Votes are off: set votes.enabled (the cursor) or webhooks.enabled (signed deliveries).',
    tone: votes.deadLetterCount > 0 ? 'bad' : retrying ? 'warn' : 'ok',
    summary:
      votes.deadLetterCount > 0
        ? `${plural(votes.deadLetterCount, 'dead letter')}: a reward hook gave up ` +
          `on ${votes.deadLetterCount === 1 ? 'a vote' : 'votes'}. Fix the hook, then retry.`
        : `${plural(lastDay, 'vote')} in the last 24 h; every voter rewarded${retrying ? ', some after retries still running' : ''}.`,
    facts,
    votes: votes.recent.slice(0, VOTES_LISTED).map((v) => ({
      who: v.name ?? v.platformId ?? v.userId,
      userId: v.userId,
      source: v.source === 'webhook' ? 'webhook' : 'cursor',
      cast: timeView(v.createdAt, now),
      received: timeView(v.receivedAt, now),
      hooks: v.hooks.map(hookText),
    })),
    deadLetters: votes.deadLetters.map((l) => ({
      key: l.key,
      hook: l.hook,
      userId: l.userId,
      attempts: plural(l.attempts, 'try', 'tries'),
      error: l.error,
      failedAt: timeView(l.failedAt, now),
    })),
    deadLetterNote:
      listed < votes.deadLetterCount ? `The oldest ${formatCount(listed)} of ${formatCount(votes.deadLetterCount)} are listed.` : '',
    plotLabel: `Votes received per hour over the last ${votes.perHour.length} hours, by the cursor and by webhook: ${plural(
      votes.perHour.reduce((s, h) => s + h.poll + h.webhook, 0),
      'vote',
    )}.`,
    reminders: remindersView(votes.reminders, now),
  };
}

function webhooksView(doc: StatusDocument, now: number): StatusView['webhooks'] {
  const { webhooks } = doc;
  const count = (outcome: string) => webhooks.lastHour[outcome] ?? 0;
  const refused = Object.keys(webhooks.lastHour).filter((o) => o !== 'accepted' && o !== 'duplicate').reduce((sum, o) => sum + count(o), 0);
  const facts: Fact[] = [];
  if (webhooks.receiverUrl) facts.push({ label: 'Listening at', value: webhooks.receiverUrl, code: true });
  facts.push({
    label: 'Public URL',
    value: webhooks.publicUrl ?? 'not set (webhooks.publicUrl): the service must reach the address above',
    code: webhooks.publicUrl !== null,
  });
  const { secrets } = webhooks;
  facts.push({
    label: 'Secrets',
    value: `${formatCount(secrets.configured)} in the config, ${formatCount(secrets.stored)} stored (rotations, integrations)`,
  });
  if (secrets.newestStoredAt) facts.push({ label: 'Newest stored secret', value: 'added', time: timeView(secrets.newestStoredAt, now) });
  const known = Object.keys(DELIVERY_LABELS);
  const outcomes = [...known, ...Object.keys(webhooks.lastHour).filter((o) => !known.includes(o))];
  return {
    enabled: webhooks.enabled,
    off: 'The webhook receiver is off: set webhooks.enabled and a secret (webhooks.secrets).',
    tone: count('error') > 0 || count('bad_signature') > 0 ? 'bad' : refused > 0 ? 'warn' : 'ok',
    summary: `${plural(count('accepted'), 'delivery', 'deliveries')} accepted, ` +
      `${formatCount(count('duplicate'))} duplicate, ` +
      `${formatCount(refused)} refused or not recorded${webhooks.since ? ` since ${timeView(webhooks.since, now).relative}` : ''}.`,
    facts,
    deliveries: outcomes.map((outcome) => ({
      outcome,
      label: DELIVERY_LABELS[outcome] ?? outcome,
      count: formatCount(count(outcome)),
      tone:
        count(outcome) === 0 || outcome === 'accepted' || outcome === 'duplicate'
          ? 'neutral'
          : outcome === 'error' || outcome === 'bad_signature'
            ? 'bad'
            : 'warn',
    })),
  };
}

/** The view of `doc`: every text the page shows, relative to `doc.generatedAt`. */
export function statusView(doc: StatusDocument): StatusView {
  const now = Date.parse(doc.generatedAt);
  return {
    ...header(doc),
    components: doc.agent.components.map((c) => ({
      name: c.name,
      tone: c.ready ? 'ok' : 'bad',
      state: c.ready ? 'ready' : 'not ready',
      detail: c.detail,
      since: timeView(c.since, now),
    })),
    errors: doc.agent.recentErrors.map((e) => ({ at: timeView(e.at, now), message: e.message })),
    stats: statsView(doc, now),
    commands: commandsView(doc, now),
    votes: votesView(doc, now),
    webhooks: webhooksView(doc, now),
    actions: {
      enabled: doc.actions.enabled,
      text: doc.actions.enabled
        ? 'Actions need the admin token (health.adminToken): type it once; this tab keeps it until it closes.'
        : howToEnableActions(doc.agent.mode),
    },
    generatedAt: timeView(doc.generatedAt, now),
  };
}
