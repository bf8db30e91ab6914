import { silentLogger, type AgentLogger } from '../log/agent-logger.js';
import { ListingAgentError } from '../errors.js';
import { createVotePipeline, type BackoffOptions } from './pipeline.js';
import type { DeadLetter, VoteHook, VoteLedger } from './types.js';

/** Options of {@link replayDeadLetters}. */
export interface ReplayOptions {
  /** The ledger (not open yet); it is opened and closed here. */
  ledger: VoteLedger;
  /** The hooks that may be replayed (the configured ones). */
  hooks: readonly VoteHook[];
  /** Only these vote keys. Default: every key. */
  keys?: readonly string[];
  /** Only this hook. Default: every hook in `hooks`. */
  hook?: string;
  /**
   * The backoff between a hook's retries. Default 250 ms doubling up to 2 s: someone waits at a
   * terminal, and a hook that keeps failing is dead-lettered again in seconds, not minutes.
   */
  backoff?: BackoffOptions;
  /** Default: silent. */
  logger?: AgentLogger;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** What {@link replayDeadLetters} did. */
export interface ReplayResult {
  /** Dead letters replayed whose hook succeeded this time. */
  succeeded: DeadLetter[];
  /** Dead letters replayed whose hook failed again (a new dead letter each). */
  failedAgain: DeadLetter[];
  /** Matching dead letters of hooks not in `hooks` (the in-process `vote-event` hook): left alone. */
  skipped: DeadLetter[];
}

/** A view of `ledger` whose `open()` reports nothing pending: a replay must not run those votes. */
function withoutPending(ledger: VoteLedger): VoteLedger {
  return {
    open: async () => {
      await ledger.open();
      return [];
    },
    has: (key) => ledger.has(key),
    recordPending: (votes) => ledger.recordPending(votes),
    recordHookDone: (key, hook) => ledger.recordHookDone(key, hook),
    recordComplete: (key) => ledger.recordComplete(key),
    recordDeadLetter: (letter) => ledger.recordDeadLetter(letter),
    takeDeadLetters: (filter) => ledger.takeDeadLetters(filter),
    deadLetters: () => ledger.deadLetters(),
    compact: (now) => ledger.compact(now),
    stats: () => ledger.stats(),
    close: () => ledger.close(),
    describe: () => ledger.describe(),
    warnings: () => ledger.warnings?.() ?? [],
  };
}

const letterId = (letter: Pick<DeadLetter, 'key' | 'hook'>) => `${letter.key}\u0000${letter.hook}`;

/**
 * Replays dead letters once, outside the agent (`listing-agent votes retry`): opens the ledger,
 * takes the matching dead letters of `hooks`, runs each hook again with its configured retries,
 * waits until every replayed call succeeded or was dead-lettered again, and closes the ledger.
 * Votes a crash left pending are not touched (the agent's next start runs them, with every hook,
 * the in-process one included). The caller holds the state lock.
 *
 * @throws for an unknown `hook` name (listing the hooks), or when the ledger cannot be opened.
 */
export async function replayDeadLetters(options: ReplayOptions): Promise<ReplayResult> {
  const now = options.now ?? Date.now;
  const names = new Set(options.hooks.map((hook) => hook.name));
  if (options.hook !== undefined && !names.has(options.hook)) {
    const known = [...names].join(', ') || '(none configured)';
    throw new ListingAgentError('votes_unknown_hook', `no configured vote hook is named "${options.hook}"; the hooks are: ${known}`);
  }
  const pipeline = createVotePipeline({
    ledger: withoutPending(options.ledger),
    hooks: options.hooks,
    logger: options.logger ?? silentLogger,
    now,
    backoff: options.backoff ?? { baseMs: 250, maxMs: 2_000 },
  });
  await pipeline.start();
  try {
    const keys = options.keys === undefined ? undefined : new Set(options.keys);
    const matching = (await pipeline.failed()).filter(
      (letter) => (keys === undefined || keys.has(letter.key)) && (options.hook === undefined || letter.hook === options.hook),
    );
    const replayed = matching.filter((letter) => names.has(letter.hook));
    const skipped = matching.filter((letter) => !names.has(letter.hook));
    if (replayed.length > 0) {
      const keys = [...new Set(replayed.map((letter) => letter.key))];
      await pipeline.retry({ keys, ...(options.hook === undefined ? {} : { hook: options.hook }) });
      await pipeline.idle();
    }
    const stillFailed = new Map((await pipeline.failed()).map((letter) => [letterId(letter), letter]));
    const failedAgain = replayed.flatMap((letter) => stillFailed.get(letterId(letter)) ?? []);
    const succeeded = replayed.filter((letter) => !stillFailed.has(letterId(letter)));
    return { succeeded, failedAgain, skipped };
  } finally {
    await pipeline.stop(now() + 10_000);
    await options.ledger.close();
  }
}
