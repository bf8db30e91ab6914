import type { TimeView } from './format.js';
import { escapeHtml, html, SafeHtml } from './html.js';
import type { RemindersView, ReminderRow } from './reminders-view.js';
import type { DeadLetterRow, Fact, SectionView, StatusView, Tone } from './view-model.js';

/**
 * The status page's HTML from its view model: complete without JavaScript (every number is in
 * the first paint), then assets/status/status-page.js updates the `data-live` parts in place and
 * draws the plots. No inline script or style anywhere (the Content-Security-Policy forbids them);
 * asset paths are relative, so the page works at `/`, at `/status` and behind a path prefix.
 */

/** Where the page's assets are, relative to the page. */
const ASSET_PATH = 'status/assets/';

/** How often the script asks for news, ms (the page says so). */
const UPDATE_EVERY_MS = 2_000;

/**
 * A deferred script element. Not in a template: the closing tag inside a tagged template makes
 * some transpilers (oxc, which the tests' loader uses) rewrite the literal through a helper.
 */
function script(src: string): SafeHtml {
  return new SafeHtml(`<script src="${escapeHtml(src)}" defer><` + '/script>');
}

const SYMBOL: Record<Tone, string> = { ok: '✓', warn: '!', bad: '✗', neutral: '' };

const td = (content: unknown): SafeHtml => html`<td>${content}</td>`;
const code = (content: string): SafeHtml => html`<td><code>${content}</code></td>`;

function plotFigure(id: string, label: string): SafeHtml {
  const noscript = html`<noscript> The plot needs JavaScript; the table below has the numbers.</noscript>`;
  const plot = html`<div class="plot" id="plot-${id}" data-plot="${id}" role="img" aria-label="${label}"></div>`;
  return html`<figure class="plot-figure">${plot}<figcaption id="plot-${id}-caption" data-live>${label}${noscript}</figcaption></figure>`;
}

const SECTIONS = [
  ['health', 'Health'],
  ['stats', 'Stats'],
  ['commands', 'Commands'],
  ['votes', 'Votes'],
  ['webhooks', 'Webhooks'],
  ['actions', 'Actions'],
] as const;

const SHELL_ACTIONS = html`<code>listing-agent votes retry --agent</code>, <code>listing-agent stats post --agent</code>`;

const FOOTER = html`The data: <a href="status.json">status.json</a> (version 1). <span class="js-only" hidden>Updates every ${
  UPDATE_EVERY_MS / 1000
} s.</span><noscript>Reload for news.</noscript>`;

function time(view: TimeView): SafeHtml {
  return html`<time datetime="${view.iso}" title="${view.absolute}" data-relative>${view.relative}</time>`;
}

function tone(t: Tone, text: string): SafeHtml {
  const symbol = SYMBOL[t] ? html`<span class="symbol" aria-hidden="true">${SYMBOL[t]}</span> ` : '';
  return html`<span class="tone tone-${t}">${symbol}${text}</span>`;
}

function facts(list: readonly Fact[]): SafeHtml {
  if (list.length === 0) return html``;
  return html`<dl class="facts">${list.map(
    (f) => {
      const value = f.code ? html`<code>${f.value}</code>` : f.value;
      const at = f.time ? html` ${time(f.time)}` : '';
      return html`<div><dt>${f.label}</dt><dd${f.tone ? html` class="tone-${f.tone}"` : ''}>${value}${at}</dd></div>`;
    },
  )}</dl>`;
}

/** A table that scrolls sideways on a phone, reachable by keyboard. */
function table(caption: string, head: readonly string[], rows: readonly SafeHtml[]): SafeHtml {
  const heads = head.map((h) => html`<th scope="col">${h}</th>`);
  const inner = html`<table><caption>${caption}</caption><thead><tr>${heads}</tr></thead><tbody>${rows}</tbody></table>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${caption}">${inner}</div>`;
}

function section(id: string, title: string, view: SectionView, body: SafeHtml, plot?: { label: string }): SafeHtml {
  return html`<section id="${id}" aria-labelledby="${id}-title">
<h2 id="${id}-title">${title}</h2>
${
  view.enabled
    ? html`${plot ? plotFigure(id, plot.label) : ''}
<div id="${id}-live" data-live>
<p class="summary">${tone(view.tone, view.summary)}</p>
${facts(view.facts)}
${body}
</div>`
    : html`<p class="off">${view.off}</p>`
}
</section>`;
}

function healthSection(view: StatusView): SafeHtml {
  const rows = view.components.map(
    (c) => html`<tr><th scope="row">${c.name}</th>${[td(tone(c.tone, c.state)), td(c.detail), td(time(c.since))]}</tr>`,
  );
  const errorRows = view.errors.map((e) => html`<tr><td>${time(e.at)}</td><td>${e.message}</td></tr>`);
  const errors = view.errors.length === 0 ? html`` : table('Recent errors', ['When', 'Error'], errorRows);
  return html`<section id="health" aria-labelledby="health-title">
<h2 id="health-title">Health</h2>
<div id="health-live" data-live>
<p class="summary">${tone(view.overall.tone, view.overall.text)}</p>
${table('Components (as /readyz reports them)', ['Component', 'State', 'Detail', 'Since'], rows)}
${errors}
</div>
</section>`;
}

function statsBody(view: StatusView['stats']): SafeHtml {
  const rows = view.posts.map(
    (p) => html`<tr>${[td(time(p.at)), td(p.target), td(tone(p.tone, p.outcome)), td(p.counts), td(p.note)]}</tr>`,
  );
  return rows.length === 0 ? html`` : table('Latest posts', ['When', 'Target', 'Outcome', 'Counts', 'Note'], rows);
}

function commandsBody(view: StatusView['commands']): SafeHtml {
  if (view.changes.length === 0) return html``;
  const names = (c: (typeof view.changes)[number]) => c.names.map((n, i) => html`${i > 0 ? ', ' : ''}<code>${n}</code>`);
  return html`<dl class="facts changes">${view.changes.map((c) => html`<div><dt>${c.label}</dt><dd>${names(c)}</dd></div>`)}</dl>`;
}

function retryButton(letter: DeadLetterRow, actions: boolean): SafeHtml {
  if (!actions) return html``;
  const data = html`data-action="retry" data-key="${letter.key}" data-hook="${letter.hook}"`;
  return html`<button type="button" class="action" id="retry:${letter.key}:${letter.hook}" ${data} disabled>Retry</button>`;
}

function reminderRows(rows: readonly ReminderRow[]): SafeHtml[] {
  return rows.map(
    (r) => {
      const discord = r.platformId === null ? '' : html` (Discord <code class="id">${r.platformId}</code>)`;
      const voter = html`<td><code class="id">${r.userId}</code>${discord}</td>`;
      return html`<tr>${voter}<td><code>${r.projectId}</code></td><td>${time(r.due)}</td><td><code>${r.voteKey}</code></td></tr>`;
    },
  );
}

function remindersBody(view: RemindersView): SafeHtml {
  if (!view.enabled) return html``;
  const columns = ['Voter', 'Project', 'Due', 'Vote key'];
  return html`<h3 id="reminders">Vote reminders</h3><p>${view.summary}</p>
${view.next.length === 0 ? '' : table('Next reminders due', columns, reminderRows(view.next))}
${view.lastSent.length === 0 ? '' : table('Last reminders sent', columns, reminderRows(view.lastSent))}`;
}

function voterCell(v: StatusView['votes']['votes'][number]): SafeHtml {
  return html`<td><span class="who">${v.who}</span>${v.who === v.userId ? '' : html` <code class="id">${v.userId}</code>`}</td>`;
}

function hookList(hooks: StatusView['votes']['votes'][number]['hooks']): SafeHtml {
  return html`<ul class="hooks">${hooks.map((h) => html`<li><code>${h.hook}</code>: ${tone(h.tone, h.text)}</li>`)}</ul>`;
}

function deadLetters(note: string | undefined, letters: readonly SafeHtml[]): SafeHtml {
  const columns = ['Vote key', 'Hook', 'Tries', 'Failed', 'Last error', ''];
  const shown = table('Dead letters: votes a hook gave up on', columns, letters);
  return html`<h3 id="dead-letters">Dead letters</h3>${note ? html`<p>${note}</p>` : ''}${shown}`;
}

function votesBody(view: StatusView['votes'], actions: boolean): SafeHtml {
  const votes = view.votes.map(
    (v) =>
      html`<tr>${voterCell(v)}<td>${v.source}</td><td>${time(v.cast)}</td><td>${time(v.received)}</td><td>${
        v.hooks.length === 0 ? 'waiting' : hookList(v.hooks)
      }</td></tr>`,
  );
  const letters = view.deadLetters.map(
    (l) => html`<tr>${[code(l.key), code(l.hook), td(l.attempts), td(time(l.failedAt)), td(l.error), td(retryButton(l, actions))]}</tr>`,
  );
  const latest = table('Latest votes', ['Voter', 'Came by', 'Cast', 'Received', 'Reward hooks'], votes);
  return html`${votes.length === 0 ? html`<p>No vote received since the agent started.</p>` : latest}
${letters.length === 0 ? '' : deadLetters(view.deadLetterNote, letters)}
${remindersBody(view.reminders)}`;
}

function webhooksBody(view: StatusView['webhooks']): SafeHtml {
  const rows = view.deliveries.map((d) => html`<tr><th scope="row">${d.label}</th><td class="number">${tone(d.tone, d.count)}</td></tr>`);
  return table('Deliveries in the last hour, by outcome', ['Outcome', 'Count'], rows);
}

function actionsSection(view: StatusView): SafeHtml {
  const { actions } = view;
  return html`<section id="actions" aria-labelledby="actions-title">
<h2 id="actions-title">Actions</h2>
<p>${actions.text}</p>
${
  actions.enabled
    ? html`<noscript><p>The actions need JavaScript (the token goes in a header); from a shell: ${SHELL_ACTIONS}.</p></noscript>
<div id="actions-form" class="actions" role="group" aria-label="Actions" hidden>
<label for="admin-token">Admin token</label>
<input id="admin-token" name="token" type="password" autocomplete="off" spellcheck="false">
<button type="button" class="action" data-action="post-stats" disabled>Post stats now</button>
<button type="button" class="action" data-action="retry-all" disabled>Retry all dead letters</button>
</div>
<p id="action-result" role="status" aria-live="polite" tabindex="-1"></p>`
    : ''
}
</section>`;
}

/** The whole page. */
export function renderStatusPage(view: StatusView): string {
  const actions = view.actions.enabled;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>${view.title} · listing-agent status</title>
<link rel="stylesheet" href="${ASSET_PATH}uPlot.min.css">
<link rel="stylesheet" href="${ASSET_PATH}status-page.css">
${script(`${ASSET_PATH}uPlot.iife.min.js`)}
${script(`${ASSET_PATH}status-page.js`)}
</head>
<body data-update-every="${UPDATE_EVERY_MS}">
<a class="skip" href="#main">Skip to the status</a>
<header id="header-live" data-live>
<h1>${view.title} <span class="quiet">· listing-agent status</span></h1>
<p class="overall">${tone(view.overall.tone, view.overall.text)}</p>
${facts(view.facts)}
</header>
<p id="live-state" class="live-state" role="status" hidden></p>
<nav aria-label="Sections"><ul>${SECTIONS.map(([id, name]) => html`<li><a href="#${id}">${name}</a></li>`)}</ul></nav>
<main id="main" tabindex="-1">
${healthSection(view)}
${section('stats', 'Stats', view.stats, statsBody(view.stats), { label: view.stats.plotLabel })}
${section('commands', 'Commands', view.commands, commandsBody(view.commands))}
${section('votes', 'Votes', view.votes, votesBody(view.votes, actions), { label: view.votes.plotLabel })}
${section('webhooks', 'Webhooks', view.webhooks, webhooksBody(view.webhooks))}
${actionsSection(view)}
</main>
<footer id="footer-live" data-live><p>As of ${time(view.generatedAt)}. ${FOOTER}</p></footer>
</body>
</html>
`.value;
}
