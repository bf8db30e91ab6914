import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../../src/status/html.js';
import { renderStatusPage } from '../../../src/status/page.js';
import { statusView } from '../../../src/status/view-model.js';
import { buildStatusDocument, type StatusLive } from '../../../src/status/build.js';
import { createStatusCollector } from '../../../src/status/collector.js';

describe('status page HTML', () => {
  it('escapes every value put in a template, and only once', () => {
    const name = `<img src=x onerror="alert('1')">&`;
    expect(escapeHtml(name)).toBe('&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;');
    const inner = html`<b>${name}</b>`;
    expect(html`<p title="${name}">${inner}${[name, null, false, undefined]}</p>`.value).toBe(
      `<p title="${escapeHtml(name)}"><b>${escapeHtml(name)}</b>${escapeHtml(name)}</p>`,
    );
  });

  it('renders a whole page from a document with hostile strings everywhere, none of them as markup', () => {
    const evil = '<script>alert(1)</script>';
    const now = Date.parse('2026-03-04T12:00:00Z');
    const collector = createStatusCollector({ now: () => now });
    collector.voteReceived({ key: `${evil}:1`, userId: evil, platformId: null, road: 'webhook', createdAt: new Date(now).toISOString(), user: { name: evil } });
    collector.hookRan({ key: `${evil}:1`, hook: evil, attempt: 1, result: 'dead_letter', durationMs: 5, error: evil });
    collector.commandsSynced({ count: 1, skipped: false, hash: evil, reason: 'start', diff: { added: [evil], removed: [], changed: [] } });
    collector.postFailed({ target: 'v1', error: new Error(evil), pendingSamples: 1, retryAt: now + 1000 });
    collector.error(new Error(evil));
    const at = new Date(now).toISOString();
    const reminder = { voteKey: `${evil}:1`, userId: evil, platformId: evil, projectId: evil, expiresAt: at, dueAt: at };
    const live: StatusLive = {
      version: evil,
      mode: 'daemon',
      phase: 'running',
      startedAt: now,
      project: { id: evil, name: evil },
      cluster: { agentId: evil, leader: false, leaderId: evil },
      readiness: { ready: false, components: { [evil]: { ready: false, detail: evil, since: now } } },
      stateDirectory: { path: evil, writable: false, problem: 'other', reason: evil, since: now },
      stats: { enabled: true },
      commands: { enabled: true, intervalMs: null },
      votes: { enabled: true, polling: true, pending: 1, deadLetters: [{ key: `${evil}:1`, hook: evil, userId: evil, attempts: 1, error: evil, failedAt: new Date(now).toISOString() }], cursor: { position: evil, newestVoteAt: null }, reminders: { enabled: true, scheduled: 1, next: [reminder], lastSent: [reminder] } },
      webhooks: { enabled: true, receiverUrl: evil, publicUrl: evil, secrets: { configured: 1, stored: 0, newestStoredAt: null }, deliveries: { [evil]: 1 } },
      actions: true,
    };
    const page = renderStatusPage(statusView(buildStatusDocument(collector.collected(), live, now, 86_400_000)));
    expect(page).not.toContain('<script>alert');
    expect(page.split(escapeHtml(evil)).length - 1).toBeGreaterThan(15);
    // The reminders' tables carry the user IDs (and the rest) as text, escaped: 4 per row, 2 rows.
    const reminders = page.slice(page.indexOf('<h3 id="reminders">'));
    expect(reminders).toContain('Next reminders due');
    expect(reminders).toContain('Last reminders sent');
    expect(reminders).not.toContain('<script>alert');
    expect(reminders.split(escapeHtml(evil)).length - 1).toBeGreaterThanOrEqual(8);
  });

  it('shows no reminders part when they are off', () => {
    const now = Date.parse('2026-03-04T12:00:00Z');
    const collector = createStatusCollector({ now: () => now });
    const live: StatusLive = {
      version: '1',
      mode: 'daemon',
      phase: 'running',
      startedAt: now,
      project: null,
      cluster: null,
      readiness: { ready: true, components: {} },
      stateDirectory: null,
      stats: { enabled: false },
      commands: { enabled: false, intervalMs: null },
      votes: { enabled: true, polling: true, pending: 0, deadLetters: [], cursor: null },
      webhooks: { enabled: false, receiverUrl: null, publicUrl: null, secrets: { configured: 0, stored: 0, newestStoredAt: null }, deliveries: {} },
      actions: false,
    };
    const document = buildStatusDocument(collector.collected(), live, now, 86_400_000);
    expect(document.votes.reminders).toEqual({ enabled: false, scheduled: null, next: [], lastSent: [] });
    expect(renderStatusPage(statusView(document))).not.toContain('id="reminders"');
  });
});
