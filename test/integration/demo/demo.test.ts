import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../../../src/demo/demo.js';
import { createSimulatedBot } from '../../../src/demo/simulated-bot.js';
import type { StatusDocument } from '../../../src/status/document.js';
import { runCliInProcess } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';

describe('the simulated bot', () => {
  it('drifts by small steps and never below zero', () => {
    let i = 0;
    const sequence = [0, 0.99, 0.5];
    const bot = createSimulatedBot({ shardCount: 2, serversPerShard: 1, random: () => sequence[i++ % 3]! });
    const before = bot.shards();
    bot.drift();
    const after = bot.shards();
    after.forEach((count, shard) => {
      expect(count).toBeGreaterThanOrEqual(0);
      expect(Math.abs(count - before[shard]!)).toBeLessThanOrEqual(3);
    });
    expect(bot.total()).toBe(after.reduce((a, b) => a + b, 0));
  });
});

describe('listing-agent demo', () => {
  it('starts the emulator, a drifting bot and the agent, shows counts being posted, and cleans up', async () => {
    const lines: string[] = [];
    let release!: () => void;
    const until = new Promise<void>((resolve) => (release = resolve));
    let page: StatusDocument | undefined;
    let asking = false;
    const running = runDemo({
      print: (line) => {
        lines.push(line);
        const drifted = lines.some((l) => l.startsWith('[bot]      now'));
        const posted = lines.some((l) => l.startsWith('[listing]'));
        const resynced = lines.some((l) => l.includes('commands: unchanged'));
        const rewarded = lines.filter((l) => l.endsWith(': reward given')).length >= 3;
        const byWebhook = lines.some((l) => l.includes('arrived by signed webhook'));
        const polledAgain = lines.some((l) => l.includes('already here by webhook'));
        const reminded = lines.some((l) => l.startsWith('[agent]    reminder: '));
        if (drifted && posted && resynced && rewarded && byWebhook && polledAgain && reminded && !asking) {
          // What the status page shows at that moment, before the demo stops.
          asking = true;
          const url = /status page at (http:\/\/127\.0\.0\.1:\d+)\//.exec(lines.join('\n'))![1];
          void call<StatusDocument>(`${url}/status.json`)
            .then((res) => (page = res.body))
            .finally(release);
        }
      },
      until,
      driftEveryMs: 20,
      voteEveryMs: 50,
      clockJumpAfterMs: 300,
    });
    await running;
    const text = lines.join('\n');
    expect(text).toMatch(/\[emulator\] listening at http:\/\/127\.0\.0\.1:\d+/);
    expect(text).toMatch(/\[bot\] +"Demo Bot" runs 3 shards/);
    expect(text).toContain('reached the service as project "Demo Bot"');
    expect(text).toMatch(/health at http:\/\/127\.0\.0\.1:\d+\/healthz/);
    expect(text).toMatch(/status page at http:\/\/127\.0\.0\.1:\d+\/ : open it in a browser/);
    expect(text).toMatch(/\[bot\] +now [\d,]+ servers/);
    // The first post goes out as soon as the counts are ready: the simulated bot's true total.
    const first = /\[bot\] +"Demo Bot" runs 3 shards: ([\d,]+) servers/.exec(text)![1];
    expect(text).toContain(`[agent]    posted to v1 metrics/batch (1 timestamped sample): ${first} servers, 3 shards`);
    expect(text).toContain(`[listing]  the emulator now shows ${first} servers`);
    expect(text).toMatch(/\[agent\] +posted to v0 stats/);
    expect(text).toContain('stats: ready');
    // A first sync sends the commands; the second finds the same hash and sends nothing.
    expect(text).toContain('[agent]    commands: synced 2 commands to the listing (+ping +vote)');
    expect(text).toContain('[agent]    commands: unchanged since the last sync (2 commands), nothing sent');
    // Votes cast into the emulator reach the vote listener once each: three before the start, the first poll finds them.
    for (const voter of ['alice', 'bob', 'carol']) {
      expect(text).toContain(`[voter]    ${voter} votes for "Demo Bot" on the listing`);
      expect(lines.filter((l) => l === `[agent]    vote from ${voter}: reward given`).length).toBeGreaterThanOrEqual(1);
    }
    const cast = lines.filter((l) => l.startsWith('[voter]')).length;
    const rewards = lines.filter((l) => l.endsWith(': reward given')).length;
    expect(rewards).toBeGreaterThanOrEqual(3);
    expect(rewards).toBeLessThanOrEqual(cast);
    expect(text).toContain('votes: ready (polling 1 project every 5s)');
    // The receiver is registered as the project's webhook: votes arrive signed, the poller lists them
    // again, and every vote is rewarded once.
    expect(text).toMatch(/webhooks: ready \(listening at http:\/\/127\.0\.0\.1:\d+\/webhooks\/listing\)/);
    expect(text).toMatch(/\[listing\]  webhook \d+ now delivers signed votes to http:\/\/127\.0\.0\.1:\d+\/webhooks\/listing/);
    expect(text).toMatch(/\[agent\]    vote from \w+ arrived by signed webhook, recorded/);
    expect(text).toMatch(/\[agent\]    votes poll: the cursor listed \d+, \d+ of them already here by webhook \(same key\): no second reward/);
    const recorded = lines.filter((l) => / (arrived by signed webhook|found on the votes cursor), recorded$/.test(l)).length;
    expect(rewards).toBeLessThanOrEqual(recorded);
    // The clocks moved 12 h: each voter rewarded before is reminded once (their latest vote's), and not before the move.
    const jumped = lines.findIndex((l) => l.startsWith('[demo]     moving the clocks of the listing and the agent 12 h ahead'));
    expect(jumped).toBeGreaterThan(0);
    const reminders = lines.filter((l) => l.startsWith('[agent]    reminder: '));
    for (const line of reminders) expect(line).toMatch(/^\[agent\] {4}reminder: (alice|bob|carol|dave|erin) can vote again \(their vote of \d\d:\d\d:\d\d UTC expired\)$/);
    expect(lines.findIndex((l) => l.startsWith('[agent]    reminder: '))).toBeGreaterThan(jumped);
    const remindedVoters = reminders.map((l) => l.split(' ')[5]);
    expect(new Set(remindedVoters).size).toBe(remindedVoters.length);
    expect(page?.votes.reminders.enabled).toBe(true);
    expect(page?.votes.reminders.lastSent.length).toBeGreaterThan(0);
    const stateLine = lines.find((line) => line.includes('state flushed to'))!;
    expect(existsSync(stateLine.split('state flushed to ')[1]!)).toBe(false);
    expect(lines.at(-1)).toBe('demo over.');
    // The status page showed the demo's posts and its votes, the webhook ones by name.
    expect(page?.stats.posts.filter((p) => p.outcome === 'ok').map((p) => p.target)).toEqual(expect.arrayContaining(['v1_batch', 'v0']));
    expect(page?.stats.samples.at(0)?.servers).toBe(Number(first!.replace(/,/g, '')));
    const byName = page?.votes.recent.filter((v) => v.source === 'webhook').map((v) => v.name) ?? [];
    expect(byName.length).toBeGreaterThan(0);
    for (const name of byName) expect(['alice', 'bob', 'carol', 'dave', 'erin']).toContain(name);
    expect(page?.votes.recent.every((v) => v.hooks.some((h) => h.hook === 'vote-event' && h.outcome === 'ok') || v.hooks.length === 0)).toBe(true);
  });

  it('stops after --duration and refuses a bad one', async () => {
    const res = await runCliInProcess(['demo', '--duration', '200ms']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('demo over.');
    const bad = await runCliInProcess(['demo', '--duration', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--duration');
  });
});
