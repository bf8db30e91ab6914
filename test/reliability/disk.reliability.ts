import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signDelivery } from '../../src/contract/signature.js';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { crashSigns, freePort, SEED, SHORT, sleep, startDaemon, type Daemon, Transcript } from '../helpers/reliability.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';
import { startVoteHookServer } from '../helpers/vote-hook-server.js';

/**
 * A disk that fills and a directory remounted read-only under webhook load: `listing-agent run`
 * (webhooks only, an http reward hook) with its state directory on a small tmpfs, signed
 * deliveries at a steady rate. The disk fills (a filler file), then is freed; later the directory
 * is remounted read-only, then read-write. Deliveries refused with 503 are re-sent at the end.
 * Then a clean stop on a full disk with rewards finishing meanwhile, and a restart.
 *
 * Asserted: every acknowledged vote rewarded once, every refused one rewarded once after its
 * re-sending, a 503 always with retry-after; `/readyz` 503 with the reason in words while full and
 * while read-only, 200 again by itself (no delivery sent) after each; the restart after the stop
 * on a full disk fires nothing; no crash, no secret in the output.
 */

const PHASE_MS = SHORT ? 2_000 : 10_000;
const DELIVERY_EVERY_MS = SHORT ? 20 : 10;
/** What the agent promises: a probe within 5 s at most (500 ms doubling), plus a scrape's slack. */
const RECOVERY_MS = 7_000;
const VOTES_AT_STOP = SHORT ? 120 : 400;
const SECRET = `whs_${'d'.repeat(24)}`;

const mounted: Tmpfs[] = [];
afterAll(() => {
  for (const fs of mounted.splice(0)) fs.unmount();
});

const canMount = (() => {
  const fs = mountTmpfs(1024 * 1024);
  if (typeof fs === 'string') return fs;
  fs.unmount();
  return true;
})();
if (canMount !== true) console.log(`[disk reliability] SKIPPING the full and read-only disk scenario: ${canMount}`);

interface Sent {
  key: string;
  body: string;
  /** Answers in order: a status, or `error` for a failed request. */
  answers: (number | 'error')[];
}

let seq = 0;
/** A new vote of the bot `fx`, cast a minute ago (within the window the receiver takes). */
function newVote(fx: { projectId: string; platformId: string }): Sent {
  seq += 1;
  const created = new Date(Date.now() - 60_000 + seq).toISOString();
  const userId = String(500_000_000_000_000_000n + BigInt(seq));
  const body = JSON.stringify({
    type: 'vote.create',
    data: {
      id: String(900_000_000_000_000_000n + BigInt(seq)),
      weight: 1,
      created_at: created,
      expires_at: new Date(Date.parse(created) + 43_200_000).toISOString(),
      project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
      user: { id: userId, platform_id: '200000000000000002', name: 'voter', avatar_url: null },
    },
  });
  return { key: `${userId}:${Date.parse(created)}`, body, answers: [] };
}

describe.skipIf(canMount !== true)('reliability: a disk that fills and a directory remounted read-only under webhook load', () => {
  it('refuses what is not on disk, says so on /readyz, recovers by itself, rewards every vote once; a stop on a full disk re-fires nothing', { timeout: 300_000 }, async () => {
    const started = Date.now();
    const tmpfs = mountTmpfs(4 * 1024 * 1024);
    if (typeof tmpfs === 'string') throw new Error(tmpfs);
    mounted.push(tmpfs);
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const cwd = await mkdtemp(join(tmpdir(), 'la-reliability-disk-'));
    const transcript = new Transcript();
    let release: () => void = () => undefined;
    let held: Promise<void> | undefined;
    const hook = await startVoteHookServer({ hold: () => held });
    const [webhookPort, healthPort] = [await freePort(), await freePort()];
    const receiver = `http://127.0.0.1:${webhookPort}/webhooks/listing`;
    const readyzUrl = `http://127.0.0.1:${healthPort}/readyz`;

    const writeConfig = (run: number) =>
      writeFile(
        join(cwd, 'agent.json'),
        JSON.stringify({
          service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
          state: { directory: tmpfs.dir },
          health: { listen: `127.0.0.1:${healthPort}` },
          log: { level: 'info', format: 'json' },
          votes: { enabled: false, hooks: [{ type: 'http', name: 'reward', url: `${hook.url}/r${run}`, retries: 10 }] },
          webhooks: { enabled: true, listen: `127.0.0.1:${webhookPort}`, secrets: [SECRET] },
        }),
      );

    const send = async (vote: Sent): Promise<number | 'error'> => {
      const headers = signDelivery({ secret: SECRET, rawBody: vote.body, timestampSeconds: Math.floor(Date.now() / 1000) });
      const answer = await fetch(receiver, { method: 'POST', body: vote.body, headers: { 'content-type': 'application/json', ...headers } }).then(
        (response) => {
          if (response.status === 503 && response.headers.get('retry-after') === null) missingRetryAfter.push(vote.key);
          return response.status;
        },
        () => 'error' as const,
      );
      vote.answers.push(answer);
      return answer;
    };
    const missingRetryAfter: string[] = [];
    const sent: Sent[] = [];
    const inFlight = new Set<Promise<unknown>>();
    let sending = false;
    const steady = async () => {
      while (sending) {
        const vote = newVote(fx);
        sent.push(vote);
        const p = send(vote);
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
        await sleep(DELIVERY_EVERY_MS);
      }
    };
    const load = async (ms: number) => {
      sending = true;
      const running = steady();
      await sleep(ms);
      sending = false;
      await running;
      await Promise.all([...inFlight]);
    };
    const readyz = async () => {
      const response = await fetch(readyzUrl).catch(() => undefined);
      if (!response) return { status: 0, text: '' };
      return { status: response.status, text: await response.text() };
    };
    /** How long until /readyz answers `status` (with `words`), polled every 50 ms; -1 past `withinMs`. */
    const readyzBecomes = async (status: number, words: string | undefined, withinMs: number) => {
      const from = Date.now();
      while (Date.now() - from < withinMs) {
        const now = await readyz();
        if (now.status === status && (words === undefined || now.text.includes(words))) return Date.now() - from;
        await sleep(50);
      }
      return -1;
    };

    await writeConfig(1);
    let daemon: Daemon = startDaemon(cwd, ['--config', 'agent.json']);
    await daemon.waitFor('"msg":"agent ready"', 30_000);
    const truth: string[] = [];

    // Normal.
    await load(PHASE_MS);
    if ((await readyz()).status !== 200) truth.push('not ready before the disk filled');

    // The disk fills under load.
    tmpfs.fill();
    const noSpace = `no space left on the device holding ${tmpfs.dir}`;
    await load(PHASE_MS);
    const fullSaid = await readyzBecomes(503, noSpace, 2_000);
    if (fullSaid < 0) truth.push(`/readyz never said "${noSpace}" while full`);
    tmpfs.free();
    // No delivery now: it must come back by itself.
    const freedMs = await readyzBecomes(200, undefined, RECOVERY_MS);
    if (freedMs < 0) truth.push(`/readyz not 200 within ${RECOVERY_MS} ms of freeing the disk`);
    await load(PHASE_MS);

    // Read-only under load, then read-write.
    await tmpfs.readOnly();
    await load(PHASE_MS);
    const readOnlySaid = await readyzBecomes(503, 'is read-only: nothing can be written there', 2_000);
    if (readOnlySaid < 0) truth.push('/readyz never said read-only while read-only');
    tmpfs.readWrite();
    const rwMs = await readyzBecomes(200, undefined, RECOVERY_MS);
    if (rwMs < 0) truth.push(`/readyz not 200 within ${RECOVERY_MS} ms of the remount read-write`);
    await load(PHASE_MS);

    // Every refused delivery sent again until it is taken.
    const refused = sent.filter((vote) => vote.answers[0] !== 204);
    for (const vote of refused) {
      for (let attempt = 0; attempt < 50 && (await send(vote)) !== 204; attempt += 1) await sleep(100);
    }
    const allKeys = new Set(sent.map((vote) => vote.key));
    const deadline = Date.now() + 60_000;
    while ([...allKeys].some((key) => !hook.counts().has(key)) && Date.now() < deadline) await sleep(100);

    // A clean stop on a full disk, rewards finishing while it is full, then a restart.
    held = new Promise<void>((resolve) => (release = resolve));
    const atStop: Sent[] = [];
    for (let i = 0; i < VOTES_AT_STOP; i += 1) {
      const vote = newVote(fx);
      atStop.push(vote);
      sent.push(vote);
      await send(vote);
    }
    const stopAcknowledged = atStop.filter((vote) => vote.answers[0] === 204).length;
    // A 503 here (seen once in a long run, with the disk not yet full) is a refusal the service
    // would retry: sent again like the others, and named in the summary.
    for (const vote of atStop.filter((v) => v.answers[0] !== 204)) {
      for (let attempt = 0; attempt < 50 && (await send(vote)) !== 204; attempt += 1) await sleep(100);
    }
    tmpfs.fill();
    held = undefined;
    release();
    while (atStop.some((vote) => !hook.counts().has(vote.key)) && Date.now() < deadline + 30_000) await sleep(50);
    const stopExit = await daemon.stop();
    transcript.add('run 1', daemon.output());
    // Kept for a post-mortem: the summary names the file when a vote is missing.
    await writeFile(join(cwd, 'run1.log'), daemon.output());
    const crashes = crashSigns(daemon.output()).map((sign) => `run 1: ${sign}`);
    tmpfs.free();
    await writeConfig(2);
    daemon = startDaemon(cwd, ['--config', 'agent.json']);
    await daemon.waitFor('"msg":"agent ready"', 30_000);
    await sleep(2_000);
    const restartExit = await daemon.stop();
    transcript.add('run 2', daemon.output());
    crashes.push(...crashSigns(daemon.output()).map((sign) => `run 2: ${sign}`));

    const counts = hook.counts();
    const refiredAfterRestart = hook.calls.filter((call) => call.path.endsWith('/r2')).map((call) => call.key);
    const missing = [...new Set(sent.map((vote) => vote.key))].filter((key) => !counts.has(key));
    const twice = [...counts].filter(([, n]) => n > 1).map(([key]) => key);
    const acknowledged = sent.filter((vote) => vote.answers[0] === 204).length;
    const hits = transcript.scan({ 'webhooks.secrets[0]': SECRET });
    const refusedAtStop = atStop.filter((vote) => vote.answers[0] !== 204).map((vote) => `${vote.key} (${vote.answers.join(', ')})`);
    if (missing.length > 0 || refusedAtStop.length > 0) console.log(`disk: missing ${missing.join(', ') || 'none'}; refused in the stop phase (answers): ${refusedAtStop.join(', ') || 'none'}; daemon log: ${join(cwd, 'run1.log')}`);
    console.log(
      `disk: ${sent.length} votes delivered (${acknowledged} acknowledged at once, ${refused.length} refused with 503 and re-sent), ${hook.calls.length} hook calls, ` +
        `${missing.length} lost, ${twice.length} rewarded twice; /readyz: full said after ${fullSaid} ms, ready ${freedMs} ms after freeing, ` +
        `read-only said after ${readOnlySaid} ms, ready ${rwMs} ms after read-write; stop on a full disk: ${stopAcknowledged} votes finished while full, ` +
        `exit ${String(stopExit)}, ${refiredAfterRestart.length} fired again after the restart; ${Math.round((Date.now() - started) / 1000)} s (seed ${SEED})`,
    );

    expect(refused.length, 'some deliveries were refused while the disk was full or read-only').toBeGreaterThan(0);
    expect(missingRetryAfter).toEqual([]);
    expect(truth).toEqual([]);
    expect(missing).toEqual([]);
    expect(twice).toEqual([]);
    expect(refiredAfterRestart).toEqual([]);
    expect(stopExit).toBe(0);
    expect(restartExit).toBe(0);
    expect(crashes).toEqual([]);
    expect(hits).toEqual([]);
    expect(hook.refused).toEqual([]);
  });
});
