import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusDocument } from '../../../src/status/document.js';
import { call } from '../../helpers/http.js';
import { programPath } from '../../setup/provided.js';
import { eventually, PLANTED, startStatusAgent, type StatusAgent } from './fixture.js';

/**
 * The status page in a real browser: Debian's headless Chromium (found or installed by the test
 * setup), driven by playwright-core, which downloads no browser. The assertions read the DOM, never
 * pixels; each test saves a screenshot in its temp folder for a person to look at.
 */

const CHROMIUM = programPath('chromium');

let browser: Browser;
const opened: { page: Page; problems: string[]; navigations: () => number }[] = [];

/** A page of the agent's status, with every console error and CSP refusal collected. */
async function open(t: StatusAgent, options: BrowserContextOptions = {}): Promise<{ page: Page; problems: string[]; navigations: () => number }> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // The refusals the tests ask for (401, 403) show as failed loads: expected, not a problem.
    if (message.type() === 'error' && !/status of 40[13] /.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  let navigations = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations += 1;
  });
  await page.goto(`${t.url}/`);
  const handle = { page, problems, navigations: () => navigations };
  opened.push(handle);
  return handle;
}

async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'la-status-browser-')), `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect((await stat(path)).size).toBeGreaterThan(10_000);
  return path;
}

const post = (t: StatusAgent) => call(`${t.url}/status/actions/post-stats`, { method: 'POST', bearer: PLANTED.adminToken, json: {} });
const text = (page: Page, selector: string) => page.locator(selector).innerText();

describe.skipIf(!CHROMIUM)('status page in headless Chromium', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM! });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('plots the posted counts, shows a vote within 5 s without a reload, and retries a dead letter with the token only', { timeout: 60_000 }, async () => {
    const t = await startStatusAgent();
    const { page, problems, navigations } = await open(t);
    // The plot draws what the listing received, and follows new posts.
    for (const servers of [1_210, 1_230]) {
      t.setServers(servers);
      expect((await post(t)).status).toBe(200);
    }
    const applied = t.emu.admin.metrics(t.fx.projectId).map((m) => Number(m.metrics.server_count));
    expect(applied.at(-1)).toBe(1_230);
    await page.locator('#plot-stats[data-last-servers="1230"]').waitFor({ timeout: 5_000 });
    const plot = page.locator('#plot-stats');
    expect(await plot.locator('canvas').count()).toBe(1);
    const doc = (await call<StatusDocument>(`${t.url}/status.json`)).body;
    expect(doc.stats.samples.map((s) => s.servers)).toEqual(applied);
    expect(await plot.getAttribute('data-points')).toBe(String(applied.length));
    expect(await plot.getAttribute('data-posts')).toBe(String(doc.stats.posts.length));

    // A vote cast on the listing appears within 5 s, the page never reloading.
    const cast = Date.now();
    t.vote('carol');
    await page.locator('#votes-live', { hasText: 'carol' }).waitFor({ timeout: 5_000 });
    expect(Date.now() - cast).toBeLessThan(5_000);
    await page.locator('#votes-live', { hasText: 'ok in' }).waitFor({ timeout: 5_000 });

    // A dead letter shows with its retry button; a wrong token is refused and leaves it there.
    t.hook.failing = true;
    const { userId } = t.vote('dave');
    const retry = page.locator(`button[data-action="retry"][data-key^="${userId}:"]`);
    await retry.waitFor({ timeout: 5_000 });
    expect(await text(page, '#votes-live')).toContain('gave up after 1 try');
    await page.fill('#admin-token', 'not-the-admin-token');
    await retry.click();
    await page.locator('#action-result', { hasText: /^Refused \(401\)/ }).waitFor({ timeout: 5_000 });
    expect(await retry.count()).toBe(1);
    expect(t.hook.rewarded.some((key) => key.startsWith(`${userId}:`))).toBe(false);

    // With the token: retried, rewarded, and the dead letter leaves the page.
    t.hook.failing = false;
    await page.fill('#admin-token', PLANTED.adminToken);
    await retry.click();
    await page.locator('#action-result', { hasText: /^Retrying 1 dead letter\.$/ }).waitFor({ timeout: 5_000 });
    await retry.waitFor({ state: 'detached', timeout: 5_000 });
    await eventually('the reward', () => (t.hook.rewarded.some((key) => key.startsWith(`${userId}:`)) ? true : undefined));
    expect(await page.locator('#dead-letters').count()).toBe(0);

    await screenshot(page, 'status-page');
    expect(navigations()).toBe(1);
    // No console error: no CSP refusal, no failed asset, no script error.
    expect(problems).toEqual([]);
  });

  it('without health.adminToken: read-only, says how to enable actions, and a POST from the page is refused', { timeout: 30_000 }, async () => {
    const t = await startStatusAgent({ adminToken: null });
    t.hook.failing = true;
    t.vote('erin');
    const { page, problems } = await open(t);
    await page.locator('#votes-live', { hasText: 'gave up' }).waitFor({ timeout: 10_000 });
    expect(await text(page, '#actions')).toContain('set health.adminToken to a long random string');
    expect(await page.locator('button[data-action]').count()).toBe(0);
    expect(await page.locator('#admin-token').count()).toBe(0);
    // Run in the page (a string: this file has no DOM types).
    const status = await page.evaluate(
      `fetch('status/actions/retry', { method: 'POST', headers: { authorization: 'Bearer ' + ${JSON.stringify(PLANTED.adminToken)}, 'content-type': 'application/json' }, body: '{}' }).then((res) => res.status)`,
    );
    expect(status).toBe(403);
    expect(((await call<StatusDocument>(`${t.url}/status.json`)).body).votes.deadLetterCount).toBe(1);
    await screenshot(page, 'read-only');
    expect(problems).toEqual([]);
  });

  it('with JavaScript disabled, the first paint shows the current numbers', { timeout: 30_000 }, async () => {
    const t = await startStatusAgent({ reminders: true });
    t.setServers(4_321);
    await post(t);
    const frank = t.vote('frank');
    // Grace voted 12 h less 1.5 s ago: her reminder is sent 1.5 s from now; frank's is due in 12 h.
    const grace = t.vote('grace', Date.now() - 12 * 3_600_000 + 1_500);
    await eventually('the vote', async () => ((await call<StatusDocument>(`${t.url}/status.json`)).body.votes.recent.some((v) => v.name === 'frank') ? true : undefined));
    await eventually('the reminder sent', () => (t.hook.rewarded.includes(`reminder:${grace.key}`) ? true : undefined));
    const reminders = (await call<StatusDocument>(`${t.url}/status.json`)).body.votes.reminders;
    expect(reminders).toMatchObject({ enabled: true, scheduled: 1 });
    expect(reminders.next.map((r) => r.voteKey)).toEqual([frank.key]);
    expect(reminders.lastSent.map((r) => r.voteKey)).toEqual([grace.key]);
    const { page } = await open(t, { javaScriptEnabled: false });
    expect(await text(page, 'header')).toContain('Ready: every component works');
    expect(await text(page, '#stats-live')).toContain('4,321 servers');
    expect(await text(page, '#votes-live')).toContain('frank');
    expect(await text(page, '#commands-live')).toContain('2 commands on the listing');
    expect(await text(page, '#webhooks-live')).toMatch(/2 deliveries accepted/);
    // The reminders: frank's next due, grace's last sent, each in its table.
    expect(await text(page, '#reminders + p')).toBe('1 vote reminder scheduled.');
    expect(await page.locator('table', { hasText: 'Next reminders due' }).innerText()).toContain(frank.key);
    expect(await page.locator('table', { hasText: 'Last reminders sent' }).innerText()).toContain(grace.key);
    // What needs the script stays out of the way: no plot canvas, no token field.
    expect(await page.locator('canvas').count()).toBe(0);
    expect(await page.locator('#actions-form').isVisible()).toBe(false);
    expect(await text(page, '#actions')).toContain('listing-agent votes retry --agent');
    await screenshot(page, 'no-javascript');
  });

  it('fits a phone in the dark scheme, and the keyboard reaches every action', { timeout: 30_000 }, async () => {
    const t = await startStatusAgent();
    const { page, problems } = await open(t, { viewport: { width: 390, height: 844 }, colorScheme: 'dark', isMobile: true, hasTouch: true });
    await page.locator('#plot-stats canvas').waitFor({ timeout: 5_000 });
    const layout = (await page.evaluate(
      `({ pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth, background: getComputedStyle(document.body).backgroundColor, plotWidth: document.querySelector('#plot-stats canvas').getBoundingClientRect().width })`,
    )) as { pageWidth: number; viewport: number; background: string; plotWidth: number };
    expect(layout.pageWidth).toBeLessThanOrEqual(layout.viewport);
    expect(layout.plotWidth).toBeLessThanOrEqual(layout.viewport);
    expect(layout.background).toBe('rgb(18, 20, 23)');
    // Tab from the top: the skip link first, then on to the token field and both action buttons.
    const reached: string[] = [];
    for (let i = 0; i < 40 && !reached.includes('retry-all'); i += 1) {
      await page.keyboard.press('Tab');
      reached.push(String(await page.evaluate(`(() => { const el = document.activeElement; return el?.id || el?.dataset.action || el?.getAttribute('href') || el?.tagName || ''; })()`)));
    }
    expect(reached[0]).toBe('#main');
    expect(reached).toEqual(expect.arrayContaining(['#stats', '#votes', 'admin-token', 'post-stats', 'retry-all']));
    await screenshot(page, 'phone-dark');
    expect(problems).toEqual([]);
  });
});
