/** Types of bench/helpers/autoposter.mjs (see there). */
import type { EventEmitter } from 'node:events';

export declare const undiciVersion: string;

export interface Counts {
  serverCount: number;
  shardCount: number;
}

export declare function redirectTopgg(origin: string): { inFlight(): number; restore(): Promise<void> };

export declare function standInClient(counts: Counts): object;

export declare class StandInPoster extends EventEmitter {
  constructor(token: string, client: object, options?: { interval?: number; postOnStart?: boolean; startPosting?: boolean });
  started: boolean;
  start(): void;
  stop(): void;
  post(): Promise<void>;
}
