/** Types of bench/helpers/votes-ingest.mjs (see there). */
export declare const VOTES: number;
export declare const PAGE: number;

export interface IngestionResult {
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
export declare function runIngestion(): Promise<IngestionResult>;
