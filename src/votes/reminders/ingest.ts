import type { VotePipeline } from '../pipeline.js';
import { onRoad } from '../pipeline-state.js';
import type { RunningReminders } from './configured.js';

/**
 * The pipeline as both roads see it with reminders on: each batch's votes are recorded, then
 * their reminders scheduled, durably, before the caller is answered. A batch the pipeline refuses
 * (stopped, ledger down) schedules nothing. A crash between the two loses nothing: the votes were
 * not acknowledged yet (the cursor's checkpoint, a delivery's 2xx), so they come again, and then
 * every vote of the batch is scheduled, duplicates too (scheduling a vote twice is a no-op; a vote
 * the ledger knows has not fired its reminder yet unless it has expired, and an expired vote is
 * not scheduled).
 */
export function withReminders(pipeline: VotePipeline, running: RunningReminders): VotePipeline {
  return {
    ...pipeline,
    async ingest(votes, road, details) {
      const result = await pipeline.ingest(votes, road, details);
      await running.reminders.schedule(onRoad(votes, road));
      return result;
    },
    [Symbol.asyncDispose]: () => pipeline[Symbol.asyncDispose](),
  };
}
