import { describe, expect, it } from 'vitest';
import type { StatusDocument } from '../../../src/status/document.js';
import { formatSpan, relativeTime } from '../../../src/status/format.js';
import { POSTS_LISTED, statusView, VOTES_LISTED } from '../../../src/status/view-model.js';

const NOW = Date.parse('2026-03-04T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;

/** A document of a healthy agent, with `change` applied on top. */
function doc(change: (d: StatusDocument) => void = () => undefined): StatusDocument {
  const d: StatusDocument = {
    version: 1,
    generatedAt: new Date(NOW).toISOString(),
    agent: {
      version: '1.2.3',
      mode: 'daemon',
      phase: 'running',
      startedAt: ago(2 * HOUR + 5 * MIN),
      uptimeMs: 2 * HOUR + 5 * MIN,
      project: { id: '1000000000000000010', name: 'Demo Bot' },
      cluster: null,
      stateDirectory: { path: '/var/lib/listing-agent', writable: true, problem: null, reason: null, since: ago(2 * HOUR) },
      ready: true,
      components: [
        { name: 'service', ready: true, detail: 'project Demo Bot', since: ago(2 * HOUR) },
        { name: 'stats', ready: true, detail: 'posting batches every 30m', since: ago(2 * HOUR) },
      ],
      recentErrors: [],
    },
    stats: {
      enabled: true,
      samples: [
        { at: ago(40 * MIN), servers: 1_190, shards: 3 },
        { at: ago(10 * MIN), servers: 1_195, shards: 3 },
      ],
      posts: [
        { at: ago(40 * MIN), target: 'v1_batch', outcome: 'ok', servers: 1_190, shards: 3, samples: 1, error: null, retryAt: null },
        { at: ago(10 * MIN), target: 'v1_batch', outcome: 'ok', servers: 1_195, shards: 3, samples: 4, error: null, retryAt: null },
      ],
      nextPostAt: new Date(NOW + 20 * MIN).toISOString(),
      pendingSamples: null,
    },
    commands: {
      enabled: true,
      lastSync: { at: ago(HOUR), count: 2, hash: 'a'.repeat(64), skipped: false, reason: 'start', added: ['ping'], removed: [], changed: ['vote'] },
      lastFailure: null,
      nextCheckAt: null,
    },
    votes: {
      enabled: true,
      polling: true,
      recent: [
        {
          key: '42:1',
          userId: '42',
          platformId: '900000000000000001',
          name: 'alice',
          source: 'webhook',
          createdAt: ago(3 * MIN),
          receivedAt: ago(3 * MIN),
          hooks: [{ hook: 'shop', outcome: 'ok', attempts: 1, latencyMs: 12, error: null }],
        },
      ],
      perHour: [
        { hour: ago(2 * HOUR), poll: 1, webhook: 2 },
        { hour: ago(HOUR), poll: 0, webhook: 3 },
      ],
      cursor: { position: 'cursor-0123456789abcdefghijklmnopqrstuvwxyz', newestVoteAt: ago(3 * MIN), movedAt: ago(3 * MIN) },
      pending: 0,
      deadLetters: [],
      deadLetterCount: 0,
      reminders: { enabled: false, scheduled: null, next: [], lastSent: [] },
    },
    webhooks: {
      enabled: true,
      lastHour: { accepted: 5, duplicate: 1, bad_signature: 0, stale: 0, malformed: 0, too_large: 0, rejected: 0, error: 0 },
      since: ago(HOUR),
      receiverUrl: 'http://127.0.0.1:9465/webhooks/listing',
      publicUrl: null,
      secrets: { configured: 1, stored: 1, newestStoredAt: ago(3 * 24 * HOUR) },
    },
    actions: { enabled: false },
  };
  change(d);
  return d;
}

const fact = (facts: { label: string; value: string; time?: { relative: string } }[], label: string) => facts.find((f) => f.label === label);

describe('status view model', () => {
  it('header: project, version, mode, role, uptime, and readiness in words', () => {
    const view = statusView(doc());
    expect(view.title).toBe('Demo Bot');
    expect(view.facts.map((f) => `${f.label}: ${f.value}`)).toEqual([
      'Project ID: 1000000000000000010',
      'Version: 1.2.3',
      'Mode: daemon',
      'Role: the only agent (no Redis)',
      'Up: 2 h 5 min',
      'Phase: running',
      'State directory: /var/lib/listing-agent: takes writes',
    ]);
    expect(view.overall).toEqual({ tone: 'ok', text: 'Ready: every component works' });
  });

  it('says in red when the state directory cannot be written, why, and since when; nothing without one', () => {
    const reason = 'no space left on the device holding /var/lib/listing-agent';
    const full = statusView(doc((d) => (d.agent.stateDirectory = { path: '/var/lib/listing-agent', writable: false, problem: 'no_space', reason, since: ago(3 * MIN) })));
    expect(full.facts.at(-1)).toMatchObject({ label: 'State directory', value: `cannot write: ${reason}; new votes are refused until it can`, tone: 'bad', time: { relative: '3 min ago' } });
    expect(statusView(doc((d) => (d.agent.stateDirectory = null))).facts.map((f) => f.label)).not.toContain('State directory');
  });

  it('names the components that are not ready, with their reason', () => {
    const view = statusView(
      doc((d) => {
        d.agent.ready = false;
        d.agent.components[1] = { name: 'stats', ready: false, detail: 'the service refused the token', since: ago(5 * MIN) };
      }),
    );
    expect(view.overall).toEqual({ tone: 'bad', text: 'Not ready: stats' });
    expect(view.components[1]).toMatchObject({ name: 'stats', tone: 'bad', state: 'not ready', detail: 'the service refused the token', since: { relative: '5 min ago' } });
  });

  it('says leader or standby, and who leads', () => {
    expect(statusView(doc((d) => (d.agent.cluster = { agentId: 'a/1', leader: true, leaderId: 'a/1' }))).facts[3]).toEqual({ label: 'Role', value: 'leader (a/1)', tone: 'ok' });
    expect(statusView(doc((d) => (d.agent.cluster = { agentId: 'b/2', leader: false, leaderId: 'a/1' }))).facts[3]?.value).toBe('standby (b/2); leader: a/1');
    expect(statusView(doc((d) => (d.agent.cluster = { agentId: 'b/2', leader: false, leaderId: null }))).facts[3]).toMatchObject({ tone: 'warn' });
  });

  it('stats: the last post, the next one, the table newest first, and a failure with its retry', () => {
    const view = statusView(doc()).stats;
    expect(view.tone).toBe('ok');
    expect(view.summary).toBe('Posted 1,195 servers 10 min ago (v1_batch).');
    expect(fact(view.facts, 'Next post')?.time?.relative).toBe('in 20 min');
    expect(view.posts.map((p) => p.counts)).toEqual(['1,195 servers, 3 shards', '1,190 servers, 3 shards']);
    expect(view.posts[0]?.note).toBe('4 samples');

    const failed = statusView(
      doc((d) => {
        d.stats.posts.push({ at: ago(MIN), target: 'v1_batch', outcome: 'failed', servers: null, shards: null, samples: 0, error: 'the service answered 503', retryAt: new Date(NOW + 30_000).toISOString() });
        d.stats.nextPostAt = new Date(NOW + 30_000).toISOString();
        d.stats.pendingSamples = 3;
      }),
    ).stats;
    expect(failed.tone).toBe('bad');
    expect(failed.summary).toContain('failed: the service answered 503');
    expect(failed.posts[0]).toMatchObject({ outcome: 'failed', tone: 'bad', note: 'the service answered 503; retry in 30 s' });
    expect(fact(failed.facts, 'Retry')?.time?.relative).toBe('in 30 s');
    expect(fact(failed.facts, 'Kept for the retry')?.value).toBe('3 samples');
    expect(fact(failed.facts, 'Last success')?.time?.relative).toBe('10 min ago');
  });

  it('stats: a success after failures is amber; the table keeps the newest posts only; no post yet says why', () => {
    const retried = statusView(doc((d) => (d.stats.posts[1]!.outcome = 'retried'))).stats;
    expect(retried.tone).toBe('warn');
    expect(retried.posts[0]).toMatchObject({ outcome: 'ok after retries', tone: 'warn' });
    const many = statusView(doc((d) => (d.stats.posts = Array.from({ length: 30 }, (_, i) => ({ ...d.stats.posts[0]!, servers: i }))))).stats;
    expect(many.posts).toHaveLength(POSTS_LISTED);
    expect(many.posts[0]?.counts).toBe('29 servers, 3 shards');
    const none = statusView(doc((d) => ((d.stats.posts = []), (d.stats.samples = [])))).stats;
    expect(none).toMatchObject({ tone: 'neutral', summary: 'No post yet: the first goes out once the counts are ready.' });
  });

  it('commands: last sync, hash, changes, next check; a newer failure turns it red', () => {
    const view = statusView(doc()).commands;
    expect(view.summary).toBe('2 commands on the listing, checked 1 h ago.');
    expect(fact(view.facts, 'Hash')?.value).toBe('aaaaaaaa…aaaaaaaa');
    expect(view.changes).toEqual([
      { label: 'added', names: ['ping'] },
      { label: 'changed', names: ['vote'] },
    ]);
    expect(fact(view.facts, 'Next check')?.value).toContain('commands.interval is not set');
    const failing = statusView(
      doc((d) => {
        d.commands.lastFailure = { at: ago(MIN), error: 'Discord answered 401' };
        d.commands.nextCheckAt = new Date(NOW + 59 * MIN).toISOString();
      }),
    ).commands;
    expect(failing).toMatchObject({ tone: 'bad', summary: 'The last sync failed: Discord answered 401' });
    expect(fact(failing.facts, 'Next check')?.time?.relative).toBe('in 59 min');
    expect(statusView(doc((d) => (d.commands.enabled = false))).commands.off).toContain('commands.enabled');
  });

  it('votes: the voter by name, source, each hook with its latency; dead letters turn it red', () => {
    const view = statusView(doc()).votes;
    expect(view.tone).toBe('ok');
    expect(view.summary).toBe('6 votes in the last 24 h; every voter rewarded.');
    expect(view.votes[0]).toMatchObject({ who: 'alice', userId: '42', source: 'webhook', received: { relative: '3 min ago' }, hooks: [{ hook: 'shop', text: 'ok in 12 ms', tone: 'ok' }] });
    expect(fact(view.facts, 'Cursor')?.value).toBe('cursor-01234…opqrstuvwxyz');
    expect(fact(view.facts, 'Newest vote seen')?.time?.relative).toBe('3 min ago');
    const many = statusView(doc((d) => (d.votes.recent = Array.from({ length: 50 }, (_, i) => ({ ...d.votes.recent[0]!, name: `voter ${i}` }))))).votes;
    expect(many.votes).toHaveLength(VOTES_LISTED);
    expect(many.votes[0]?.who).toBe('voter 0');

    const dead = statusView(
      doc((d) => {
        d.votes.recent[0]!.hooks[0] = { hook: 'shop', outcome: 'dead_letter', attempts: 6, latencyMs: 2_500, error: 'POST answered 500' };
        d.votes.deadLetters = [{ key: '42:1', hook: 'shop', userId: '42', attempts: 6, error: 'POST answered 500', failedAt: ago(MIN) }];
        d.votes.deadLetterCount = 130;
      }),
    ).votes;
    expect(dead.tone).toBe('bad');
    expect(dead.summary).toBe('130 dead letters: a reward hook gave up on votes. Fix the hook, then retry.');
    expect(dead.votes[0]?.hooks[0]).toEqual({ hook: 'shop', text: 'gave up after 6 tries: POST answered 500', tone: 'bad' });
    expect(dead.deadLetters[0]).toMatchObject({ key: '42:1', hook: 'shop', attempts: '6 tries', failedAt: { relative: '1 min ago' } });
    expect(dead.deadLetterNote).toBe('The oldest 1 of 130 are listed.');
  });

  it('votes: a hook retrying is amber; a voter without a name shows the Discord ID; no cursor without polling', () => {
    const view = statusView(
      doc((d) => {
        d.votes.polling = false;
        d.votes.cursor = null;
        d.votes.recent[0]!.name = null;
        d.votes.recent[0]!.hooks = [{ hook: 'shop', outcome: 'retrying', attempts: 2, latencyMs: 1_500, error: 'timeout' }];
      }),
    ).votes;
    expect(view.tone).toBe('warn');
    expect(view.votes[0]?.who).toBe('900000000000000001');
    expect(view.votes[0]?.hooks[0]?.text).toBe('failed (try 2, 1.5 s), retrying: timeout');
    expect(fact(view.facts, 'Cursor')?.value).toContain('not polled');
  });

  it('votes: before the first poll, the cursor says that a first start rewards the votes from its start on', () => {
    const view = statusView(doc((d) => void (d.votes.cursor = { position: null, newestVoteAt: null, movedAt: null }))).votes;
    expect(fact(view.facts, 'Cursor')?.value).toBe('none yet: the first poll rewards the votes cast from the first start on (earlier ones only with votes.lookback)');
  });

  it('webhooks: deliveries of the last hour by outcome, refusals counted, the secret age and never a secret', () => {
    const view = statusView(doc((d) => Object.assign(d.webhooks.lastHour, { bad_signature: 2, stale: 1 }))).webhooks;
    expect(view.tone).toBe('bad');
    expect(view.summary).toBe('5 deliveries accepted, 1 duplicate, 3 refused or not recorded since 1 h ago.');
    expect(view.deliveries.map((d) => [d.outcome, d.count, d.tone])).toEqual([
      ['accepted', '5', 'neutral'],
      ['duplicate', '1', 'neutral'],
      ['bad_signature', '2', 'bad'],
      ['stale', '1', 'warn'],
      ['malformed', '0', 'neutral'],
      ['too_large', '0', 'neutral'],
      ['rejected', '0', 'neutral'],
      ['error', '0', 'neutral'],
    ]);
    expect(fact(view.facts, 'Newest stored secret')?.time?.relative).toBe('3 d ago');
    expect(fact(view.facts, 'Public URL')?.value).toContain('not set');
  });

  it('votes: reminders off (or a document of an older agent without them) show nothing; on, the next due and the last sent', () => {
    expect(statusView(doc()).votes.reminders).toEqual({ enabled: false, summary: '', next: [], lastSent: [] });
    expect(statusView(doc((d) => delete (d.votes as Partial<typeof d.votes>).reminders)).votes.reminders.enabled).toBe(false);
    const reminder = (userId: string, dueIn: number) => ({
      voteKey: `${userId}:${NOW - 12 * HOUR + dueIn}`,
      userId,
      platformId: userId === 'bob' ? null : '900000000000000001',
      projectId: '8',
      expiresAt: new Date(NOW + dueIn).toISOString(),
      dueAt: new Date(NOW + dueIn).toISOString(),
    });
    const view = statusView(
      doc((d) => (d.votes.reminders = { enabled: true, scheduled: 12, next: [reminder('alice', 5 * MIN), reminder('bob', HOUR)], lastSent: [reminder('carol', -2 * MIN)] })),
    ).votes.reminders;
    expect(view.enabled).toBe(true);
    expect(view.summary).toBe('12 vote reminders scheduled; the next 2 are listed.');
    expect(view.next.map((r) => [r.userId, r.platformId, r.due.relative, r.voteKey])).toEqual([
      ['alice', '900000000000000001', 'in 5 min', `alice:${NOW - 12 * HOUR + 5 * MIN}`],
      ['bob', null, 'in 1 h', `bob:${NOW - 11 * HOUR}`],
    ]);
    expect(view.lastSent.map((r) => [r.userId, r.due.relative])).toEqual([['carol', '2 min ago']]);
    const none = statusView(doc((d) => (d.votes.reminders = { enabled: true, scheduled: 0, next: [], lastSent: [] }))).votes.reminders;
    expect(none.summary).toBe('0 vote reminders scheduled; none sent yet by this agent.');
    const unreadable = statusView(doc((d) => (d.votes.reminders = { enabled: true, scheduled: null, next: [], lastSent: [] }))).votes.reminders;
    expect(unreadable.summary).toBe('Vote reminders: the schedule cannot be read right now; none sent yet by this agent.');
  });

  it('actions: read-only says how to turn them on; on says the token is needed', () => {
    expect(statusView(doc()).actions).toEqual({ enabled: false, text: expect.stringContaining('set health.adminToken (LISTING_AGENT_HEALTH_ADMIN_TOKEN)') });
    expect(statusView(doc((d) => (d.actions.enabled = true))).actions.text).toContain('admin token');
  });

  it('names each setting as the agent reads it: the daemon with its variable, an embedded agent by its config path alone', () => {
    const daemon = statusView(doc());
    expect([daemon.stats.off, daemon.commands.off]).toEqual(['Stats posting is off: set stats.enabled (LISTING_AGENT_STATS_ENABLED).', 'Command sync is off: set commands.enabled (LISTING_AGENT_COMMANDS_ENABLED).']);
    const embedded = statusView(doc((d) => (d.agent.mode = 'embedded')));
    expect([embedded.stats.off, embedded.commands.off]).toEqual(['Stats posting is off: set stats.enabled.', 'Command sync is off: set commands.enabled.']);
    expect(embedded.actions.text).toContain('set health.adminToken to a long random string');
    expect(JSON.stringify(embedded)).not.toContain('LISTING_AGENT_');
  });

  it('words for spans and relative times', () => {
    expect([45_000, 3 * MIN, 2 * HOUR, 2 * HOUR + 5 * MIN, 3 * 24 * HOUR, 3 * 24 * HOUR + 4 * HOUR].map(formatSpan)).toEqual(['45 s', '3 min', '2 h', '2 h 5 min', '3 d', '3 d 4 h']);
    expect(relativeTime(NOW - 2_000, NOW)).toBe('just now');
    expect(relativeTime(NOW - 90_000, NOW)).toBe('1 min ago');
    expect(relativeTime(NOW + 90_000, NOW)).toBe('in 1 min');
  });
});
