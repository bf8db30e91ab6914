import type { VotePipeline } from '../pipeline-types.js';
import type { RunningReminders } from './configured.js';

/**
 * The pipeline as both roads see it with reminders on: each batch's reminders are scheduled,
 * durably, before its votes are recorded. A crash between the two loses nothing: the votes were
 * not acknowledged (the cursor's checkpoint, a delivery's 2xx), so they come again, and scheduling
 * the same vote twice is a no-op. Votes whose key the ledger knows are not scheduled again.
 */
export function withReminders(pipeline: VotePipeline, running: RunningReminders): VotePipeline {
  return {
    ...pipeline,
    async ingest(votes, road, details) {
      await running.reminders.schedule(votes);
      return pipeline.ingest(votes, road, details);
    },
    [Symbol.asyncDispose]: () => pipeline[Symbol.asyncDispose](),
  };
}
