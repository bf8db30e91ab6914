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

/** One way a chaos fault may strike: the fields of a fault, and how often it is picked among the others. */
const chaosKindSchema = z
  .strictObject({
    status: z.number().int().min(100).max(599).optional(),
    retry_after: z.number().int().min(0).optional(),
    delay_ms: z.number().int().min(0).max(60_000).optional(),
    reset: z.boolean().optional(),
    /** Relative weight among the kinds. Default 1. */
    weight: z.number().positive().default(1),
  })
  .refine((f) => f.status !== undefined || f.delay_ms !== undefined || f.reset === true, {
    message: 'a chaos kind needs a status, a delay_ms or reset: true',
  });

/** The kinds of {@link chaosSchema} when none are given: a 429 with Retry-After, a 502, a reset, a 2 s delay. */
const DEFAULT_CHAOS_KINDS = [
  { status: 429, retry_after: 1, weight: 1 },
  { status: 502, weight: 1 },
  { reset: true, weight: 1 },
  { delay_ms: 2_000, weight: 1 },
] as const;

/**
 * Random faults (`POST /_emulator/faults/chaos`): each matching request, when no queued fault
 * matched it, fails with `probability`, in one of `kinds` picked by weight. The draws come from a
 * PRNG seeded with `seed`, so a run can be replayed (the same sequence of requests meets the same
 * faults).
 */
export const chaosSchema = z.strictObject({
  /** Chance of a fault per matching request, 0 to 1. */
  probability: z.number().min(0).max(1),
  /** Seeds the PRNG (a 32-bit integer). Default 1. */
  seed: z.number().int().default(1),
  /** HTTP method to match (any when absent). */
  method: z.string().min(1).transform((m) => m.toUpperCase()).optional(),
  /** Path to match, as for a queued fault. Any when absent. */
  path: z.string().startsWith('/').optional(),
  /** How a fault strikes. Default {@link DEFAULT_CHAOS_KINDS}. */
  kinds: z.array(chaosKindSchema).min(1).default(() => DEFAULT_CHAOS_KINDS.map((k) => ({ ...k }))),
});

/** A fault as stored: `remaining` counts down. `chaos` marks one drawn by the chaos setting. */
export type Fault = z.output<typeof faultSchema> & { remaining: number; chaos?: true };

/** The chaos setting and what it did so far (`GET /_emulator/faults/chaos`). */
export interface ChaosStatus {
  /** The setting, or null when chaos is off. */
  chaos: z.output<typeof chaosSchema> | null;
  /** Requests that matched the setting (and no queued fault). */
  seen: number;
  /** Faults it injected. */
  injected: number;
  /** Faults injected per kind: `429`, `502`, `reset`, `delay` (a status with a delay counts as its status). */
  by_kind: Record<string, number>;
}

/** Queue of injected faults; the first match wins and is used up. Chaos, when set, draws the rest. */
export interface FaultQueue {
  add(fault: z.output<typeof faultSchema>): Fault;
  /** Takes one use of the first fault matching the request, if any; otherwise chaos may draw one. */
  take(method: string, path: string): Fault | undefined;
  list(): Fault[];
  /** Clears the queued faults and turns chaos off. */
  clear(): void;
  /** Turns chaos on with `chaos` (replacing a previous setting; the counters start again). */
  setChaos(chaos: z.output<typeof chaosSchema>): ChaosStatus;
  chaosStatus(): ChaosStatus;
  /** Turns chaos off (the counters stay readable until the next setting). */
  clearChaos(): void;
}

function pathMatches(pattern: string | undefined, path: string): boolean {
  if (pattern === undefined) return true;
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern;
}

/** mulberry32: a small seeded PRNG in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The counter name of a chaos kind. */
function kindName(kind: { status?: number | undefined; reset?: boolean | undefined }): string {
  if (kind.reset) return 'reset';
  if (kind.status !== undefined) return String(kind.status);
  return 'delay';
}

/** Creates an empty fault queue, chaos off. */
export function createFaultQueue(): FaultQueue {
  let faults: Fault[] = [];
  let chaos: z.output<typeof chaosSchema> | null = null;
  let random = seededRandom(1);
  let seen = 0;
  let injected = 0;
  let byKind: Record<string, number> = {};
  const status = (): ChaosStatus => ({ chaos: chaos && structuredClone(chaos), seen, injected, by_kind: { ...byKind } });

  function draw(method: string, path: string): Fault | undefined {
    if (!chaos || (chaos.method !== undefined && chaos.method !== method) || !pathMatches(chaos.path, path)) return undefined;
    seen += 1;
    // Two draws per request whatever the outcome, so the sequence stays aligned with the requests.
    const strike = random();
    const pick = random();
    if (strike >= chaos.probability) return undefined;
    const total = chaos.kinds.reduce((sum, k) => sum + k.weight, 0);
    let left = pick * total;
    const kind = chaos.kinds.find((k) => (left -= k.weight) < 0) ?? chaos.kinds.at(-1)!;
    injected += 1;
    const name = kindName(kind);
    byKind[name] = (byKind[name] ?? 0) + 1;
    const fault: Fault = { count: 1, remaining: 0, chaos: true };
    if (kind.status !== undefined) fault.status = kind.status;
    if (kind.retry_after !== undefined) fault.retry_after = kind.retry_after;
    if (kind.delay_ms !== undefined) fault.delay_ms = kind.delay_ms;
    if (kind.reset !== undefined) fault.reset = kind.reset;
    return fault;
  }

  return {
    add(fault) {
      const stored = { ...fault, remaining: fault.count };
      faults.push(stored);
      return stored;
    },
    take(method, path) {
      const fault = faults.find((f) => (f.method === undefined || f.method === method) && pathMatches(f.path, path));
      if (!fault) return draw(method, path);
      fault.remaining -= 1;
      if (fault.remaining <= 0) faults = faults.filter((f) => f !== fault);
      return fault;
    },
    list: () => faults.map((f) => ({ ...f })),
    clear() {
      faults = [];
      chaos = null;
    },
    setChaos(setting) {
      chaos = structuredClone(setting);
      random = seededRandom(setting.seed);
      seen = 0;
      injected = 0;
      byKind = {};
      return status();
    },
    chaosStatus: status,
    clearChaos() {
      chaos = null;
    },
  };
}
