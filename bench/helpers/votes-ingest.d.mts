/** Types of bench/helpers/votes-ingest.mjs (see there). */
export declare const VOTES: number;
export declare const PAGE: number;

export interface IngestionResult {
  /** Whether vote reminders were on. */
  reminders: boolean;
  /** Reminders scheduled at the end (100,000 with reminders on, else 0). */
  scheduled: number;
  /** With reminders on: the ledger companion's own cost per new vote, measured alone (best of 3 passes). */
  hookUsPerVote: number | undefined;
  /** VmHWM before that measure (it allocates the votes again). */
  peakBeforeHookCost: number | undefined;
  /** Heap used after the run and GCs, everything still held. */
  heapAfterGc: number;
  /** Array buffers (typed arrays: outside the V8 heap) at the same moment. */
  arrayBuffersAfterGc: number;
  /** CPU time (user + system) of the ingestion per vote, µs. */
  cpuUsPerVote: number;
  votesPerSecond: number;
  ingestOnlyPerSecond: number;
  elapsedMs: number;
  commits: number;
  journalBytes: number;
  /** Journal bytes by record kind (`p` pending, `c` complete, `journal` the header line, ...). */
  journalByKind: Record<string, number>;
  keys: number;
  /** RSS after setup and a GC, before the first page. */
  baselineRss: number;
  /** Highest RSS sampled during the run (every 5 ms and at every page). */
  peakRss: number;
  heapUsedAtEnd: number;
  directoryBefore: number;
  directoryAfter: number;
  keysAfter: number;
  compactMs: number;
}

export declare function ownPeakRss(): number | undefined;
/** Reminders off against on in one process, page by page (per-vote µs of each measured page, and each pair's difference). */
export declare function runPaired(): Promise<{ pages: number; cpuOff: number[]; cpuOn: number[]; cpuAdded: number[]; wallOff: number[]; wallOn: number[]; wallAdded: number[] }>;
export declare function runIngestion(options?: { reminders?: boolean }): Promise<IngestionResult>;
