import { formatDuration } from '../config/duration.js';

/** What one poll did, as far as the readiness of `votes` goes (a `PollResult` fits). */
export interface PollOutcome {
  /** The service project IDs polled. */
  projects: readonly string[];
  /** Projects (or `projects` for the project list itself) that failed, with why. */
  failures: readonly { project: string; error: Error }[];
}

/**
 * The readiness of `votes` after a poll (pure): not ready with every failure named, or ready with
 * how many projects are polled and how often.
 */
export function pollReadiness(result: PollOutcome, pollIntervalMs: number): { ready: boolean; detail: string } {
  const every = formatDuration(pollIntervalMs);
  if (result.failures.length > 0) {
    const reason = result.failures.map((f) => `${f.project}: ${f.error.message}`).join('; ');
    return { ready: false, detail: `last poll failed (retried every ${every}): ${reason}` };
  }
  const count = result.projects.length;
  if (count === 0) return { ready: true, detail: `no project to poll yet (checked every ${every})` };
  return { ready: true, detail: `polling ${count} ${count === 1 ? 'project' : 'projects'} every ${every}` };
}
