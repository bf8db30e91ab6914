import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createListingAgent, type ListingAgent } from '../agent/agent.js';
import { createListingClient } from '../api/client.js';
import { startEmulator, type EmulatorWithContext } from '../emulator/index.js';
import { DEFAULT_SEED } from '../emulator/seed.js';
import type { ProjectRecord } from '../emulator/state.js';
import { recordRotatedSecret, secretFilePath } from '../webhooks/secrets.js';
import { createSimulatedBot, simulatedBotSource, type SimulatedBot } from './simulated-bot.js';
import { timerDelay } from '../contract/timer-delay.js';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Where the account goes, one line per call. */
  print: (line: string) => void;
  /** Resolves when the demo should end (Ctrl-C, or `--duration`). */
  until: Promise<unknown>;
  /** How often the simulated bot's counts drift. Default 5000 ms. */
  driftEveryMs?: number;
  /** Keep the state directory afterwards (it is printed). Default false. */
  keepState?: boolean;
  /** Port of the health server. Default 0 (any free port). */
  healthPort?: number;
  /** How often a simulated user votes, after the first votes. Default 4000 ms. */
  voteEveryMs?: number;
  /**
   * When (after the agent is up) the demo moves the clocks past the first votes' expiry, so their reminders come due. Default 20 000
   * ms.
   */
  clockJumpAfterMs?: number;
}

/** How far the demo moves the clocks: past a vote's 12 h lifetime. */
const CLOCK_JUMP_MS = 12 * 3_600_000 + 60_000;

/** The simulated users who vote for the bot. */
const VOTERS = ['alice', 'bob', 'carol', 'dave', 'erin'];

const format = (n: number) => n.toLocaleString('en-US');

/** The simulated bot's slash commands. */
const DEMO_COMMANDS = [
  { name: 'ping', description: 'Check that the bot is alive' },
  {
    name: 'vote',
    description: 'Get the link to vote for the bot',
    description_localizations: { de: 'Den Link zum Abstimmen erhalten' },
  },
];

function describeBot(bot: SimulatedBot): string {
  return `${format(bot.total())} servers (${bot.shards().map(format).join(' + ')})`;
}

/** What a demo run holds while it runs: where it prints, and what it stops at the end. */
interface DemoRun {
  readonly print: (line: string) => void;
  readonly stateDir: string;
  emulator: EmulatorWithContext | undefined;
  agent: ListingAgent | undefined;
  /** The intervals (counts drift, votes, the poll watch) and the clock jump's timeout, cleared at the end. */
  readonly intervals: NodeJS.Timeout[];
  /** Votes the poller recorded itself (the rest of what it lists was here already). */
  recordedByPoll: number;
  /** How far the demo moved the agent's clock (the emulator's moves with it). */
  clockOffsetMs: number;
}

/** The simulated voters, and a function that casts the next one's vote on the emulator. */
function createVoters(run: DemoRun, listing: EmulatorWithContext, project: ProjectRecord) {
  const voters = VOTERS.map((username) => listing.admin.createUser({ username }));
  const names = new Map(voters.map((user) => [user.id, user.username]));
  let nextVoter = 0;
  const castVote = () => {
    const voter = voters[nextVoter++ % voters.length]!;
    listing.admin.castVote({ project_id: project.id, user_id: voter.id });
    run.print(`[voter]    ${voter.username} votes for "${project.name}" on the listing`);
  };
  return { castVote, nameOf: (userId: string) => names.get(userId) ?? userId };
}

/** The agent on the emulator, with the shortest schedules the config allows so a person watching sees posts go out. */
function createDemoAgent(run: DemoRun, listing: EmulatorWithContext, token: string, bot: SimulatedBot, healthPort: number): ListingAgent {
  return createListingAgent({
    config: {
      service: { token, v1: listing.urls.v1, v0: listing.urls.v0 },
      state: { directory: run.stateDir },
      health: { listen: `127.0.0.1:${healthPort}` },
      stats: { enabled: true, interval: '1m', sampleInterval: '10s', v0: true },
      commands: { enabled: true },
      // The in-process hook: the vote listener below is the reward, awaited once per vote.
      // Reminders: the `reminder` listener below is told when a voter can vote again.
      // lookback: the explicit backfill that has a first start reward the votes cast before it.
      votes: { enabled: true, pollInterval: '5s', lookback: '1h', reminders: { enabled: true } },
      // The receiver feeds the same pipeline. The webhook's secret exists only once the webhook
      // is registered at the receiver's URL (below), so it goes to the secret file; the config
      // must name one secret to start, and this one signs nothing.
      webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: ['whs_demo_not_used'] },
    },
    countSource: simulatedBotSource(bot),
    commands: DEMO_COMMANDS,
    // The narration says what happens, in its own lines: no stderr lines of the agent's among them.
    logger: false,
    // The demo's clock, which it moves 12 h ahead (with the emulator's) to show the reminders.
    now: () => Date.now() + run.clockOffsetMs,
    // The reminder timer looks at the clock every second, so a moved clock fires within one.
    votes: { reminderLookMs: 1_000 },
  });
}

/** Prints what the agent does: syncs, votes and rewards, posts, readiness. */
function narrate(
  run: DemoRun,
  agent: ListingAgent,
  listing: EmulatorWithContext,
  project: ProjectRecord,
  nameOf: (userId: string) => string,
): void {
  const { print } = run;
  let firstSync = true;
  agent.on('commandsSynced', (result) => {
    const changes = [
      ...result.diff.added.map((n) => `+${n}`),
      ...result.diff.removed.map((n) => `-${n}`),
      ...result.diff.changed.map((c) => `~${c.key}`),
    ];
    print(
      result.skipped
        ? `[agent]    commands: unchanged since the last sync (${result.count} commands), nothing sent`
        : `[agent]    commands: synced ${result.count} commands to the listing (${changes.join(' ')})`,
    );
    if (firstSync) {
      firstSync = false;
      print('[demo]     asking for another sync, as a restart would: the agent compares hashes first');
      void agent.syncCommands().catch(() => undefined);
    }
  });
  agent.on('commandsSyncFailed', ({ error }) => print(`[agent]    commands sync failed: ${error.message}`));
  agent.on('voteReceived', (vote) => {
    if (vote.road === 'poll') run.recordedByPoll += 1;
    print(
      `[agent]    vote ` +
        `from ${nameOf(vote.userId)} ${vote.road === 'webhook' ? 'arrived by signed webhook' : 'found on the votes cursor'}, recorded`,
    );
  });
  agent.on('vote', async (vote) => {
    // A real bot would credit the voter here, keyed by vote.key so that a replay gives nothing twice.
    print(`[agent]    vote from ${nameOf(vote.userId)}: reward given`);
  });
  agent.on('reminder', (vote) => {
    // A real bot would DM the voter here (vote.platformId), once per reminder.
    print(`[agent]    reminder: ${nameOf(vote.userId)} can vote again (their vote of ${vote.createdAt.slice(11, 19)} UTC expired)`);
  });
  agent.on('posted', (result) => {
    const last = result.samples.at(-1);
    const where =
      result.target === 'v1_batch'
        ? `v1 metrics/batch (${result.samples.length} timestamped ${result.samples.length === 1 ? 'sample' : 'samples'})`
        : result.target === 'v1'
          ? 'v1 metrics'
          : 'v0 stats';
    print(`[agent]    posted to ${where}: ${last ? `${format(last.serverCount)} servers, ${last.shardCount} shards` : ''}`);
    if (result.target !== 'v0') {
      const applied = listing.admin.metrics(project.id).filter((m) => m.source !== 'v0');
      print(
        `[listing]  the emulator now ` +
          `shows ${format(Number(applied.at(-1)?.metrics.server_count ?? 0))} servers (${applied.length} metrics applied so far)`,
      );
    }
  });
  agent.on('postFailed', (failure) => {
    print(
      `[agent]    post ` +
        `to ${failure.target} failed (${failure.error.message}); ${failure.pendingSamples} kept, retry ` +
        `at ${new Date(failure.retryAt).toLocaleTimeString()}`,
    );
  });
  agent.on('readiness', (component, state) => {
    print(`[agent]    ${component}: ${state.ready ? 'ready' : 'not ready'} (${state.detail})`);
  });
  agent.on('ready', ({ projectName, projectId }) => {
    print(`[agent]    reached the service as project "${projectName}" (${projectId})`);
  });
}

/** Registers the receiver as the project's webhook, as the owner would through the API; its secret goes to the secret file. */
async function registerReceiver(run: DemoRun, agent: ListingAgent, listing: EmulatorWithContext, project: ProjectRecord): Promise<void> {
  const receiverUrl = agent.webhookReceiverUrl!;
  const grant = listing.admin.grantAuthorization({
    client_id: 'demo-client',
    user_id: project.owner_user_id!,
    project_id: project.id,
    scopes: ['project.webhooks.write'],
  });
  await using owner = createListingClient({
    accessToken: grant.access_token,
    projectId: project.id,
    v1BaseUrl: listing.urls.v1,
    v0BaseUrl: listing.urls.v0,
  });
  const webhook = await owner.webhooks.create({ label: 'listing-agent demo', url: receiverUrl, allowHttpLoopback: true });
  await recordRotatedSecret(secretFilePath(run.stateDir), { webhookId: webhook.id, secret: webhook.secret });
  run.print(
    `[listing]  ` +
      `webhook ${webhook.id} now delivers signed votes ` +
      `to ${receiverUrl}; its secret went to the secret file, as 'listing-agent webhooks rotate' writes it`,
  );
}

/** Tells, after each poll of the votes cursor, how many of the votes it listed had come by webhook already. */
async function watchPolls(run: DemoRun, agent: ListingAgent): Promise<void> {
  let polled = await agent.metrics.votesReceived.get({ road: 'poll' });
  let recordedThen = run.recordedByPoll;
  let pending = -1;
  run.intervals.push(
    setInterval(() => {
      void agent.metrics.votesReceived.get({ road: 'poll' }).then((seen) => {
        // Report a poll once its count stopped moving (a poll's votes are recorded together).
        if (seen === polled || seen !== pending) {
          pending = seen;
          return;
        }
        const listed = seen - polled;
        const known = listed - (run.recordedByPoll - recordedThen);
        polled = seen;
        recordedThen = run.recordedByPoll;
        if (known > 0)
          run.print(
            `[agent]    votes poll: the cursor listed ${listed}, ${known} of them already here by webhook (same key): no second reward`,
          );
      });
    }, 250),
  );
}

/** Moves the listing's and the agent's clocks together past the first votes' lifetime: their reminders come due. */
function jumpClocks(run: DemoRun, listing: EmulatorWithContext): void {
  run.print(
    '[demo]     moving the clocks of the listing and the agent 12 h ahead: the first votes expire, and their voters get a reminder',
  );
  listing.admin.advanceClock(CLOCK_JUMP_MS / 1000);
  run.clockOffsetMs += CLOCK_JUMP_MS;
}

/** Everything up, then the account printed until `until` resolves. */
async function playDemo(run: DemoRun, options: DemoOptions): Promise<void> {
  const { print } = run;
  // Loopback http webhook URLs: the receiver listens on 127.0.0.1 without TLS.
  const listing = (run.emulator = await startEmulator({ seed: DEFAULT_SEED, settings: { allowHttpLoopback: true } }));
  const project = [...listing.context.state.projects.values()][0]!;
  const token = listing.context.state.projectTokens.get(project.id)!;
  print(`[emulator] listening at ${listing.urls.origin} (v1 ${listing.urls.v1}, admin ${listing.urls.admin})`);
  const { castVote, nameOf } = createVoters(run, listing, project);
  const bot = createSimulatedBot({ name: project.name });
  print(`[bot]      "${bot.name}" runs ${bot.shards().length} shards: ${describeBot(bot)}`);

  const agent = (run.agent = createDemoAgent(run, listing, token, bot, options.healthPort ?? 0));
  narrate(run, agent, listing, project, nameOf);
  print(`[agent]    state in ${run.stateDir}`);
  // Three votes before the agent starts: its first poll of the votes cursor finds them (votes.lookback above).
  for (let i = 0; i < 3; i += 1) castVote();
  await agent.start();
  print(`[agent]    health at ${agent.healthServerUrl}/healthz, /readyz and /metrics`);
  print(`[agent]    status page at ${agent.healthServerUrl}/ : open it in a browser to watch the posts and votes as they happen`);
  print('[agent]    stats: samples every 10 s, posts every minute (the first as soon as the counts are ready).');
  await registerReceiver(run, agent, listing, project);
  print(
    '[agent]    votes: signed webhooks bring each vote within a second; the cursor, polled every 5 s, lists it too, and the vote key ' +
      'makes the reward fire once.',
  );
  await watchPolls(run, agent);
  run.intervals.push(
    setInterval(() => {
      bot.drift();
      print(`[bot]      now ${describeBot(bot)}`);
    }, timerDelay(options.driftEveryMs ?? 5_000)),
    setInterval(castVote, timerDelay(options.voteEveryMs ?? 4_000)),
  );
  const jump = setTimeout(() => jumpClocks(run, listing), timerDelay(options.clockJumpAfterMs ?? 20_000));
  jump.unref();
  run.intervals.push(jump);
  print('Ctrl-C stops the demo.');
  await options.until;
}

/**
 * The main job on an embedded default: the emulator in-process, a simulated bot whose server
 * count drifts, and the agent against both with a state directory in a temporary folder. Prints
 * a readable account until `until` resolves, then stops everything.
 */
export async function runDemo(options: DemoOptions): Promise<void> {
  const { print } = options;
  print('listing-agent demo: the emulator, a simulated bot and the agent, all on this machine; nothing reaches the real service.');
  const run: DemoRun = {
    print,
    stateDir: await mkdtemp(join(tmpdir(), 'listing-agent-demo-')),
    emulator: undefined,
    agent: undefined,
    intervals: [],
    recordedByPoll: 0,
    clockOffsetMs: 0,
  };
  try {
    await playDemo(run, options);
  } finally {
    for (const interval of run.intervals) clearInterval(interval);
    if (run.agent) {
      await run.agent.stop();
      print(`[agent]    stopped; state flushed to ${join(run.stateDir, 'state.json')}`);
    }
    await run.emulator?.close();
    if (!options.keepState) await rm(run.stateDir, { recursive: true, force: true });
    print('demo over.');
  }
}
