import { Counter, Gauge, type Registry } from 'prom-client';

/** Label names mapped to the values each may take. */
export type Labels = Record<string, string>;

/** A counter whose label values the compiler checks (`posts.inc({ target: 'v1', result: 'ok' })`). */
export interface LabeledCounter<L extends Labels> {
  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels: L, by?: number): void;
  /** The series' value (0 when never incremented): for tests and status lines. */
  get(labels: L): Promise<number>;
}

/** A gauge whose label values the compiler checks. */
export interface LabeledGauge<L extends Labels> {
  set(labels: L, value: number): void;
  /** The series' value, or undefined when never set. */
  get(labels: L): Promise<number | undefined>;
}

/** Each label's known values; a label left empty (`hook: []`) takes any value. */
type KnownValues<L extends Labels> = { [K in keyof L]: readonly L[K][] };

interface MetricConfig<L extends Labels> {
  name: string;
  help: string;
  known: KnownValues<L>;
}

/** Every combination of the known values (none when a label has no known value). */
function combinations<L extends Labels>(known: KnownValues<L>): L[] {
  let rows: Labels[] = [{}];
  for (const [name, values] of Object.entries(known) as [string, readonly string[]][]) {
    rows = rows.flatMap((row) => values.map((value) => ({ ...row, [name]: value })));
  }
  return rows as L[];
}

function matches(seriesLabels: Partial<Record<string, string | number>>, labels: Labels): boolean {
  return Object.entries(labels).every(([name, value]) => seriesLabels[name] === value);
}

/**
 * A counter on `registry` only (never prom-client's global one). Every combination of known
 * values starts at 0, so that `rate()` and alerts see a series before its first event.
 */
export function labeledCounter<L extends Labels>(registry: Registry, config: MetricConfig<L>): LabeledCounter<L> {
  const counter = new Counter<string>({
    name: config.name,
    help: config.help,
    labelNames: Object.keys(config.known),
    registers: [registry],
  });
  for (const labels of combinations(config.known)) counter.inc(labels, 0);
  return {
    inc: (labels, by = 1) => counter.inc(labels, by),
    async get(labels) {
      const { values } = await counter.get();
      return values.find((series) => matches(series.labels, labels))?.value ?? 0;
    },
  };
}

/** A gauge on `registry` only. Known combinations are not pre-set: an unset gauge has no value. */
export function labeledGauge<L extends Labels>(registry: Registry, config: MetricConfig<L>): LabeledGauge<L> {
  const gauge = new Gauge<string>({
    name: config.name,
    help: config.help,
    labelNames: Object.keys(config.known),
    registers: [registry],
  });
  return {
    set: (labels, value) => gauge.set(labels, value),
    async get(labels) {
      const { values } = await gauge.get();
      return values.find((series) => matches(series.labels, labels))?.value;
    },
  };
}
