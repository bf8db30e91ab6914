/**
 * `listing-agent/votes`: the vote path's parts, for a bot that wires its own: the pipeline (one
 * reward per vote, durable across restarts), its ledgers, the cursor poller, the hooks (http, exec,
 * in-process), and the "has this user voted?" cache. The agent builds all of these from its config.
 *
 * @packageDocumentation
 */
export type { Vote, VoteRoad, VoteHook, HookCallContext, HookRun, VoteLedger, DeadLetter, LedgerEntry } from '../votes/types.js';
export { voteKey } from '../votes/types.js';
export { createVotePipeline } from '../votes/pipeline.js';
export type { VotePipeline, VotePipelineOptions, IngestResult } from '../votes/pipeline.js';
export { createFileVoteLedger } from '../votes/ledger-file.js';
export type { FileVoteLedger, FileVoteLedgerOptions } from '../votes/ledger-file.js';
export { createMemoryVoteLedger } from '../votes/ledger-memory.js';
export { createVotePoller } from '../votes/poller.js';
export type { VotePoller, VotePollerOptions } from '../votes/poller.js';
export { createHasVoted } from '../votes/has-voted.js';
export type { HasVoted, HasVotedOptions } from '../votes/has-voted.js';
export { createHttpHook, createExecHook, createInProcessHook, hooksFromConfig, voteHookBody, VoteHookError } from '../votes/hooks/index.js';
export type { HttpHookOptions, ExecHookOptions, InProcessHookOptions, VoteHookBody, HookKind } from '../votes/hooks/index.js';

// The types that the signatures above name, so that a bot can name them too.
export type { IngestDetails } from '../runtime/votes.js';
export type { VotesCapabilityOptions } from '../votes/capability.js';
export type { VoteLedgerKind } from '../votes/configured.js';
export type { HasVotedQuery } from '../votes/has-voted.js';
export type { VoteHookErrorDetails, VoteHookFailureReason } from '../votes/hooks/errors.js';
export type { VoteListener } from '../votes/hooks/in-process.js';
export type { HookConfigs, HooksFromConfigOptions } from '../votes/hooks/index.js';
export type { JournalFs } from '../votes/journal.js';
export type { FileVoteLedgerStats } from '../votes/ledger-file.js';
export type { MemoryVoteLedgerOptions } from '../votes/ledger-memory.js';
export type { VotePipelineEmit } from '../votes/pipeline-run.js';
export type { BackoffOptions } from '../votes/pipeline-state.js';
export type { PollResult, VoteIngest } from '../votes/poller.js';
export type { StreamAppend } from '../votes/stream.js';
export type { VotesEvents } from '../votes/types.js';
