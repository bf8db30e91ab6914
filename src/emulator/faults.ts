import { z } from 'zod';

/** A fault to inject into the next matching requests (`POST /_emulator/faults`). */
export const faultSchema = z
  .object({
    /** HTTP method to match (any when absent). */
    method: z.string().min(1).transform((m) => m.toUpperCase()).optional(),
    /** Path to match: exact (`/api/v1/projects/@me/metrics`), or a prefix ending in `*`. Any when absent. */
    path: z.string().startsWith('/').optional(),
    /** Status to answer with (429, 502, ...). Absent with `delay_ms` only: delay, then answer normally. */
    status: z.number().int().min(100).max(599).optional(),
    /** How many requests the fault applies to. Default 1. */
    count: z.number().int().min(1).default(1),
    /** `Retry-After` seconds sent with the status. */
    retry_after: z.number().int().min(0).optional(),
    /** Wait this long (real milliseconds) before answering. */
    delay_ms: z.number().int().min(0).max(60_000).optional(),
    /** Destroy the socket instead of answering. */
    reset: z.boolean().optional(),
  })
  .refine((f) => f.status !== undefined || f.delay_ms !== undefined || f.reset === true, {
    message: 'a fault needs a status, a delay_ms or reset: true',
  });

/** A fault as stored: `remaining` counts down. */
export type Fault = z.output<typeof faultSchema> & { remaining: number };

/** Queue of injected faults; the first match wins and is used up. */
export interface FaultQueue {
  add(fault: z.output<typeof faultSchema>): Fault;
  /** Takes one use of the first fault matching the request, if any. */
  take(method: string, path: string): Fault | undefined;
  list(): Fault[];
  clear(): void;
}

function pathMatches(pattern: string | undefined, path: string): boolean {
  if (pattern === undefined) return true;
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern;
}

/** Creates an empty fault queue. */
export function createFaultQueue(): FaultQueue {
  let faults: Fault[] = [];
  return {
    add(fault) {
      const stored = { ...fault, remaining: fault.count };
      faults.push(stored);
      return stored;
    },
    take(method, path) {
      const fault = faults.find((f) => (f.method === undefined || f.method === method) && pathMatches(f.path, path));
      if (!fault) return undefined;
      fault.remaining -= 1;
      if (fault.remaining <= 0) faults = faults.filter((f) => f !== fault);
      return fault;
    },
    list: () => faults.map((f) => ({ ...f })),
    clear() {
      faults = [];
    },
  };
}
