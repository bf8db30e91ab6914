import type { ListingAgentConfig } from '../../config/schema.js';
import { formatDuration } from '../../config/duration.js';
import { stateDirectory } from '../../config/state-directory.js';
import { printable } from '../../contract/printable.js';
import { readFileReminders, readRedisReminders, type RemindersReading } from '../../votes/reminders/read.js';
import type { ReminderInfo } from '../../votes/reminders/schedule.js';
import { EXIT, UsageError, type CliIo } from '../io.js';
import { cliState } from '../state.js';
import { loadVotesConfig, parseVotesArgs } from './votes-args.js';

/*
 * `listing-agent votes reminders`: what the agent has scheduled (votes.reminders), read beside a
 * running agent: the state directory's journals without the lock, or Redis (state.redis) read only.
 */

const COLUMNS = [
  ['DUE_AT', 24],
  ['USER_ID', 20],
  ['PROJECT_ID', 12],
  ['VOTE_KEY', 34],
  ['EXPIRES_AT', 24],
] as const;

function row(cells: readonly string[]): string {
  return `${cells.map((cell, i) => printable(cell).padEnd(COLUMNS[i]![1])).join('  ').trimEnd()}\n`;
}

const infoRow = (r: ReminderInfo) => row([r.dueAt, r.userId, r.projectId, r.voteKey, r.expiresAt]);

function parseLimit(text: string | undefined): number {
  if (text === undefined) return 10;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new UsageError(`--limit must be a whole number from 1 to 1000 (got '${text}')`, 'votes reminders');
  }
  return limit;
}

function printText(io: CliIo, reading: RemindersReading, where: string, config: ListingAgentConfig): void {
  const { size, next, lastSent } = reading;
  const delay = config.votes.reminders.delay;
  const after = delay > 0 ? ` + ${formatDuration(delay)} (votes.reminders.delay)` : '';
  io.stdout(`${size} vote ${size === 1 ? 'reminder' : 'reminders'} scheduled in ${where}; each is due at its vote's expiry${after}.\n`);
  if (next.length > 0) {
    io.stdout(`\nNext due${next.length < size ? ` (the first ${next.length})` : ''}:\n`);
    io.stdout(row(COLUMNS.map(([name]) => name)));
    for (const r of next) io.stdout(infoRow(r));
  }
  io.stdout(lastSent.length === 0 ? '\nNo reminder sent yet.\n' : `\nLast sent (newest first):\n`);
  if (lastSent.length > 0) {
    io.stdout(row(COLUMNS.map(([name]) => name)));
    for (const r of lastSent) io.stdout(infoRow(r));
  }
}

/** `listing-agent votes reminders [--limit N] [--json]`. */
export async function runVotesReminders(argv: string[], io: CliIo, help: () => number): Promise<number> {
  const { values } = parseVotesArgs('reminders', argv, { json: { type: 'boolean' }, limit: { type: 'string' } });
  if (values.help) return help();
  const limit = parseLimit(values.limit as string | undefined);
  const config = await loadVotesConfig(io, 'reminders', values);
  if (typeof config === 'number') return config;
  const settings = config.votes.reminders;
  const json = values.json === true;
  // Reminders ride the vote pipeline, which runs for the poller (votes.enabled) or the webhook receiver alone.
  if (!settings.enabled || !(config.votes.enabled || config.webhooks.enabled)) {
    const why = settings.enabled
      ? 'votes.enabled and webhooks.enabled are both false; reminders come from their votes'
      : 'votes.reminders.enabled is false';
    if (json) io.stdout(`${JSON.stringify({ enabled: false, reason: why })}\n`);
    else {
      const fix = 'Set votes.reminders.enabled (and votes.enabled or webhooks.enabled) to true to turn them on.';
      io.stdout(`Vote reminders are not enabled (${why}): nothing is scheduled. ${fix}\n`);
    }
    return EXIT.ok;
  }
  await using state = cliState(config, io);
  const redis = await state.redis();
  const reading =
    redis === undefined
      ? await readFileReminders(stateDirectory(config, io.cwd), settings.delay, limit)
      : await readRedisReminders(redis, settings.delay, limit);
  const where = 'path' in reading ? (reading as { path: string }).path : state.description;
  if (json) {
    const { size: scheduled, next, lastSent } = reading;
    io.stdout(`${JSON.stringify({ enabled: true, where, delayMs: settings.delay, scheduled, next, lastSent })}\n`);
    return EXIT.ok;
  }
  if (!reading.exists) {
    io.stdout(`No reminder schedule in ${where} yet: the agent has scheduled no reminder there.\n`);
    return EXIT.ok;
  }
  printText(io, reading, where, config);
  return EXIT.ok;
}
