/**
 * Requests sent to the service over one simulated day at steady state, on an injected clock
 * (vitest's fake timers: setTimeout, setInterval and Date; I/O stays real), against the emulator
 * (in this process, on the same clock), for
 *   (a) our agent, `createListingAgent` in this process with the daemon's defaults: stats every
 *       30 m (batch, a sample every 5 m, skip unchanged), commands synced on start (only when
 *       changed), the votes cursor polled every 60 s, the file state store; its counts from an
 *       in-memory count source (`countSource`), its commands given in code;
 *   (c) topgg-autoposter 2.0.2 with the same 30 m interval (bench/helpers/autoposter.mjs: its
 *       BasePoster over a stand-in client reading the same counts; the sdk's requests sent to the
 *       emulator through undici's global dispatcher).
 * The same day for both: the server count grows by one every 2 h (12 changes), shards stay at 2;
 * a vote every hour (24); 10 restarts (stop, then a new agent or poster on the same state), one
 * every 24/11 h. Webhooks are left out: they send nothing to the service.
 *
 * Each request is seen twice: by a counting dispatcher (method, path, body, clock time, so posts
 * can be compared with the one before) and in the emulator's request log (its answer). A post
 * "carries no new information" when every count in it equals what the previous post already
 * said. The keep-alive is one post per configured interval (30 m) even when nothing changed: an
 * unchanged post less than 30 m after the previous post is "beyond the keep-alive".
 *
 * How time moves: the driver jumps to the next timer (vi.advanceTimersToNextTimerAsync), then lets
 * real I/O finish (until no request is in flight for several event-loop turns) before the next jump.
 *
 * Run:  npm run bench:requests     (= npm run build && vitest bench --run bench/requests.bench.ts)
 * `BENCH_DAY_HOURS` (default 24) shortens the day for a trial.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, type Dispatcher } from 'undici';
import { bench, describe, vi } from 'vitest';
import { createListingAgent, type ListingAgent } from '../src/agent/agent.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import type { CountSource } from '../src/stats/source.js';
import { redirectTopgg, standInClient, StandInPoster } from './helpers/autoposter.mjs';
import { machine, table } from './helpers/daemon.js';

const HOUR = 3_600_000;
const DAY_MS = Number(process.env.BENCH_DAY_HOURS ?? 24) * HOUR;
const INTERVAL_MS = 30 * 60_000;
const RESTARTS = 10;
const CHANGE_EVERY_MS = 2 * HOUR;
const VOTE_EVERY_MS = HOUR;
const START = Date.UTC(2026, 10, 2, 0, 0, 0);
const COMMANDS = [
  { name: 'ping', description: 'Replies with pong' },
  { name: 'vote', description: 'Links to the listing' },
];

/** The bot's counts at `t` (ms since the start of the day). */
const countsAt = (t: number) => ({ serverCount: 1_234 + Math.floor(t / CHANGE_EVERY_MS), shardCount: 2 });

interface Sent {
  at: number;
  method: string;
  path: string;
  body: string | undefined;
  /** Votes in the answer (GET votes only). */
  votes?: number;
}

const realImmediate = setImmediate;
const turn = () => new Promise<void>((resolve) => realImmediate(resolve));

/** Lets real I/O finish: returns once nothing has been in flight for `quietTurns` event-loop turns. */
async function settle(inFlight: () => number, quietTurns = 8): Promise<void> {
  let quiet = 0;
  while (quiet < quietTurns) {
    await turn();
    quiet = inFlight() === 0 ? quiet + 1 : 0;
  }
}

/** Moves the fake clock to `until`, timer by timer, letting real I/O settle after each. */
async function runUntil(until: number, inFlight: () => number): Promise<number> {
  let steps = 0;
  while (Date.now() < until) {
    const before = Date.now();
    await vi.advanceTimersToNextTimerAsync();
    if (Date.now() > until || Date.now() === before) vi.setSystemTime(Math.max(Date.now(), until));
    await settle(inFlight);
    steps += 1;
  }
  return steps;
}

/** An undici Agent toward the emulator that records each request and counts those in flight. */
function countingDispatcher(sent: Sent[]): { dispatcher: Dispatcher; inFlight: () => number } {
  let inFlight = 0;
  const ends = new Set<PropertyKey>(['onComplete', 'onError', 'onResponseEnd', 'onResponseError']);
  const dispatcher = new Agent().compose((dispatch) => (options, handler) => {
    const url = new URL(options.path, String(options.origin));
    const record: Sent = { at: Date.now(), method: options.method, path: url.pathname, body: typeof options.body === 'string' ? options.body : Buffer.isBuffer(options.body) ? options.body.toString() : undefined };
    sent.push(record);
    const isVotes = options.method === 'GET' && url.pathname.endsWith('/votes');
    const chunks: Buffer[] = [];
    inFlight += 1;
    let ended = false;
    const wrapped = new Proxy(handler, {
      get(target, property) {
        const value = Reflect.get(target, property) as unknown;
        if (typeof value !== 'function') return value;
        if (isVotes && (property === 'onData' || property === 'onResponseData')) {
          return (...args: unknown[]) => {
            const chunk = args.find((arg) => Buffer.isBuffer(arg));
            if (chunk) chunks.push(chunk);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        if (!ends.has(property)) return value.bind(target);
        return (...args: unknown[]) => {
          if (isVotes && (property === 'onComplete' || property === 'onResponseEnd')) {
            try {
              record.votes = (JSON.parse(Buffer.concat(chunks).toString()) as { data: unknown[] }).data.length;
            } catch {
              // not a page: leave it uncounted
            }
          }
          if (!ended) {
            ended = true;
            inFlight -= 1;
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return dispatch(options, wrapped);
  });
  return { dispatcher, inFlight: () => inFlight };
}

function setupEmulator(emu: RunningEmulator) {
  const owner = emu.admin.createUser({ username: 'bench-owner' });
  const { project, project_token } = emu.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'Bench Bot' });
  const voters = Array.from({ length: 24 }, (_, i) => emu.admin.createUser({ username: `voter-${i}` }));
  return { projectId: project.id, token: project_token, voters };
}

/** The day's schedule of events other than timers: restarts, votes (ms since the start). */
const restartTimes = Array.from({ length: RESTARTS }, (_, i) => Math.round(((i + 1) * DAY_MS) / (RESTARTS + 1)));

interface DayResult {
  sent: Sent[];
  statuses: number[];
  steps: number;
  wallMs: number;
}

/** Runs one day: `start()` makes and starts a process (agent or poster), `stop()` stops it. */
async function day(side: {
  emu: RunningEmulator;
  voters: Array<{ id: string }>;
  projectId: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  inFlight(): number;
}): Promise<Omit<DayResult, 'sent'>> {
  const began = performance.now();
  let steps = 0;
  const events = [
    ...restartTimes.map((t) => ({ t, kind: 'restart' as const })),
    ...Array.from({ length: Math.floor(DAY_MS / VOTE_EVERY_MS) }, (_, i) => ({ t: i * VOTE_EVERY_MS + 17 * 60_000, kind: 'vote' as const })),
  ].sort((a, b) => a.t - b.t);
  await side.start();
  await settle(side.inFlight);
  let votes = 0;
  for (const event of events) {
    steps += await runUntil(START + event.t, side.inFlight);
    if (event.kind === 'vote') {
      side.emu.admin.castVote({ project_id: side.projectId, user_id: side.voters[votes++ % side.voters.length]!.id });
    } else {
      await side.stop();
      await side.start();
    }
    await settle(side.inFlight);
  }
  steps += await runUntil(START + DAY_MS, side.inFlight);
  await side.stop();
  const statuses = side.emu.admin.requests().map((r) => r.status);
  return { statuses, steps, wallMs: performance.now() - began };
}

async function ourDay(): Promise<DayResult> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], now: START });
  const emu = await startEmulator({ now: () => Date.now() });
  const dir = mkdtempSync(join(tmpdir(), 'listing-agent-requests-bench-'));
  const sent: Sent[] = [];
  const counting = countingDispatcher(sent);
  try {
    const fx = setupEmulator(emu);
    const countSource: CountSource = { description: 'bench counts (in memory)', read: async () => ({ ready: true, ...countsAt(Date.now() - START) }) };
    let agent: ListingAgent | undefined;
    const result = await day({
      emu,
      voters: fx.voters,
      projectId: fx.projectId,
      inFlight: counting.inFlight,
      async start() {
        agent = createListingAgent({
          config: {
            service: { token: fx.token, v1: emu.urls.v1, v0: emu.urls.v0 },
            stats: { enabled: true, interval: '30m' },
            commands: { enabled: true },
            votes: { enabled: true },
            state: { directory: join(dir, 'state') },
            health: { enabled: false },
          },
          countSource,
          commands: COMMANDS,
          transport: { dispatcher: counting.dispatcher },
        });
        agent.on('error', () => undefined);
        // The bot's reward: votes need a listener (or a hook) as the agent starts.
        agent.on('vote', () => undefined);
        await agent.start();
      },
      async stop() {
        await agent?.stop();
      },
    });
    return { sent, ...result };
  } finally {
    vi.useRealTimers();
    await counting.dispatcher.close();
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function autoposterDay(): Promise<DayResult> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], now: START });
  const emu = await startEmulator({ now: () => Date.now() });
  const redirect = redirectTopgg(emu.urls.origin);
  // The redirecting dispatcher sees the sdk's requests; the emulator's log has their bodies' effect,
  // so the bodies are recorded from the poster's own `posted` event (the stats it sent).
  const sent: Sent[] = [];
  try {
    const fx = setupEmulator(emu);
    const counts = { serverCount: 0, shardCount: 2 };
    const client = standInClient({
      get serverCount() {
        return countsAt(Date.now() - START).serverCount;
      },
      get shardCount() {
        return counts.shardCount;
      },
    });
    let poster: StandInPoster | undefined;
    const result = await day({
      emu,
      voters: fx.voters,
      projectId: fx.projectId,
      inFlight: redirect.inFlight,
      async start() {
        poster = new StandInPoster(fx.token, client, { interval: INTERVAL_MS });
        poster.on('posted', (stats: { serverCount: number; shardCount: number }) =>
          sent.push({ at: Date.now(), method: 'POST', path: '/api/bots/stats', body: JSON.stringify({ server_count: stats.serverCount, shard_count: stats.shardCount }) }),
        );
        poster.on('error', () => undefined);
      },
      async stop() {
        poster?.stop();
      },
    });
    // Every request, from the emulator's log (the poster sends nothing but posts).
    const logged = emu.admin.requests();
    const others = logged.filter((r) => r.path !== '/api/bots/stats');
    for (const r of others) sent.push({ at: Date.parse(r.at), method: r.method, path: r.path, body: undefined });
    if (logged.length - others.length !== sent.length - others.length) throw new Error('the autoposter sent posts it did not report');
    return { sent, ...result };
  } finally {
    vi.useRealTimers();
    await redirect.restore();
    await emu.close();
  }
}

/** The counts a post carried, as [server, shard] pairs in order. */
function postedCounts(request: Sent): Array<[number, number]> {
  type Metrics = { server_count: number; shard_count?: number };
  const body = JSON.parse(request.body ?? 'null') as { data?: Array<{ metrics: Metrics }> } | (Metrics & { data?: undefined }) | null;
  if (!body) throw new Error(`a post without a body: ${request.method} ${request.path}`);
  // v1 metrics/batch: { data: [{ metrics, timestamp }] }; v1 PATCH and v0: the counts themselves.
  const all: Metrics[] = body.data ? body.data.map((entry) => entry.metrics) : [body as Metrics];
  return all.map((m) => [m.server_count, m.shard_count ?? 1]);
}

const isPost = (r: Sent) => (r.method === 'POST' && (/\/metrics\/batch$/.test(r.path) || r.path === '/api/bots/stats')) || (r.method === 'PATCH' && /\/metrics$/.test(r.path));

function summarise(result: DayResult) {
  const posts = result.sent.filter(isPost).sort((a, b) => a.at - b.at);
  let last: [number, number] | undefined;
  let lastAt: number | undefined;
  let unchanged = 0;
  let beyondKeepAlive = 0;
  let entries = 0;
  for (const post of posts) {
    const counts = postedCounts(post);
    entries += counts.length;
    const news = counts.some(([s, sh]) => !last || s !== last[0] || sh !== last[1]);
    if (!news) {
      unchanged += 1;
      if (lastAt !== undefined && post.at - lastAt < INTERVAL_MS) beyondKeepAlive += 1;
    }
    last = counts.at(-1) ?? last;
    lastAt = post.at;
  }
  const syncs = result.sent.filter((r) => r.method === 'PUT' && /\/commands$/.test(r.path)).length;
  const voteRequests = result.sent.filter((r) => r.method === 'GET' && /\/votes$/.test(r.path));
  const polls = new Set(voteRequests.map((r) => r.at)).size;
  const votesSeen = voteRequests.reduce((sum, r) => sum + (r.votes ?? 0), 0);
  const pollPages = new Map<number, Sent[]>();
  for (const r of voteRequests) pollPages.set(r.at, [...(pollPages.get(r.at) ?? []), r]);
  const emptyPolls = [...pollPages.values()].filter((pages) => pages.every((r) => r.votes === 0)).length;
  const other = result.sent.length - posts.length - syncs - voteRequests.length;
  const otherRoutes = [...new Set(result.sent.filter((r) => !isPost(r) && !(r.method === 'PUT' && /\/commands$/.test(r.path)) && !/\/votes$/.test(r.path)).map((r) => `${r.method} ${r.path}`))];
  return { total: result.sent.length, posts: posts.length, entries, unchanged, beyondKeepAlive, syncs, voteRequests: voteRequests.length, polls, pagesWithVotes: voteRequests.filter((r) => (r.votes ?? 0) > 0).length, votesSeen, emptyPolls, other, otherRoutes, errors: result.statuses.filter((s) => s >= 400).length };
}

async function run(): Promise<string> {
  const header = await machine();
  const ours = await ourDay();
  const theirs = await autoposterDay();
  const a = summarise(ours);
  const c = summarise(theirs);
  const n = (value: number) => value.toLocaleString('en-US');
  const rows = [
    ['requests, all', n(a.total), n(c.total)],
    ['posts (v1 metrics/batch for (a), v0 bots/stats for (c))', `${n(a.posts)} (${n(a.entries)} timestamped entries)`, n(c.posts)],
    ['posts that carried no new information (same counts as the post before)', n(a.unchanged), n(c.unchanged)],
    ['… of which beyond the keep-alive (< 30 m after the post before)', n(a.beyondKeepAlive), n(c.beyondKeepAlive)],
    ['command syncs (PUT commands), first start + 10 restarts, commands unchanged', n(a.syncs), 'does not sync commands'],
    ['vote polls', `${n(a.polls)} polls, ${n(a.voteRequests)} requests`, 'does not poll votes'],
    ['… polls that found no vote', n(a.emptyPolls), ''],
    ['… pages with votes (votes on them)', `${n(a.pagesWithVotes)} (${n(a.votesSeen)})`, ''],
    ['other requests', a.other === 0 ? '0' : `${n(a.other)} (${a.otherRoutes.join(', ')})`, c.other === 0 ? '0' : `${n(c.other)} (${c.otherRoutes.join(', ')})`],
    ['answers 4xx/5xx', n(a.errors), n(c.errors)],
  ];
  const hours = DAY_MS / HOUR;
  return [
    '',
    `Requests to the service over a simulated ${hours} h (${Math.floor((DAY_MS - 1) / CHANGE_EVERY_MS)} count changes, ${Math.floor(DAY_MS / VOTE_EVERY_MS)} votes, ${RESTARTS} restarts; interval 30 m). ${header}`,
    '',
    table(['per day', '(a) listing-agent', '(c) topgg-autoposter 2.0.2'], rows, ['l', 'r', 'r']),
    '',
    `Target: no request without new information beyond the keep-alive post: (a) ${a.beyondKeepAlive === 0 && a.syncs <= 1 ? 'met' : '**not met**'} (${a.beyondKeepAlive} such posts, ${Math.max(0, a.syncs - 1)} command syncs after the first); (c) ${c.beyondKeepAlive} such posts.`,
    `(${n(ours.steps)} and ${n(theirs.steps)} timer steps, ${(ours.wallMs / 1000).toFixed(1)} s and ${(theirs.wallMs / 1000).toFixed(1)} s of real time.)`,
    '',
  ].join('\n');
}

describe('requests per day', () => {
  bench(
    'a simulated day of requests: listing-agent vs topgg-autoposter',
    async () => {
      console.log(await run());
    },
    { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 },
  );
});
