import type { ListingAgentConfig } from '../config/schema.js';
import type { FieldIssue } from '../errors.js';
import type { AgentCluster } from './cluster.js';
import { createVotesCapability, type VotesCapability } from '../votes/capability.js';
import { settingName } from '../config/setting-names.js';
import { reservedVoteHookNames } from '../votes/configured.js';
import { hookNameProblems } from '../votes/hooks/index.js';
import { RESERVED_REMINDER_HOOK_NAMES } from '../votes/reminders/configured.js';
import type { ListingAgentOptions, StartInputs } from './options.js';

/**
 * The votes capability (`votes.enabled` or `webhooks.enabled`; loaded only then, agent/lazy.ts):
 * one vote pipeline per agent, started before the webhook receiver that feeds it; with
 * `votes.enabled` off it runs the pipeline alone, without polling the cursor. On every agent of a
 * `cluster`, on the Redis ledger (its poller polls on the leader only). Its configuration is
 * checked first, by {@link votesProblems} (the agent refuses one with problems).
 */
export function votesCapability(
  config: ListingAgentConfig,
  options: ListingAgentOptions,
  cluster: AgentCluster | undefined,
): VotesCapability {
  // A memory store keeps nothing across restarts: a journal on disk beside it would only surprise.
  const memory = options.store !== undefined && options.store.describe().startsWith('memory');
  const ledger = cluster ? 'redis' : memory ? 'memory' : 'file';
  const redis = cluster ? { connection: cluster.connection, agentId: cluster.agentId } : undefined;
  return createVotesCapability({
    ledger,
    // The daemon's owner may set a setting in the file or with its variable: its lines name both.
    ...(options.mode === 'daemon' ? { settingName: (path: string) => settingName(path, 'daemon') } : {}),
    ...(redis ? { redis, leadership: cluster!.leadership } : {}),
    ...options.votes,
    ...(config.votes.enabled ? {} : { poll: false }),
  });
}

/**
 * What the votes capability of `config` cannot run with: colliding hook names (`votes.hooks`, and
 * `votes.reminders.hooks` when the reminders are on), and, when `inputs` says who listens (the
 * daemon, or an embedded agent as it starts), votes or reminders that nothing receives.
 */
export function votesProblems(config: ListingAgentConfig, inputs: StartInputs): FieldIssue[] {
  const problems: FieldIssue[] = [];
  if (inputs.voteHooks === undefined) {
    problems.push(...hookNameProblems(config.votes.hooks, { reservedNames: reservedVoteHookNames(config) }).problems);
  }
  const reminders = config.votes.reminders;
  if (reminders.enabled) {
    const options = { reservedNames: RESERVED_REMINDER_HOOK_NAMES, configPath: 'votes.reminders.hooks' };
    problems.push(...hookNameProblems(reminders.hooks, options).problems);
  }
  if (inputs.mode === 'daemon' || inputs.listeners !== undefined) problems.push(...receiverProblems(config, inputs));
  return problems;
}

/** `votes.enabled and webhooks.enabled are on`: the roads by which votes reach the pipeline. */
function roads(config: ListingAgentConfig): string {
  if (config.votes.enabled && config.webhooks.enabled) return 'votes.enabled and webhooks.enabled are on';
  return config.votes.enabled ? 'votes.enabled is on' : 'webhooks.enabled is on';
}

/**
 * Votes (and reminders) that reach the pipeline with no hook to receive them: no configured hook,
 * no reward stream, no hook made in code, and no listener (the daemon has none; an embedded agent
 * counts those attached as it starts). Nothing would be rewarded, yet every vote marked done.
 */
function receiverProblems(config: ListingAgentConfig, inputs: StartInputs): FieldIssue[] {
  const votes = unreceivedVotes(config, inputs);
  const reminders = unreceivedReminders(config, inputs);
  return [...(votes ? [votes] : []), ...(reminders ? [reminders] : [])];
}

/** The problem of votes that no hook receives (see {@link receiverProblems}); `webhooks serve` asks it too. */
export function unreceivedVotes(config: ListingAgentConfig, inputs: StartInputs): FieldIssue | undefined {
  const embedded = inputs.mode === 'embedded';
  const listeners = embedded ? (inputs.listeners?.vote ?? 0) : 0;
  const receivers = inputs.voteHooks ?? config.votes.hooks.length + (config.votes.stream.enabled ? 1 : 0) + listeners;
  if (receivers > 0) return undefined;
  const fix = embedded
    ? "attach a listener with agent.on('vote', ...) before the agent starts, add a reward hook to votes.hooks, or set votes.stream.enabled"
    : 'add a reward hook to votes.hooks (LISTING_AGENT_VOTES_HOOKS), an http url or an exec command, ' +
      'or set votes.stream.enabled (LISTING_AGENT_VOTES_STREAM_ENABLED)';
  return { path: 'votes.hooks', message: `${roads(config)} but nothing receives the votes: ${fix}; without one no vote is rewarded` };
}

/** The problem of reminders that no hook receives. */
function unreceivedReminders(config: ListingAgentConfig, inputs: StartInputs): FieldIssue | undefined {
  const reminders = config.votes.reminders;
  const embedded = inputs.mode === 'embedded';
  const listened = embedded && (inputs.listeners?.reminder ?? 0) > 0;
  if (!reminders.enabled || reminders.hooks.length > 0 || config.votes.stream.enabled || listened) return undefined;
  const fix = embedded
    ? "attach a listener with agent.on('reminder', ...) before the agent starts, add a hook to votes.reminders.hooks, " +
      'or set votes.stream.enabled'
    : 'add a hook to votes.reminders.hooks (LISTING_AGENT_VOTES_REMINDERS_HOOKS), ' +
      'or set votes.stream.enabled (LISTING_AGENT_VOTES_STREAM_ENABLED)';
  return { path: 'votes.reminders.hooks', message: `votes.reminders.enabled is on but nothing receives the reminders: ${fix}` };
}
