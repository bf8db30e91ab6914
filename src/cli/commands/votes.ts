import { createListingClient, type ListingClient } from '../../api/client.js';
import { redact } from '../../api/redact.js';
import type { VoteRecord } from '../../api/schemas/votes.js';
import { formatDuration, parseDuration } from '../../config/duration.js';
import type { ListingAgentConfig } from '../../config/schema.js';
import { secretValues } from '../../config/secrets.js';
import { VOTE_SOURCES, type VoteSource } from '../../contract/limits.js';
import { printable } from '../../contract/printable.js';
import { earliestStartDate } from '../../votes/cursor-state.js';
import { replayDeadLetters } from '../../votes/replay.js';
import { voteKey, type DeadLetter } from '../../votes/types.js';
import { askRunningAgent } from '../agent-admin.js';
import { EXIT, UsageError, type CliIo } from '../io.js';
import { runSubcommand } from '../subcommands.js';
import { cliAgentId, cliState } from '../state.js';
import { daemonHookOptions } from '../hook-environment.js';
import { loadVotesConfig, loadVotesConfigAndSources, parseVotesArgs } from './votes-args.js';
import { runVotesReminders } from './votes-reminders.js';

export const VOTES_HELP = `Usage: listing-agent votes <subcommand> [options]

Votes and the rewards they fired.

Subcommands:
  failed [--json]                    list the dead letters: votes a reward hook gave up on
  retry [--key K]... [--hook H] [--agent]
                                     run the hooks of dead letters again (all by default);
                                     --agent: ask the running agent to (health.adminToken)
  check <user> [--source S] [--json] whether a user has an active vote; S is topgg (the
                                     service's user IDs, the default) or discord
  list [--since D] [--json]          the votes cast in the last D (default 24h, at most a
                                     year), as a table or JSON lines; progress on stderr
  reminders [--limit N] [--json]     the vote reminders scheduled (votes.reminders): the next
                                     N due (default 10), how many, and the last sent

Options (all):
  -c, --config FILE   the JSON config (default: LISTING_AGENT_CONFIG, else LISTING_AGENT_* variables)
  -h, --help          show this help

'failed' and 'reminders' read the journals in state.directory without taking the state lock,
so they work beside a running agent. 'retry' takes the lock, so stop the daemon first (or use --agent); it
replays only the hooks of the config (with their retries, a short backoff), and leaves votes a
crash left pending to the agent's next start. 'retry --agent' asks the agent running at
health.listen instead, with health.adminToken (the status page's retry action): its hooks,
in-process ones included, run there, beside its other work. Dead letters of the in-process hook (vote-event) can only be replayed
by the embedded agent: agent.votePipeline.retry().

With state.redis, they work on what the agents keep in Redis (under state.redis.prefix), beside
running agents: 'failed' and 'reminders' only read, and 'retry' takes them through the shared vote ledger
(no lock; the reward stream hook too, when votes.stream.enabled). Redis must answer within 5 s.

Exit codes: 0 done, 1 a failure (a hook failed again, the service or the state cannot be
reached, Redis does not answer), 2 usage error, 78 invalid configuration.
`;

const parse = parseVotesArgs;
const load = loadVotesConfig;

const clientFor = (config: ListingAgentConfig): ListingClient =>
  createListingClient({ projectToken: config.service.token, v1BaseUrl: config.service.v1, v0BaseUrl: config.service.v0 });

/** Each dead letter on one line: its key, hook and error came from outside (a vote, a hook's answer), so they are made printable. */
function letterLines(letters: readonly DeadLetter[]): string[] {
  return letters.map((l) => {
    const failed = `failed ${printable(l.failedAt)}: ${printable(l.error)}`;
    return `  ${printable(l.key)}  hook ${printable(l.hook)}  ${l.attempts} attempts  ${failed}`;
  });
}

async function runFailed(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse('failed', argv, { json: { type: 'boolean' } });
  if (values.help) return help(io);
  const config = await load(io, 'failed', values);
  if (typeof config === 'number') return config;
  await using state = cliState(config, io);
  const read = await state.deadLetters();
  // Scrubbed again as shown: a journal written before 0.2 may hold a credential a hook's answer repeated.
  const secrets = secretValues(config);
  const reading = { ...read, letters: read.letters.map((letter) => ({ ...letter, error: redact(letter.error, secrets) })) };
  if (values.json === true) {
    for (const letter of reading.letters) io.stdout(`${JSON.stringify(letter)}\n`);
    return EXIT.ok;
  }
  if (!reading.exists) io.stdout(`No vote journal at ${reading.where} yet: no vote was recorded there, so nothing failed.\n`);
  else if (reading.letters.length === 0) io.stdout(`No dead letters in ${reading.where}.\n`);
  else {
    io.stdout(`${reading.letters.length} dead ${reading.letters.length === 1 ? 'letter' : 'letters'} in ${reading.where}:\n`);
    io.stdout(`${letterLines(reading.letters).join('\n')}\n`);
    io.stdout(`Replay with 'listing-agent votes retry' (--key K, --hook H), once the hook works again.\n`);
  }
  if (reading.corruptLines > 0) {
    const skipped = `${reading.corruptLines} damaged lines skipped`;
    io.stderr(`listing-agent votes failed: ${skipped}; the agent repairs the journal at its next start\n`);
  }
  return EXIT.ok;
}

/** `votes retry --agent`: the running agent retries (the status page's action). */
async function retryInAgent(config: ListingAgentConfig, io: CliIo, filter: { keys?: string[]; hook?: string }): Promise<number> {
  const answer = await askRunningAgent(config, 'retry', filter, io, 'votes retry');
  if (!answer.ok) return answer.exit;
  const retried = Number(answer.body.retried ?? 0);
  if (retried === 0) io.stdout('No dead letter matches: nothing to replay.\n');
  else {
    const [letters, hooks] = retried === 1 ? ['letter', 'its hook'] : ['letters', 'their hooks'];
    const see = "'listing-agent votes failed' or its status page shows what fails again";
    io.stdout(`The running agent took ${retried} dead ${letters} and runs ${hooks} again; ${see}.\n`);
  }
  return EXIT.ok;
}

async function runRetry(argv: string[], io: CliIo): Promise<number> {
  const options = { key: { type: 'string', multiple: true }, hook: { type: 'string' }, agent: { type: 'boolean' } } as const;
  const { values } = parse('retry', argv, options);
  if (values.help) return help(io);
  const loaded = await loadVotesConfigAndSources(io, 'retry', values);
  if (typeof loaded === 'number') return loaded;
  const { config } = loaded;
  const keys = values.key as string[] | undefined;
  const hook = values.hook as string | undefined;
  if (values.agent === true) {
    return retryInAgent(config, io, { ...(keys === undefined ? {} : { keys }), ...(hook === undefined ? {} : { hook }) });
  }
  // Its own agent ID in Redis, never the daemon's: the replayed votes are pending under it meanwhile.
  await using state = cliState(config, io, { agentId: cliAgentId(io, 'votes-retry') });
  // Hooks first: a bad hook is a configuration error, before the lock or Redis is touched.
  // The daemon's exec hook environment: a replay sees no more of this shell's variables than a run.
  const hooks = state.hooks(daemonHookOptions(io, loaded.sources.env));
  // File: the ledger comes with the state lock (a running agent and this replay never append to
  // one journal at once). Redis: the shared ledger, beside the running agents.
  // A replay is short-lived: it must not take over the votes of a dead agent only to drop them.
  const ledger = await state.ledger({ adoptOrphans: false });
  const result = await replayDeadLetters({
    ledger,
    hooks,
    ...(keys === undefined ? {} : { keys }),
    ...(hook === undefined ? {} : { hook }),
  });
  const replayed = result.succeeded.length + result.failedAgain.length;
  if (replayed === 0 && result.skipped.length === 0) io.stdout('No dead letter matches: nothing to replay.\n');
  if (replayed > 0) {
    const outcome = `${result.succeeded.length} succeeded, ${result.failedAgain.length} failed again`;
    io.stdout(`Replayed ${replayed} dead ${replayed === 1 ? 'letter' : 'letters'}: ${outcome}.\n`);
  }
  for (const letter of result.succeeded) io.stdout(`  ok      ${printable(letter.key)}  hook ${printable(letter.hook)}\n`);
  for (const letter of result.failedAgain) {
    io.stdout(`  failed  ${printable(letter.key)}  hook ${printable(letter.hook)}: ${printable(letter.error)}\n`);
  }
  if (result.skipped.length > 0) {
    const hooks = [...new Set(result.skipped.map((l) => l.hook))].join(', ');
    const replay = 'the embedded agent replays those with agent.votePipeline.retry()';
    io.stdout(`${result.skipped.length} dead letters of hooks not in the config (${hooks}) were left alone: ${replay}.\n`);
  }
  return result.failedAgain.length > 0 ? EXIT.failure : EXIT.ok;
}

async function runCheck(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse('check', argv, { source: { type: 'string' }, json: { type: 'boolean' } }, 1);
  if (values.help) return help(io);
  const user = positionals[0];
  if (user === undefined || user === '') throw new UsageError('give the user ID: votes check <user>', 'votes check');
  const source = values.source as string | undefined;
  if (source !== undefined && !(VOTE_SOURCES as readonly string[]).includes(source)) {
    throw new UsageError(`--source must be one of ${VOTE_SOURCES.join(', ')} (got '${source}')`, 'votes check');
  }
  const config = await load(io, 'check', values);
  if (typeof config === 'number') return config;
  await using client = clientFor(config);
  const status = await client.votes.status(user, source === undefined ? {} : { source: source as VoteSource });
  const active = status !== null && Date.now() < Date.parse(status.expires_at);
  if (values.json === true) {
    io.stdout(`${JSON.stringify({ user, source: source ?? VOTE_SOURCES[0], voted: active, ...(status ?? {}) })}\n`);
  } else if (active) {
    const [shown, at, until] = [user, status.created_at, status.expires_at].map(printable);
    io.stdout(`${shown} has voted: at ${at} (weight ${status.weight}); may vote again at ${until}.\n`);
  } else {
    const why = `never voted, the vote expired, or the user is unknown in the ${source ?? VOTE_SOURCES[0]} namespace`;
    io.stdout(`${printable(user)} has no active vote (${why}).\n`);
  }
  return EXIT.ok;
}

const COLUMNS = [
  ['CREATED_AT', 24],
  ['USER_ID', 20],
  ['PLATFORM_ID', 20],
  ['WEIGHT', 6],
  ['EXPIRES_AT', 24],
] as const;

function row(cells: readonly (string | number)[]): string {
  return `${cells.map((cell, i) => printable(String(cell)).padEnd(COLUMNS[i]![1])).join('  ').trimEnd()}\n`;
}

const jsonLine = (v: VoteRecord) =>
  `${JSON.stringify({
    key: voteKey(v.user_id, v.created_at),
    user_id: v.user_id,
    platform_id: v.platform_id,
    weight: v.weight,
    created_at: v.created_at,
    expires_at: v.expires_at,
  })}\n`;

async function runList(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse('list', argv, { since: { type: 'string' }, json: { type: 'boolean' } });
  if (values.help) return help(io);
  const sinceText = (values.since as string | undefined) ?? '24h';
  const sinceMs = parseDuration(sinceText);
  if (sinceMs === undefined) throw new UsageError(`--since must be a duration such as 30m, 24h or 7d (got '${sinceText}')`, 'votes list');
  const config = await load(io, 'list', values);
  if (typeof config === 'number') return config;
  const now = Date.now();
  if (now - sinceMs < earliestStartDate(now)) {
    const most = formatDuration(now - earliestStartDate(now));
    throw new UsageError(`--since ${sinceText} reaches further back than the service lists (one year; at most ${most})`, 'votes list');
  }
  const json = values.json === true;
  await using client = clientFor(config);
  const startDate = new Date(now - sinceMs);
  let count = 0;
  let pages = 0;
  if (!json) io.stdout(row(COLUMNS.map(([name]) => name)));
  for await (const page of client.votes.pages({ startDate })) {
    pages += 1;
    for (const vote of page.data) {
      io.stdout(json ? jsonLine(vote) : row([vote.created_at, vote.user_id, vote.platform_id, vote.weight, vote.expires_at]));
    }
    // What breaks the contract (an ID, a weight, a time out of bounds) is left out, and said so on stderr.
    for (const record of page.invalid ?? []) io.stderr(`listing-agent votes list: left out a record the service sent: ${record.message}\n`);
    count += page.data.length;
    // Only a long history gets progress lines, and only on stderr: stdout stays the data.
    if (page.data.length > 0 && pages > 1) {
      io.stderr(`listing-agent votes list: ${count} votes so far (up to ${page.data.at(-1)!.created_at})...\n`);
    }
  }
  const [votes, pageWord] = [count === 1 ? 'vote' : 'votes', pages === 1 ? 'page' : 'pages'];
  io.stderr(`listing-agent votes list: ${count} ${votes} since ${startDate.toISOString()} (${pages} ${pageWord})\n`);
  return EXIT.ok;
}

function help(io: CliIo): number {
  io.stdout(VOTES_HELP);
  return EXIT.ok;
}

/** `listing-agent votes <failed|retry|check|list|reminders>`. */
export function runVotesCommand(argv: string[], io: CliIo): Promise<number> {
  // The service, the state directory or a hook name said no: one line, never a stack trace.
  const reminders = (args: string[], out: CliIo) => runVotesReminders(args, out, () => help(out));
  return runSubcommand(argv, io, {
    command: 'votes',
    help: VOTES_HELP,
    subcommands: { failed: runFailed, retry: runRetry, check: runCheck, list: runList, reminders },
    oneLineErrors: true,
  });
}
