/*
 * The votes capability with reminders on, on the real file store and file vote ledger (the
 * agent's default: the schedule in `reminders.journal`), run as a child with ts-register.mjs for
 * test/integration/votes/reminders-kill.test.ts. The clock is fixed at <clock ms>.
 *
 * - `ingest <votes.json>`: ingests each batch of the file (an array of arrays of votes) through
 *   the capability's pipeline, printing `acked <n>` once batch n is acknowledged, then `ingested`,
 *   and waits to be killed.
 * - `stream <count>`: ingests <count> webhook votes of users 400000000000000000 + i, one per
 *   batch and 8 at a time (as concurrent deliveries are), each cast an hour before the clock,
 *   printing `acked <user ID>` once each is acknowledged, and waits to be killed.
 * - `fire`: starts (what is due fires at start), waits until nothing due is left, and stops
 *   gracefully, printing `stopped`.
 *
 * Every `reminder` event appends `reminded <key>` to <events file>, and every warning about
 * skipped reminders `skipped <n>`, synchronously (the page cache keeps them through a SIGKILL).
 *
 * argv: <state directory> <events file> <clock ms> <mode> [votes.json | count]
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { configSchema } from '../../src/config/schema.js';
import type { AgentLogger } from '../../src/log/agent-logger.js';
import { silentLogger } from '../../src/log/agent-logger.js';
import type { ListingClient } from '../../src/api/client.js';
import type { CapabilityContext } from '../../src/runtime/capability.js';
import { createAgentMetrics } from '../../src/runtime/metrics.js';
import { createReadiness } from '../../src/runtime/readiness.js';
import { createFileStore } from '../../src/store/file.js';
import { createVotesCapability } from '../../src/votes/capability.js';
import type { Vote, VotesEvents } from '../../src/votes/types.js';

const [directory, eventsFile, clock, mode, votesFile] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const now = () => Number(clock);
const note = (line: string) => appendFileSync(eventsFile, `${line}\n`);
const logger: AgentLogger = {
  ...silentLogger,
  warn(obj) {
    const skipped = (obj as { skipped?: number }).skipped;
    if (skipped !== undefined) note(`skipped ${skipped}`);
  },
  child: () => logger,
};
const config = configSchema.parse({ service: { token: 'a.b.c' }, state: { directory }, votes: { enabled: false, reminders: { enabled: true, maxLateness: '1h' } } });
const store = createFileStore({ directory, now });
await store.open();
// Reminded by this run or an earlier one (the status page's last sent go on across restarts).
const seen = new Set<string>((existsSync(eventsFile) ? readFileSync(eventsFile, 'utf8') : '').split('\n').flatMap((line) => (line.startsWith('reminded ') ? [line.slice(9)] : [])));
const reminded = (vote: Vote) => {
  seen.add(vote.key);
  note(`reminded ${vote.key}`);
};
const context = {
  config,
  client: {} as ListingClient,
  store,
  logger,
  metrics: createAgentMetrics(new Registry()),
  readiness: createReadiness(now),
  now,
  emit: () => undefined,
  reportError: (error: unknown) => process.stderr.write(`${String(error)}\n`),
  // The rewards' listener does nothing here: only the reminders are watched.
  listeners: (event: string) => (event === 'reminder' ? [reminded] : event === 'vote' ? [() => undefined] : []),
} as unknown as CapabilityContext<VotesEvents>;
const votes = createVotesCapability({ poll: false });
await votes.start(context);

if (mode === 'ingest') {
  const batches = JSON.parse(readFileSync(votesFile!, 'utf8')) as Vote[][];
  for (const [n, batch] of batches.entries()) {
    await votes.pipeline!.ingest(batch, 'webhook');
    process.stdout.write(`acked ${n + 1}\n`);
  }
  process.stdout.write('ingested\n');
  setInterval(() => undefined, 60_000);
} else if (mode === 'stream') {
  const count = Number(votesFile);
  let next = 0;
  const deliver = async (): Promise<void> => {
    while (next < count) {
      const userId = String(400_000_000_000_000_000n + BigInt(next++));
      const createdMs = now() - 3_600_000;
      const createdAt = new Date(createdMs).toISOString();
      const expiresAt = new Date(createdMs + 12 * 3_600_000).toISOString();
      const vote: Vote = { key: `${userId}:${createdMs}`, userId, platformId: null, projectId: '803190510032756736', weight: 1, createdAt, expiresAt, road: 'webhook' };
      await votes.pipeline!.ingest([vote], 'webhook');
      process.stdout.write(`acked ${userId}\n`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, deliver));
  setInterval(() => undefined, 60_000);
} else {
  // What was due was handed to the reminder pipeline during start(); wait until its hooks ran.
  const handed = (await votes.reminders!.lastSent()).map((info) => `reminder:${info.voteKey}`);
  while (!handed.every((key) => seen.has(key))) await new Promise((resolve) => setTimeout(resolve, 10));
  await votes.stop(now() + 5_000);
  await store.close();
  process.stdout.write('stopped\n');
}
