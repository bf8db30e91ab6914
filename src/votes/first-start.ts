import { formatDuration } from '../config/duration.js';
import type { AgentLogger } from '../log/agent-logger.js';

/**
 * The one line a project's first poll logs (no checkpoint yet). A fresh state directory must not
 * pay again for votes a bot's own reward code (or another state directory) already paid, so by
 * default a first start rewards only the votes cast from the start on and says, at `warn`, what
 * it skipped and how to ask for the votes before it; `votes.lookback` set is the explicit
 * backfill, said at `info`.
 */

/** What {@link logFirstStart} says. */
interface FirstStartFacts {
  projectId: string;
  /** Where the first poll lists from: the start, less the lookback. */
  startDate: Date;
  lookbackMs: number;
  /** Where the checkpoints are kept (`./state`, `redis redis://host:6379 (prefix x)`). */
  place: string;
  /** How the line names a setting. Default: its config path. */
  settingName?: (path: string) => string;
}

/** The setting that asks a first start for earlier votes. */
const LOOKBACK_PATH = 'votes.lookback';

/**
 * What a first start with no lookback skips and how to ask for it, in the words the agent's line
 * and `doctor` share.
 */
export function skippedVotesNote(settingName: (path: string) => string = (path) => path): string {
  const reward = 'before a first start to reward the votes the service still lists';
  return `earlier votes are not rewarded (set ${settingName(LOOKBACK_PATH)}, e.g. 12h, ${reward})`;
}

/** The first start's line, in words (pure). */
function firstStartMessage(facts: FirstStartFacts): { level: 'warn' | 'info'; message: string } {
  const head = `votes: first start (no checkpoint in ${facts.place}): rewarding votes cast from ${facts.startDate.toISOString()} on`;
  if (facts.lookbackMs <= 0) return { level: 'warn', message: `${head}; ${skippedVotesNote(facts.settingName)}` };
  const setting = (facts.settingName ?? ((path: string) => path))(LOOKBACK_PATH);
  return { level: 'info', message: `${head} (${setting}: ${formatDuration(facts.lookbackMs)} before the start)` };
}

/** Logs a project's first poll: one line, at `warn` when votes before the start are skipped. */
export function logFirstStart(logger: AgentLogger, facts: FirstStartFacts): void {
  const { level, message } = firstStartMessage(facts);
  logger[level]({ project: facts.projectId, startDate: facts.startDate.toISOString(), lookback: facts.lookbackMs }, message);
}
