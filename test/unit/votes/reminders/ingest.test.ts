import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../../src/config/schema.js';
import { silentLogger } from '../../../../src/log/agent-logger.js';
import type { CapabilityContext } from '../../../../src/runtime/capability.js';
import { createAgentMetrics } from '../../../../src/runtime/metrics.js';
import { createReadiness } from '../../../../src/runtime/readiness.js';
import { createMemoryStore } from '../../../../src/store/memory.js';
import { createVotesCapability } from '../../../../src/votes/capability.js';
import { createMemoryVoteLedger } from '../../../../src/votes/ledger-memory.js';
import { createVotePipeline } from '../../../../src/votes/pipeline.js';
import { startReminders } from '../../../../src/votes/reminders/configured.js';
import { withReminders } from '../../../../src/votes/reminders/ingest.js';
import type { Vote, VoteLedger, VotesEvents } from '../../../../src/votes/types.js';
import { voteAt } from '../../../helpers/votes.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2025-01-01T12:00:00.000Z');
const vote = (userId: string): Vote => voteAt(userId, T0, { road: 'webhook' });

function setup(listeners: ((vote: Vote) => void)[]) {
  let time = T0;
  const registry = new Registry();
  const context = {
    config: configSchema.parse({ service: { token: 'a.b.c' }, votes: { reminders: { enabled: true } } }),
    logger: silentLogger,
    metrics: createAgentMetrics(registry),
    now: () => time,
    emit: () => undefined,
    reportError: () => undefined,
    listeners: (event: string) => (event === 'reminder' ? listeners : []),
  } as unknown as CapabilityContext<VotesEvents>;
  return { context, registry, setTime: (ms: number) => (time = ms) };
}

describe('reminders beside the reward pipeline', () => {
  it('an ingest the pipeline refuses (stopped) schedules no reminder', async () => {
    const { context } = setup([() => undefined]);
    const running = await startReminders(context, { kind: 'memory' });
    const stopped = createVotePipeline({ ledger: createMemoryVoteLedger({ keepKeysForMs: 0 }), hooks: [], logger: silentLogger, now: () => T0 });
    await expect(withReminders(stopped, running).ingest([vote('1')], 'webhook')).rejects.toThrow(/not running/);
    expect(await running.reminders.size()).toBe(0);
    await running.stop(T0);
  });

  it('counts a reminder sent once however many hooks ran it, and does not start when nothing would receive them', async () => {
    const { context, registry, setTime } = setup([() => undefined, () => undefined]);
    const running = await startReminders(context, { kind: 'memory' });
    await running.reminders.schedule([vote('1')]);
    setTime(T0 + 12 * HOUR + 1);
    await running.reminders.fire();
    await running.pipeline.idle();
    expect(await registry.metrics()).toContain('listing_agent_reminders_total{result="sent"} 1');
    await running.stop(T0 + 13 * HOUR);
    // No listener as they start, no hook, no stream: a reminder would be `sent` to nobody.
    await expect(startReminders(setup([]).context, { kind: 'memory' })).rejects.toThrow('nothing receives the reminders');
  });
});

describe('the votes capability with reminders', () => {
  it("opens the reminders' journal before its vote ledger (what an earlier version kept there is carried over before a rewrite)", async () => {
    const directory = await mkdtemp(join(tmpdir(), 'reminders-capability-'));
    const { context } = setup([() => undefined]);
    const config = configSchema.parse({ service: { token: 'a.b.c' }, state: { directory }, votes: { reminders: { enabled: true } } });
    const full = { ...context, config, store: createMemoryStore(), readiness: createReadiness(() => T0) } as unknown as CapabilityContext<VotesEvents>;
    const inner = createMemoryVoteLedger();
    let journalAtLedgerOpen: string[] = [];
    const ledger: VoteLedger = { ...inner, open: async () => ((journalAtLedgerOpen = await readdir(directory)), inner.open()) };
    const votes = createVotesCapability({ ledger, poll: false, hooks: [{ name: 'reward', retries: 0, run: async () => undefined }] });
    try {
      await votes.start(full);
      expect(journalAtLedgerOpen).toContain('reminders.journal');
      expect(await votes.reminders!.size()).toBe(0);
    } finally {
      await votes.stop(T0 + 1_000);
      await rm(directory, { recursive: true, force: true });
    }
    expect(votes.reminders).toBeUndefined();
  });
});
