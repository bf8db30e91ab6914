import { createListingClient } from '../../api/client.js';
import { redactUrl } from '../../api/redact.js';
import { secretValues } from '../../config/secrets.js';
import type { ListingAgentConfig } from '../../config/schema.js';
import { printable } from '../../contract/printable.js';
import { createConfiguredSource, type ConfiguredSourceOptions } from '../../stats/configured-source.js';
import { postStatsOnce, type PostOnceResult } from '../../stats/post-once.js';
import { askRunningAgent } from '../agent-admin.js';
import { parseCommandArgs } from '../args.js';
import { loadCommandConfig } from '../command-config.js';
import { EXIT, UsageError, type CliIo } from '../io.js';
import { runSubcommand } from '../subcommands.js';
import { errorMessage } from '../../errors.js';

export const STATS_HELP = `Usage: listing-agent stats <subcommand> [options]

Work with the bot's server and shard counts.

Subcommands:
  post   read the counts once and post them (or, with --dry-run, show what would be posted;
         with --agent, ask the running agent to post now)

Run 'listing-agent stats post --help' for its options.
`;

const STATS_POST_HELP = `Usage: listing-agent stats post [--config FILE] [--dry-run | --agent]

Read the counts once from the configured source (stats.source: discord-rest) and post them as
the agent would: one metrics/batch entry (stats.mode batch) or one PATCH metrics (patch), and
the v0 stats when stats.v0 is on. The configuration is loaded exactly as 'listing-agent run'
loads it. The embedded and push sources have no counts outside a running bot or agent: for
them, --agent asks the agent running at health.listen to post its counts now (with
health.adminToken, the status page's "post stats now").

Options:
  -c, --config FILE   the JSON config file (default: $LISTING_AGENT_CONFIG)
  -n, --dry-run       print the requests that would be sent, and send nothing
      --agent         ask the running agent to post now, instead of reading the counts here
  -h, --help          show this help

Exit codes: 0 posted (or shown), 1 counts not ready, a post failed, or the source cannot be
read once, 2 usage error, 78 invalid configuration.
`;

/** Why a source cannot give counts to a one-shot post, or undefined when it can. */
function oneShotProblem(config: ListingAgentConfig): string | undefined {
  switch (config.stats.source) {
    case 'embedded':
      return "stats.source is embedded: the counts live in the bot's process, so a one-shot post cannot read them; use stats.source " +
        "discord-rest here";
    case 'push':
      return 'stats.source is push: the counts arrive at a running agent from the bot, so a one-shot post has none; use stats.source ' +
        'discord-rest here';
    default:
      return undefined;
  }
}

function report(result: Extract<PostOnceResult, { ready: true }>, config: ListingAgentConfig, io: CliIo): number {
  const { sample } = result;
  // service.v1 or v0 may carry a password or a ?token=: printed as every URL is, redacted.
  const secrets = secretValues(config);
  io.stdout(`counts from ${result.source}: ${sample.serverCount} servers, ${sample.shardCount} shards\n`);
  let failed = 0;
  for (const post of result.posts) {
    const body = JSON.stringify(post.body);
    if (result.dryRun) {
      io.stdout(`would send (${post.target}): ${post.method} ${redactUrl(post.url, secrets)}\n${body}\n`);
    } else if (post.error) {
      failed += 1;
      io.stderr(`listing-agent stats post: ${post.target} failed: ${printable(post.error.message)}\n`);
    } else {
      io.stdout(`posted (${post.target}): ${post.method} ${redactUrl(post.url, secrets)} ${body}\n`);
    }
  }
  return failed > 0 ? EXIT.failure : EXIT.ok;
}

/**
 * The core of `stats post` once the configuration is loaded: make the source, read once, post.
 * `sourceOptions` reach {@link createConfiguredSource} (a test's Discord dispatcher).
 */
async function runStatsPost(
  config: ListingAgentConfig,
  io: CliIo,
  options: { dryRun: boolean; sourceOptions?: ConfiguredSourceOptions },
): Promise<number> {
  const problem = oneShotProblem(config);
  if (problem) {
    io.stderr(`listing-agent stats post: ${problem}\n`);
    return EXIT.failure;
  }
  let source;
  try {
    source = createConfiguredSource(config, options.sourceOptions);
  } catch (error) {
    io.stderr(`listing-agent stats post: ${errorMessage(error)}\n`);
    return EXIT.failure;
  }
  const client = options.dryRun
    ? undefined
    : createListingClient({ projectToken: config.service.token, v1BaseUrl: config.service.v1, v0BaseUrl: config.service.v0 });
  try {
    await source.start?.();
    const result = await postStatsOnce({ config, source, dryRun: options.dryRun, ...(client ? { client } : {}) });
    if (!result.ready) {
      io.stderr(`listing-agent stats post: the counts are not ready (${result.source}): ${result.reason}\n`);
      return EXIT.failure;
    }
    return report(result, config, io);
  } finally {
    await source.stop?.().catch(() => undefined);
    await client?.close().catch(() => undefined);
  }
}

/** `stats post --agent`: the running agent posts now, and says what went where. */
async function postInAgent(config: ListingAgentConfig, io: CliIo): Promise<number> {
  const answer = await askRunningAgent(config, 'post-stats', {}, io, 'stats post');
  if (!answer.ok) return answer.exit;
  const posted = (answer.body.posted ?? []) as { target: string; servers: number | null; shards: number | null }[];
  const failed = (answer.body.failed ?? []) as { target: string; error: string }[];
  for (const post of posted) io.stdout(`the agent posted (${post.target}): ${post.servers ?? '?'} servers, ${post.shards ?? '?'} shards\n`);
  for (const failure of failed) {
    const [target, error] = [String(failure.target), String(failure.error)].map(printable);
    io.stderr(`listing-agent stats post: the agent's post to ${target} failed: ${error}\n`);
  }
  if (typeof answer.body.note === 'string') io.stderr(`listing-agent stats post: ${printable(answer.body.note)}\n`);
  return posted.length > 0 && failed.length === 0 ? EXIT.ok : EXIT.failure;
}

/** `listing-agent stats post`. */
async function runStatsPostCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('stats post', argv, {
    config: { type: 'string', short: 'c' },
    'dry-run': { type: 'boolean', short: 'n' },
    agent: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout(STATS_POST_HELP);
    return EXIT.ok;
  }
  if (values.agent === true && values['dry-run'] === true)
    throw new UsageError('--dry-run and --agent do not go together: a dry run reads the counts here', 'stats post');
  const file = values.config as string | undefined;
  if (file === '') throw new UsageError('--config needs a file path', 'stats post');
  const loaded = await loadCommandConfig(io, 'stats post', file, { advice: "Check it with 'listing-agent config check'." });
  if (typeof loaded === 'number') return loaded;
  if (values.agent === true) return postInAgent(loaded.config, io);
  return runStatsPost(loaded.config, io, { dryRun: values['dry-run'] === true });
}

/** `listing-agent stats <subcommand>`. */
export function runStatsCommand(argv: string[], io: CliIo): Promise<number> {
  return runSubcommand(argv, io, { command: 'stats', help: STATS_HELP, subcommands: { post: runStatsPostCommand } });
}
