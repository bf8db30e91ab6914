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
