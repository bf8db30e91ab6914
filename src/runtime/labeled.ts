/**
 * Labeled counters and gauges held in memory, without prom-client: an agent records its metrics
 * here whether or not anything serves them, and a prom-client registry, when there is one
 * (`/metrics`), reads them at each scrape (runtime/metrics.ts). A bot posting stats with health off
 * so never loads prom-client (issue 25).
 */

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

/** What a metric is, for the registry that serves it. */
export interface MetricConfig<L extends Labels> {
  name: string;
  help: string;
  known: KnownValues<L>;
}

/** The series of one labeled metric, as a registry reads them at a scrape. */
export interface LabeledSeries {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  /** Every series with its value, in the order they first appeared. */
  series(): Iterable<{ labels: Labels; value: number }>;
}

/** Every combination of the known values (none when a label has no known value). */
function combinations<L extends Labels>(known: KnownValues<L>): L[] {
  let rows: Labels[] = [{}];
  for (const [name, values] of Object.entries(known) as [string, readonly string[]][]) {
    rows = rows.flatMap((row) => values.map((value) => ({ ...row, [name]: value })));
  }
  return rows as L[];
}

/** One key per label set, whatever order its keys were written in. */
function keyOf(labelNames: readonly string[], labels: Labels): string {
  return labelNames.map((name) => labels[name] ?? '').join('\u0000');
}

function seriesStore<L extends Labels>(config: MetricConfig<L>) {
  const labelNames = Object.keys(config.known);
  const values = new Map<string, { labels: Labels; value: number }>();
  return {
    labelNames,
    values,
    entry(labels: L) {
      // As prom-client: a label the metric does not have is refused, not silently dropped.
      for (const name in labels) {
        if (!labelNames.includes(name)) throw new Error(`${config.name}: label "${name}" is not one of ${labelNames.join(', ')}`);
      }
      const key = keyOf(labelNames, labels);
      let found = values.get(key);
      if (!found) values.set(key, (found = { labels: { ...labels }, value: 0 }));
      return found;
    },
    described: (): LabeledSeries => ({ name: config.name, help: config.help, labelNames, series: () => values.values() }),
  };
}

/**
 * A counter in memory. Every combination of known values starts at 0, so that `rate()` and
 * alerts see a series before its first event.
 */
export function labeledCounter<L extends Labels>(config: MetricConfig<L>): LabeledCounter<L> & { readonly described: LabeledSeries } {
  const store = seriesStore(config);
  for (const labels of combinations(config.known)) store.entry(labels);
  return {
    inc: (labels, by = 1) => {
      // As prom-client's counters: a counter only goes up.
      if (by < 0) throw new RangeError(`${config.name}: a counter cannot be decreased (inc by ${by})`);
      store.entry(labels).value += by;
    },
    get: async (labels) => store.values.get(keyOf(store.labelNames, labels))?.value ?? 0,
    described: store.described(),
  };
}

/** A gauge in memory. Known combinations are not pre-set: an unset gauge has no value. */
export function labeledGauge<L extends Labels>(config: MetricConfig<L>): LabeledGauge<L> & { readonly described: LabeledSeries } {
  const store = seriesStore(config);
  return {
    set: (labels, value) => {
      store.entry(labels).value = value;
    },
    get: async (labels) => store.values.get(keyOf(store.labelNames, labels))?.value,
    described: store.described(),
  };
}
