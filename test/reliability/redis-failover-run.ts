import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { voteKey } from '../../src/votes/types.js';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { crashSigns, freePort, secretValue, SHORT, sleep, startDaemon, tokenSecrets, Transcript, type Daemon } from '../helpers/reliability.js';
import { webhooksFor } from '../integration/agent/redis-fixture.js';
import { startSlowHook } from '../integration/leader/daemons.js';

/**
 * One failover run of redis-failover.reliability.ts, as an operator meets it: two `listing-agent
 * run` daemons (stats from the push source, votes polled from the emulator and delivered as signed
 * webhooks to both, an http reward hook that answers slowly so calls are in flight), 10 votes a
 * second, a failover mid-stream (what `failover` does), one agent restarted at the end. It samples
 * both `/readyz` every 100 ms throughout, and reports what the issue's table counts.
 */

export const LEASE_MS = SHORT ? 2_000 : 5_000;
const VOTE_EVERY_MS = 100;
const HOOK_DELAY_MS = 100;
const BEFORE_MS = SHORT ? 3_000 : 15_000;
const AFTER_MS = SHORT ? 5_000 : 30_000;

/** How the daemons reach Redis: `state.redis` without the lease and agent ID. */
export type RedisShape = Record<string, unknown>;

/** What a run's failover may do to the daemons. */
export interface RunControls {
  /** The daemon that leads now (by its /readyz), and the other. */
  roles(): Promise<{ leader: Daemon; standby: Daemon; leaderName: string }>;
  /** SIGSTOP / SIGCONT a daemon (its process group). */
  freeze(daemon: Daemon): void;
  thaw(daemon: Daemon): void;
  /** Marks a daemon killed by the failover: it is started again at the end. */
  killed(daemon: Daemon): Promise<void>;
}

export interface RunReport {
  cast: number;
  acknowledged: number;
  lostAcknowledged: string[];
  lost: string[];
  twice: number;
  badRepeats: string[];
  twoLeaderSamples: number;
  untruthful: string[];
  postAfterMs: number | undefined;
  readyAtEnd: number[];
  signs: string[];
  secrets: string[];
  line: string;
}

interface Sample {
  at: number;
  name: string;
  status: number;
  leading: boolean;
  redis: string;
}

async function sample(name: string, url: string): Promise<Sample | undefined> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1_000) });
    const body = (await res.json()) as { components: Record<string, { ready: boolean; detail: string }> };
    const leader = body.components.leader?.detail ?? '';
    return { at: Date.now(), name, status: res.status, leading: leader.startsWith('leading'), redis: body.components.redis?.detail ?? '' };
  } catch {
    return undefined;
  }
}

/** Runs the daemons on `shape`, calls `failover` mid-stream, and reports. */
export async function failoverRun(
  label: string,
  shape: RedisShape,
  failover: (controls: RunControls) => Promise<{ at: number; done: number }>,
): Promise<RunReport> {
  const started = Date.now();
  const emu = await startTestEmulator({
    settings: {
      allowHttpLoopback: true,
      requestLogSize: 1_000_000,
      v1RequestsPerSecond: 10_000,
      v1ProjectWritesPerMinute: 10_000,
      votesPageSize: 20,
      deliveryRetryDelaysMs: [300, 600, 1_000, 2_000, 4_000, 8_000],
      deliveryTimeoutMs: 3_000,
    },
  });
  const fx = setupBot(emu);
  const hook = await startSlowHook(HOOK_DELAY_MS);
  const cwd = await mkdtemp(join(tmpdir(), 'la-reliability-failover-'));
  const transcript = new Transcript();
  const names = ['a', 'b'];
  const { ports: webhookPorts, secrets: webhookSecrets } = await webhooksFor(emu, fx, names.length);
  const secrets: Record<string, string> = { ...tokenSecrets('service.token', fx.projectToken), 'stats.push.key': secretValue('pushkey') };
  webhookSecrets.forEach((secret, i) => (secrets[`webhooks.secrets[${i}]`] = secret));
  const pushPorts = [await freePort(), await freePort()];
  const healthUrls: string[] = [];
  for (const [i, name] of names.entries()) {
    const healthPort = await freePort();
    healthUrls.push(`http://127.0.0.1:${healthPort}`);
    await writeFile(
      join(cwd, `${name}.json`),
      JSON.stringify({
        service: { v1: emu.urls.v1, v0: emu.urls.v0 },
        stats: { enabled: true, source: 'push', schedule: '* * * * * *', push: { listen: `127.0.0.1:${pushPorts[i]}`, key: '${PUSH_KEY}' } },
        votes: { enabled: true, pollInterval: '5s', lookback: '1h', hooks: [{ type: 'http', name: 'reward', url: `${hook.url}/${name}`, timeout: '5s', retries: 10 }] },
        webhooks: { enabled: true, listen: `127.0.0.1:${webhookPorts[i]}`, secrets: webhookSecrets },
        state: { directory: `./state-${name}`, redis: { ...shape, lease: `${LEASE_MS}ms`, agentId: name } },
        health: { listen: `127.0.0.1:${healthPort}` },
        log: { level: 'info', format: 'json' },
      }),
    );
  }
  const env = { LISTING_AGENT_SERVICE_TOKEN: fx.projectToken, PUSH_KEY: secrets['stats.push.key']! };
  const start = (name: string) => startDaemon(cwd, ['--config', `${name}.json`], env);
  const daemons: Daemon[] = names.map(start);
  const outputs: string[] = names.map(() => '');
  const toRestart = new Set<number>();
  let running = true;
  const samples: Sample[] = [];
  try {
    await Promise.all(daemons.map((daemon) => daemon.waitFor('"msg":"agent ready"', 60_000)));
    const sampler = (async () => {
      while (running) {
        const got = await Promise.all(names.map((name, i) => sample(name, healthUrls[i]!)));
        for (const s of got) if (s) samples.push(s);
        await sleep(100);
      }
    })();
    // A shard holds at most 5,000 servers (the push endpoint refuses more).
    let servers = 1_000;
    const bot = (async () => {
      while (running) {
        servers += 1;
        const body = JSON.stringify({ shard_id: 0, shard_count: 1, server_count: servers });
        const headers = { authorization: `Bearer ${secrets['stats.push.key']}`, 'content-type': 'application/json' };
        await Promise.all(pushPorts.map((port) => fetch(`http://127.0.0.1:${port}/stats`, { method: 'POST', body, headers }).then((r) => r.arrayBuffer()).catch(() => undefined)));
        await sleep(250);
      }
    })();
    const voters = Array.from({ length: 40 }, (_, i) => emu.admin.createUser({ username: `failover-voter-${i}` }));
    const cast: string[] = [];
    let voting = true;
    let lastVoteAt = Date.now();
    const votes = (async () => {
      while (voting) {
        lastVoteAt = Math.max(Date.now(), lastVoteAt + 1);
        const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: voters[cast.length % voters.length]!.id, created_at: new Date(lastVoteAt).toISOString() });
        cast.push(voteKey(vote.user_id, vote.created_at));
        await sleep(VOTE_EVERY_MS);
      }
    })();
    const leaderNow = async () => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const got = await Promise.all(names.map((name, i) => sample(name, healthUrls[i]!)));
        const i = got.findIndex((s) => s?.leading);
        if (i >= 0) return i;
        if (Date.now() > deadline) throw new Error(`${label}: no leader within 20 s`);
        await sleep(100);
      }
    };
    await leaderNow();
    await sleep(BEFORE_MS);
    const controls: RunControls = {
      async roles() {
        const i = await leaderNow();
        return { leader: daemons[i]!, standby: daemons[1 - i]!, leaderName: names[i]! };
      },
      freeze: (daemon) => process.kill(-daemon.pid, 'SIGSTOP'),
      thaw: (daemon) => process.kill(-daemon.pid, 'SIGCONT'),
      async killed(daemon) {
        const i = daemons.indexOf(daemon);
        await daemon.kill();
        outputs[i] += daemon.output();
        toRestart.add(i);
      },
    };
    const { at: failAt, done: failDone } = await failover(controls);
    await sleep(AFTER_MS);
    voting = false;
    await votes;
    // One agent restarted at the end: the killed one, else the standby.
    if (toRestart.size === 0) {
      const { standby } = await controls.roles();
      const i = daemons.indexOf(standby);
      await standby.stop();
      outputs[i] += standby.output();
      toRestart.add(i);
    }
    for (const i of toRestart) daemons[i] = start(names[i]!);
    await Promise.all([...toRestart].map((i) => daemons[i]!.waitFor('"msg":"agent ready"', 60_000)));
    const fired = () => new Set(hook.calls.map((c) => c.key));
    const drainDeadline = Date.now() + 45_000;
    while (Date.now() < drainDeadline && !cast.every((key) => fired().has(key))) await sleep(250);
    await sleep(4_000);
    await emu.admin.idle();
    running = false;
    await Promise.all([bot, sampler]);
    const readyAtEnd = await Promise.all(healthUrls.map(async (url) => (await sample('end', url))?.status ?? 0));
    const notReady = await Promise.all(
      healthUrls.map(async (url, i) => (readyAtEnd[i] === 200 ? '' : await fetch(`${url}/readyz`).then((r) => r.text()).catch(() => 'no answer'))),
    );
    for (const [i, daemon] of daemons.entries()) {
      await daemon.stop();
      outputs[i] += daemon.output();
      transcript.add(`daemon ${names[i]} output`, outputs[i]!);
    }

    const acknowledgedKeys = new Set(
      emu.admin
        .deliveries(fx.projectId)
        .filter((d) => d.attempts.some((a) => a.status !== null && a.status >= 200 && a.status < 300))
        .map((d) => {
          const data = d.body.data as { user: { id: string }; created_at: string };
          return voteKey(data.user.id, data.created_at);
        }),
    );
    const firings = new Map<string, { agent: string; at: number; answered?: number }[]>();
    for (const call of hook.calls) firings.set(call.key, [...(firings.get(call.key) ?? []), call]);
    const lost = cast.filter((key) => !firings.has(key));
    const lostAcknowledged = lost.filter((key) => acknowledgedKeys.has(key));
    const twice = [...firings].filter(([, calls]) => calls.length > 1);
    // A repeat only for a call in flight at the failover: begun before it was over, not answered before it began.
    const inFlight = (call: { at: number; answered?: number }) => call.at <= failDone + 1_000 && (call.answered ?? Infinity) >= failAt - 1_000;
    const badRepeats = twice
      .filter(([, calls]) => calls.length > 2 || !inFlight(calls[0]!))
      .map(([key, calls]) => `${key}: ${calls.map((c) => `${c.agent}@${c.at}-${c.answered ?? '?'}`).join(', ')}`);
    const byTime = new Map<number, Sample[]>();
    for (const s of samples) byTime.set(Math.floor(s.at / 100), [...(byTime.get(Math.floor(s.at / 100)) ?? []), s]);
    const twoLeaderSamples = [...byTime.values()].filter((group) => new Set(group.filter((s) => s.leading).map((s) => s.name)).size > 1).length;
    const untruthful = samples.filter((s) => s.status === 200 && /replica|not on the primary|is down/.test(s.redis)).map((s) => `${s.name}@${s.at}: ${s.redis}`);
    const firstPostAfter = emu.admin.metrics(fx.projectId).find((m) => Date.parse(m.applied_at) > failDone);
    const postAfterMs = firstPostAfter === undefined ? undefined : Date.parse(firstPostAfter.applied_at) - failDone;
    const signs = outputs.flatMap((output, i) => crashSigns(output).map((sign) => `${names[i]}: ${sign}`));
    // Retries of a thawed agent that another agent had taken the vote from: let go, not run.
    const letGo = outputs.reduce((n, output) => n + output.split('vote hook not retried: another agent took the vote over').length - 1, 0);
    const hits = transcript.scan(secrets);
    const line =
      `${label}: failover ${failDone - failAt} ms; ${cast.length} votes (${acknowledgedKeys.size} acknowledged by webhook, ${lostAcknowledged.length} of them lost, ` +
      `${lost.length} lost in all), ${twice.length} rewarded twice (${badRepeats.length} not in flight), ${letGo} retries let go, ${twoLeaderSamples} samples with two leaders, ` +
      `${untruthful.length} untruthful /readyz, stats posted ${postAfterMs ?? 'never'} ms after the failover (lease ${LEASE_MS} ms), ready at the end ${readyAtEnd.join('/')}, ` +
      `${emu.admin.metrics(fx.projectId).length} posts in all, ${signs.length} crash signs, ${hits.length} secrets, ${Math.round((Date.now() - started) / 1000)} s` +
      `${notReady.some((text) => text !== '') ? `; not ready at the end: ${notReady.join(' | ')}` : ''}` +
      `${badRepeats.length > 0 ? `; repeats outside the failover (${failAt}..${failDone}): ${badRepeats.join('; ')}` : ''}` +
      `${lost.length > 0 ? `; lost: ${lost.slice(0, 20).join(', ')}` : ''}`;
    console.log(line);
    // RELIABILITY_DUMP=<dir>: the daemons' output of every run, to read why one failed.
    const dump = process.env.RELIABILITY_DUMP;
    if (dump !== undefined) {
      await mkdir(dump, { recursive: true });
      for (const [i, name] of names.entries()) await writeFile(join(dump, `${started}-${name}.log`), `${line}\n${outputs[i]!}`);
    }
    return { cast: cast.length, acknowledged: acknowledgedKeys.size, lostAcknowledged, lost, twice: twice.length, badRepeats, twoLeaderSamples, untruthful, postAfterMs, readyAtEnd, signs, secrets: hits, line };
  } finally {
    running = false;
    for (const daemon of daemons) {
      try {
        process.kill(-daemon.pid, 'SIGCONT');
      } catch {
        // gone
      }
      if (daemon.alive()) await daemon.kill();
    }
    await hook.close();
  }
}
