// @ts-check
/*
 * The status page's script (served by the agent at status/assets/status-page.js). The page is
 * complete without it; this makes it live: every few seconds it asks status.json whether anything
 * changed (ETag), redraws the plots with uPlot (served beside it), and refreshes the server-rendered
 * parts of the page in place (the elements with data-live), keeping keyboard focus. It runs the
 * actions with the admin token typed in the page. No inline script, no other origin: the page's
 * Content-Security-Policy allows neither. It never builds HTML from data: plots draw on canvas,
 * texts go through textContent, and the refreshed parts are the agent's own escaped HTML.
 */
(() => {
  'use strict';

  const TOKEN_KEY = 'listing-agent-admin-token';
  const every = Number(document.body.dataset.updateEvery) || 2000;
  /** @type {string | null} */
  let etag = null;
  /** @type {any} */
  let doc = null;
  /** Browser clock minus the agent's, ms. */
  let skew = 0;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** @type {Map<string, any>} */
  const plots = new Map();

  // ---- times: the same words as src/status/format.ts (relativeTime) ----

  /** @param {number} ms */
  function span(ms) {
    const seconds = Math.floor(Math.abs(ms) / 1000);
    if (seconds < 60) return `${seconds} s`;
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return `${minutes} min`;
    const hours = Math.floor(minutes / 60);
    if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
    const days = Math.floor(hours / 24);
    return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
  }

  /** @param {number} at @param {number} now */
  function relative(at, now) {
    const delta = at - now;
    if (Math.abs(delta) < 5000) return 'just now';
    return delta < 0 ? `${span(delta)} ago` : `in ${span(delta)}`;
  }

  function refreshTimes() {
    const now = Date.now() - skew;
    for (const el of document.querySelectorAll('time[data-relative]')) {
      const at = Date.parse(el.getAttribute('datetime') ?? '');
      if (Number.isFinite(at)) el.textContent = relative(at, now);
    }
  }

  // ---- plots ----

  /** @param {string} name */
  function color(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
  }

  /** @param {HTMLElement} el */
  function size(el) {
    return { width: Math.max(240, el.clientWidth), height: Math.max(160, Math.min(260, Math.round(el.clientWidth * 0.4))) };
  }

  /** @param {string} id @param {HTMLElement} el @param {any} options @param {any[]} data */
  function draw(id, el, options, data) {
    const UPlot = /** @type {any} */ (window).uPlot;
    if (typeof UPlot !== 'function') return;
    plots.get(id)?.destroy();
    el.textContent = '';
    plots.set(id, new UPlot({ ...size(el), ...options }, data, el));
  }

  /** The marks of the posts: ok green dots on the line, retried amber, failed red at the bottom. */
  function postMarks(/** @type {any[]} */ posts) {
    return (/** @type {any} */ u) => {
      const { ctx } = u;
      ctx.save();
      for (const post of posts) {
        const x = u.valToPos(Date.parse(post.at) / 1000, 'x', true);
        if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
        const failed = post.outcome === 'failed';
        const y = failed || post.servers === null ? u.bbox.top + u.bbox.height - 6 : u.valToPos(post.servers, 'y', true);
        ctx.fillStyle = color(failed ? '--bad' : post.outcome === 'retried' ? '--warn' : '--ok');
        ctx.beginPath();
        if (failed) ctx.rect(x - 5, y - 5, 10, 10);
        else ctx.arc(x, y, 5, 0, 2 * Math.PI);
        ctx.fill();
      }
      ctx.restore();
    };
  }

  /** @param {any} stats */
  function drawStats(stats) {
    const el = document.getElementById('plot-stats');
    if (!el) return;
    const xs = stats.samples.map((/** @type {any} */ s) => Date.parse(s.at) / 1000);
    const servers = stats.samples.map((/** @type {any} */ s) => s.servers);
    const shards = stats.samples.map((/** @type {any} */ s) => s.shards);
    const now = (Date.now() - skew) / 1000;
    const next = stats.nextPostAt ? Date.parse(stats.nextPostAt) / 1000 : undefined;
    // At least the last 15 minutes, up to now and a little after: a young history is not squeezed into a corner.
    const spanSeconds = Math.max(now - (xs[0] ?? now), 900);
    const range = [now - spanSeconds, now + spanSeconds * 0.05];
    draw('stats', el, {
      scales: { x: { time: true, range: () => range }, shards: {} },
      axes: [
        { stroke: color('--text'), grid: { stroke: color('--grid') } },
        { stroke: color('--text'), grid: { stroke: color('--grid') }, label: 'servers' },
        { scale: 'shards', side: 1, stroke: color('--muted'), grid: { show: false }, label: 'shards' },
      ],
      series: [{}, { label: 'servers', stroke: color('--accent'), width: 2 }, { label: 'shards', scale: 'shards', stroke: color('--muted'), dash: [4, 4] }],
      hooks: {
        draw: [
          postMarks(stats.posts),
          (/** @type {any} */ u) => {
            if (next === undefined || next > range[1]) return;
            const x = u.valToPos(next, 'x', true);
            u.ctx.save();
            u.ctx.strokeStyle = color('--muted');
            u.ctx.setLineDash([3, 3]);
            u.ctx.beginPath();
            u.ctx.moveTo(x, u.bbox.top);
            u.ctx.lineTo(x, u.bbox.top + u.bbox.height);
            u.ctx.stroke();
            u.ctx.restore();
          },
        ],
      },
    }, [xs, servers, shards]);
    const last = stats.samples.at(-1);
    el.dataset.points = String(stats.samples.length);
    el.dataset.posts = String(stats.posts.length);
    el.dataset.lastServers = last ? String(last.servers) : '';
    el.dataset.lastShards = last ? String(last.shards) : '';
  }

  /** @param {any} votes */
  function drawVotes(votes) {
    const el = document.getElementById('plot-votes');
    if (!el) return;
    const UPlot = /** @type {any} */ (window).uPlot;
    const bars = (/** @type {number} */ align) => UPlot?.paths?.bars?.({ size: [0.4, 40], align });
    // Each bar sits in the middle of its hour; the range covers whole hours, so the newest bars show in full.
    const hours = votes.perHour.map((/** @type {any} */ h) => Date.parse(h.hour) / 1000 + 1800);
    const range = hours.length > 0 ? [hours[0] - 1800, hours[hours.length - 1] + 1800] : [0, 3600];
    draw('votes', el, {
      scales: { x: { time: true, range: () => range }, y: { range: (/** @type {any} */ _u, /** @type {number} */ _min, /** @type {number} */ max) => [0, Math.max(2, Math.ceil(max * 1.1))] } },
      axes: [{ stroke: color('--text'), grid: { stroke: color('--grid') } }, { stroke: color('--text'), grid: { stroke: color('--grid') }, label: 'votes per hour' }],
      series: [
        {},
        { label: 'by cursor', stroke: color('--accent'), fill: color('--accent'), paths: bars(-1), points: { show: false } },
        { label: 'by webhook', stroke: color('--ok'), fill: color('--ok'), paths: bars(1), points: { show: false } },
      ],
    }, [hours, votes.perHour.map((/** @type {any} */ h) => h.poll), votes.perHour.map((/** @type {any} */ h) => h.webhook)]);
    el.dataset.total = String(votes.perHour.reduce((/** @type {number} */ sum, /** @type {any} */ h) => sum + h.poll + h.webhook, 0));
  }

  function drawPlots() {
    if (!doc) return;
    if (doc.stats.enabled) drawStats(doc.stats);
    if (doc.votes.enabled) drawVotes(doc.votes);
  }

  // ---- the live parts of the page ----

  function enableActions() {
    for (const button of document.querySelectorAll('button[data-action]')) /** @type {HTMLButtonElement} */ (button).disabled = false;
  }

  /** Replaces each data-live element whose server-rendered HTML changed; keeps focus on the same element (by id). */
  async function refreshParts() {
    const res = await fetch(location.pathname, { cache: 'no-store', headers: { accept: 'text/html' } });
    if (!res.ok) throw new Error(`the page answered ${res.status}`);
    const fresh = new DOMParser().parseFromString(await res.text(), 'text/html');
    const focused = document.activeElement instanceof HTMLElement && document.activeElement.id ? document.activeElement.id : undefined;
    let lostFocus = false;
    for (const part of fresh.querySelectorAll('[data-live][id]')) {
      const current = document.getElementById(part.id);
      if (!current || current.innerHTML === part.innerHTML) continue;
      if (focused && current.contains(document.activeElement)) lostFocus = true;
      current.innerHTML = part.innerHTML;
    }
    enableActions();
    if (lostFocus && focused) (document.getElementById(focused) ?? document.getElementById('action-result'))?.focus();
  }

  /** @param {string} text @param {boolean} trouble */
  function liveState(text, trouble) {
    const el = document.getElementById('live-state');
    if (!el) return;
    el.hidden = !trouble;
    el.textContent = text;
  }

  async function update() {
    clearTimeout(timer);
    try {
      const res = await fetch('status.json', { cache: 'no-store', headers: etag ? { 'if-none-match': etag } : {} });
      if (res.status === 200) {
        etag = res.headers.get('etag');
        doc = await res.json();
        skew = Date.now() - Date.parse(doc.generatedAt);
        drawPlots();
        await refreshParts();
      } else if (res.status !== 304) {
        throw new Error(`status.json answered ${res.status}`);
      }
      liveState('', false);
    } catch (error) {
      liveState(`Cannot reach the agent (${error instanceof Error ? error.message : error}); trying again every ${every / 1000} s.`, true);
    }
    refreshTimes();
    timer = setTimeout(update, every);
  }

  // ---- actions ----

  /** @param {string} text @param {'ok' | 'warn' | 'bad' | 'neutral'} tone */
  function say(text, tone) {
    const el = document.getElementById('action-result');
    if (!el) return;
    el.textContent = text;
    el.className = `tone-${tone}`;
  }

  /** @param {string} name @param {any} body */
  function describe(name, body) {
    if (name === 'retry') return body.retried === 0 ? 'No dead letter matched: nothing to retry.' : `Retrying ${body.retried} dead ${body.retried === 1 ? 'letter' : 'letters'}.`;
    const posted = (body.posted ?? []).map((/** @type {any} */ p) => `${p.target}${p.servers === null ? '' : ` (${p.servers} servers)`}`);
    const failed = (body.failed ?? []).map((/** @type {any} */ f) => `${f.target}: ${f.error}`);
    return [posted.length ? `Posted to ${posted.join(', ')}.` : '', failed.length ? `Failed: ${failed.join('; ')}.` : '', body.note ?? ''].filter(Boolean).join(' ');
  }

  /** @param {HTMLButtonElement} button */
  async function act(button) {
    const input = /** @type {HTMLInputElement | null} */ (document.getElementById('admin-token'));
    const token = input?.value.trim() ?? '';
    if (token === '') {
      say('Type the admin token (health.adminToken) first.', 'bad');
      input?.focus();
      return;
    }
    const name = button.dataset.action === 'post-stats' ? 'post-stats' : 'retry';
    const body = button.dataset.action === 'retry' ? { keys: [button.dataset.key], hook: button.dataset.hook } : {};
    button.disabled = true;
    say(`${button.textContent}…`, 'neutral');
    try {
      const res = await fetch(`status/actions/${name}`, {
        method: 'POST',
        cache: 'no-store',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      const answer = await res.json().catch(() => ({}));
      if (res.ok) say(describe(name, answer), answer.ok === false ? 'warn' : 'ok');
      else say(`Refused (${res.status}): ${answer.error ?? res.statusText}`, 'bad');
    } catch (error) {
      say(`The agent did not answer: ${error instanceof Error ? error.message : error}`, 'bad');
    } finally {
      button.disabled = false;
    }
    etag = null;
    void update();
  }

  function setUpActions() {
    const group = document.getElementById('actions-form');
    const input = /** @type {HTMLInputElement | null} */ (document.getElementById('admin-token'));
    if (!group || !input) return;
    group.hidden = false;
    input.value = sessionStorage.getItem(TOKEN_KEY) ?? '';
    input.addEventListener('input', () => sessionStorage.setItem(TOKEN_KEY, input.value));
    document.addEventListener('click', (event) => {
      const target = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
      if (target instanceof HTMLButtonElement && !target.disabled) void act(target);
    });
    enableActions();
  }

  for (const el of document.querySelectorAll('.js-only')) /** @type {HTMLElement} */ (el).hidden = false;
  setUpActions();
  // Redrawn when the window changes size or the light/dark scheme flips (the colours are the page's).
  let resizing = /** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined);
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(drawPlots, 150);
  });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', drawPlots);
  void update();
})();
