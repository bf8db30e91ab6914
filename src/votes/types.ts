import type { Vote } from '../contract/vote.js';
import type { HookRun } from '../runtime/votes.js';
import type { WriteHealth } from '../store/write-health.js';

export type { HookRun } from '../runtime/votes.js';
export type { Vote, VoteRoad } from '../contract/vote.js';
export { voteKey } from '../contract/vote.js';

/** What a hook call gets besides the vote. */
export interface HookCallContext {
  /** The vote key: pass it on so the reward can be made idempotent downstream. */
  idempotencyKey: string;
  /** 1 for the first call, 2 for the first retry, ... */
  attempt: number;
  /** Aborted on the hook's timeout or when the agent stops. */
  signal: AbortSignal;
}

/** A reward hook: resolves when the reward is given, rejects (or throws) otherwise. */
export interface VoteHook {
  /** Unique among the agent's hooks; names it in logs, metrics and dead letters. */
  readonly name: string;
  /** Retries after a failure before the vote is dead-lettered for this hook. */
  readonly retries: number;
  run(vote: Vote, context: HookCallContext): Promise<void>;
}

/** A vote a hook gave up on after its retries. */
export interface DeadLetter {
  key: string;
  hook: string;
  vote: Vote;
  attempts: number;
  /** The last failure, secrets removed. */
  error: string;
  /** ISO 8601. */
  failedAt: string;
}

/** Where a vote stands in the ledger. */
export interface LedgerEntry {
  vote: Vote;
  /** Hooks that have succeeded for it. */
  done: string[];
  /** True once every hook succeeded or was dead-lettered. */
  complete: boolean;
  /**
   * Hooks whose dead letter for this vote is still outstanding (not yet taken for a replay): a
   * restart must not run them again by itself. Absent means none.
   */
  deadLettered?: string[];
}

/**
 * The durable record of votes: which keys were seen, which are pending, which hooks are done,
 * which were dead-lettered. Every method that changes it resolves only once the change is
 * durable. Keys are kept until `expiresAt` plus the configured slack, then forgotten, so the
 * ledger stays bounded however many votes pass.
 */
export interface VoteLedger {
  /** Loads the ledger; resolves with the votes that were pending when the process last stopped. */
  open(): Promise<LedgerEntry[]>;
  /** True when the key was seen (and not yet forgotten). */
  has(key: string): boolean;
  /** Records votes as pending; keys already known are skipped. Resolves with those newly recorded. */
  recordPending(votes: readonly Vote[]): Promise<Vote[]>;
  /** Records that `hook` succeeded for `key`. */
  recordHookDone(key: string, hook: string): Promise<void>;
  /** Records that every hook is finished for `key` (it stays known, for dedupe). */
  recordComplete(key: string): Promise<void>;
  recordDeadLetter(letter: DeadLetter): Promise<void>;
  /** Removes dead letters (to replay them); all when `keys` is absent. Resolves with those removed. */
  takeDeadLetters(filter?: { keys?: readonly string[]; hook?: string }): Promise<DeadLetter[]>;
  deadLetters(): Promise<DeadLetter[]>;
  /** Forgets keys whose vote expired more than the slack ago; compacts the storage. */
  compact(now: number): Promise<void>;
  /** Sizes, for /metrics and the benchmark. */
  stats(): { keys: number; pending: number; deadLetters: number; bytes: number };
  close(): Promise<void>;
  describe(): string;
  /**
   * What the last `open()` found wrong and worked around (a torn last record, a corrupt line), one
   * sentence each, for the agent to log at `warn`. Optional: ledgers that never repair anything
   * leave it out.
   */
  warnings?(): readonly string[];
  /**
   * True when the ledger itself finds the votes whose `recordPending` answer was lost (and hands
   * them to `onRecovered`). The pipeline then never takes a later "already known" for its own lost
   * write: on a ledger shared by several agents, that key may be another agent's record, and
   * running it would fire the hooks twice. Absent means false (the file and memory ledgers).
   */
  readonly recoversLostRecords?: boolean;
  /**
   * Calls `listener` with votes this ledger took over while open: pending votes of another agent
   * that stopped (its heartbeat expired), now this agent's to run, exactly as the pending votes
   * `open()` returned. Never a vote whose completion this agent recorded and the ledger has not
   * made durable yet (Redis refusing writes): its hooks ran here. Optional: only ledgers shared by
   * several agents (Redis) take votes over.
   */
  onRecovered?(listener: (entries: LedgerEntry[]) => void): void;
  /**
   * Whether this agent still holds pending vote `key`, asked before a hook call is retried: false
   * only when the ledger knows that another agent took the vote over (it runs the vote's hooks
   * now) or finished it, so a retry here would reward it once more. True when this agent holds it,
   * and whenever the ledger cannot tell (no record, Redis unreachable): a retry too many is a
   * repeat, a retry too few a lost vote. Optional: a ledger of one agent (file, memory) is always
   * held by it.
   */
  holds?(key: string): Promise<boolean>;
  /**
   * Whether the ledger's directory takes writes (the file ledger): while it does not, new votes
   * are refused and the votes capability is not ready, with the reason. Absent: the ledger
   * writes nowhere that fills up (memory), or says so through its errors alone (Redis).
   */
  readonly writeHealth?: WriteHealth;
}


/** The events the votes capability and the vote pipeline emit, as the agent's (`agent.on('vote', ...)`). */
export interface VotesEvents {
  /**
   * A new vote (embedded mode's in-process hook). Listeners may be async: the agent awaits them,
   * and a rejection is a hook failure, retried and dead-lettered like any hook.
   */
  vote: [vote: Vote];
  /**
   * A voter can vote again (`votes.reminders`): the reminded vote, its `key` the reminder's
   * idempotency key `reminder:<vote key>`. Listeners may be async: awaited, a rejection is
   * retried and dead-lettered like any reminder hook.
   */
  reminder: [reminder: Vote];
  /** A vote was recorded durably (before any hook ran). */
  voteReceived: [vote: Vote];
  /** A hook gave up on a vote after its retries; `listing-agent votes failed` lists it. */
  voteDeadLettered: [letter: DeadLetter];
  /** A hook call finished (each attempt): the status page's per-hook outcomes and latencies. */
  voteHookRan: [run: HookRun];
}
