import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createListingAgent, type ListingAgent } from '../agent/agent.js';
import { createListingClient } from '../api/client.js';
import { startEmulator, type RunningEmulator } from '../emulator/index.js';
import { DEFAULT_SEED } from '../emulator/seed.js';
import { recordRotatedSecret, secretFilePath } from '../webhooks/secrets.js';
import { createSimulatedBot, simulatedBotSource, type SimulatedBot } from './simulated-bot.js';

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
}

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

/**
 * The main job on an embedded default: the emulator in-process, a simulated bot whose server
 * count drifts, and the agent against both with a state directory in a temporary folder. Prints
 * a readable account until `until` resolves, then stops everything.
 */
export async function runDemo(options: DemoOptions): Promise<void> {
  const { print } = options;
  print('listing-agent demo: the emulator, a simulated bot and the agent, all on this machine; nothing reaches the real service.');

  let emulator: RunningEmulator | undefined;
  let agent: ListingAgent | undefined;
  let drift: NodeJS.Timeout | undefined;
  let voting: NodeJS.Timeout | undefined;
  let watching: NodeJS.Timeout | undefined;
  const stateDir = await mkdtemp(join(tmpdir(), 'listing-agent-demo-'));
  try {
    // Loopback http webhook URLs: the receiver listens on 127.0.0.1 without TLS.
    emulator = await startEmulator({ seed: DEFAULT_SEED, settings: { allowHttpLoopback: true } });
    const project = [...emulator.context.state.projects.values()][0]!;
    const token = emulator.context.state.projectTokens.get(project.id)!;
    print(`[emulator] listening at ${emulator.urls.origin} (v1 ${emulator.urls.v1}, admin ${emulator.urls.admin})`);

    const listing = emulator;
    const voters = VOTERS.map((username) => listing.admin.createUser({ username }));
    const names = new Map(voters.map((user) => [user.id, user.username]));
    let nextVoter = 0;
    const castVote = () => {
      const voter = voters[nextVoter++ % voters.length]!;
      listing.admin.castVote({ project_id: project.id, user_id: voter.id });
      print(`[voter]    ${voter.username} votes for "${project.name}" on the listing`);
    };

    const bot = createSimulatedBot({ name: project.name });
    print(`[bot]      "${bot.name}" runs ${bot.shards().length} shards: ${describeBot(bot)}`);

    agent = createListingAgent({
      config: {
        service: { token, v1: emulator.urls.v1, v0: emulator.urls.v0 },
        state: { directory: stateDir },
        health: { listen: `127.0.0.1:${options.healthPort ?? 0}` },
        // The shortest schedules the config allows, so a person watching sees posts go out.
        stats: { enabled: true, interval: '1m', sampleInterval: '10s', v0: true },
        commands: { enabled: true },
        // The in-process hook: the vote listener below is the reward, awaited once per vote.
        votes: { enabled: true, pollInterval: '5s' },
        // The receiver feeds the same pipeline. The webhook's secret exists only once the webhook
        // is registered at the receiver's URL (below), so it goes to the secret file; the config
        // must name one secret to start, and this one signs nothing.
        webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: ['whs_demo_not_used'] },
      },
      countSource: simulatedBotSource(bot),
      commands: DEMO_COMMANDS,
    });
    let firstSync = true;
    agent.on('commandsSynced', (result) => {
      const changes = [...result.diff.added.map((n) => `+${n}`), ...result.diff.removed.map((n) => `-${n}`), ...result.diff.changed.map((c) => `~${c.key}`)];
      print(
        result.skipped
          ? `[agent]    commands: unchanged since the last sync (${result.count} commands), nothing sent`
          : `[agent]    commands: synced ${result.count} commands to the listing (${changes.join(' ')})`,
      );
      if (firstSync) {
        firstSync = false;
        print('[demo]     asking for another sync, as a restart would: the agent compares hashes first');
        void agent?.syncCommands().catch(() => undefined);
      }
    });
    agent.on('commandsSyncFailed', ({ error }) => print(`[agent]    commands sync failed: ${error.message}`));
    /** Votes the poller recorded itself (the rest of what it lists was here already). */
    let recordedByPoll = 0;
    agent.on('voteReceived', (vote) => {
      if (vote.road === 'poll') recordedByPoll += 1;
      print(`[agent]    vote from ${names.get(vote.userId) ?? vote.userId} ${vote.road === 'webhook' ? 'arrived by signed webhook' : 'found on the votes cursor'}, recorded`);
    });
    agent.on('vote', async (vote) => {
      // A real bot would credit the voter here, keyed by vote.key so that a replay gives nothing twice.
      print(`[agent]    vote from ${names.get(vote.userId) ?? vote.userId}: reward given`);
    });
    agent.on('posted', (result) => {
      const last = result.samples.at(-1);
      const where = result.target === 'v1_batch' ? `v1 metrics/batch (${result.samples.length} timestamped ${result.samples.length === 1 ? 'sample' : 'samples'})` : result.target === 'v1' ? 'v1 metrics' : 'v0 stats';
      print(`[agent]    posted to ${where}: ${last ? `${format(last.serverCount)} servers, ${last.shardCount} shards` : ''}`);
      if (result.target !== 'v0') {
        const applied = listing.admin.metrics(project.id).filter((m) => m.source !== 'v0');
        print(`[listing]  the emulator now shows ${format(Number(applied.at(-1)?.metrics.server_count ?? 0))} servers (${applied.length} metrics applied so far)`);
      }
    });
    agent.on('postFailed', (failure) => {
      print(`[agent]    post to ${failure.target} failed (${failure.error.message}); ${failure.pendingSamples} kept, retry at ${new Date(failure.retryAt).toLocaleTimeString()}`);
    });
    agent.on('readiness', (component, state) => {
      print(`[agent]    ${component}: ${state.ready ? 'ready' : 'not ready'} (${state.detail})`);
    });
    agent.on('ready', ({ projectName, projectId }) => {
      print(`[agent]    reached the service as project "${projectName}" (${projectId})`);
    });
    print(`[agent]    state in ${stateDir}`);
    // Three votes before the agent starts: its first poll of the votes cursor finds them.
    for (let i = 0; i < 3; i += 1) castVote();
    await agent.start();
    print(`[agent]    health at ${agent.healthServerUrl}/healthz, /readyz and /metrics`);
    print(`[agent]    status page at ${agent.healthServerUrl}/ : open it in a browser to watch the posts and votes as they happen`);
    print('[agent]    stats: samples every 10 s, posts every minute (the first as soon as the counts are ready).');

    // Register the receiver as the project's webhook, as the owner would through the API.
    const receiverUrl = agent.webhookReceiverUrl!;
    const grant = listing.admin.grantAuthorization({ client_id: 'demo-client', user_id: project.owner_user_id!, project_id: project.id, scopes: ['project.webhooks.write'] });
    {
      await using owner = createListingClient({ accessToken: grant.access_token, projectId: project.id, v1BaseUrl: listing.urls.v1, v0BaseUrl: listing.urls.v0 });
      const webhook = await owner.webhooks.create({ label: 'listing-agent demo', url: receiverUrl, allowHttpLoopback: true });
      await recordRotatedSecret(secretFilePath(stateDir), { webhookId: webhook.id, secret: webhook.secret });
      print(`[listing]  webhook ${webhook.id} now delivers signed votes to ${receiverUrl}; its secret went to the secret file, as 'listing-agent webhooks rotate' writes it`);
    }
    print('[agent]    votes: signed webhooks bring each vote within a second; the cursor, polled every 5 s, lists it too, and the vote key makes the reward fire once.');
    const running = agent;
    let polled = await running.metrics.votesReceived.get({ road: 'poll' });
    let recordedThen = recordedByPoll;
    let pending = -1;
    watching = setInterval(() => {
      void running.metrics.votesReceived.get({ road: 'poll' }).then((seen) => {
        // Report a poll once its count stopped moving (a poll's votes are recorded together).
        if (seen === polled || seen !== pending) {
          pending = seen;
          return;
        }
        const listed = seen - polled;
        const known = listed - (recordedByPoll - recordedThen);
        polled = seen;
        recordedThen = recordedByPoll;
        if (known > 0) print(`[agent]    votes poll: the cursor listed ${listed}, ${known} of them already here by webhook (same key): no second reward`);
      });
    }, 250);

    drift = setInterval(() => {
      bot.drift();
      print(`[bot]      now ${describeBot(bot)}`);
    }, options.driftEveryMs ?? 5_000);
    voting = setInterval(castVote, options.voteEveryMs ?? 4_000);
    print('Ctrl-C stops the demo.');
    await options.until;
  } finally {
    clearInterval(drift);
    clearInterval(voting);
    clearInterval(watching);
    if (agent) {
      await agent.stop();
      print(`[agent]    stopped; state flushed to ${join(stateDir, 'state.json')}`);
    }
    await emulator?.close();
    if (!options.keepState) await rm(stateDir, { recursive: true, force: true });
    print('demo over.');
  }
}
