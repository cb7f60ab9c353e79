// Plain labelled counters, gauges and histograms for the per-line hot path: a Map lookup and an add,
// no prom-client objects. They are turned into exposition only at scrape time (see registry.ts).

export interface ExposedValue {
  value: number;
  labels: Record<string, string>;
  metricName?: string;
}

export interface ExposedFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: ExposedValue[];
}

const SEP = '\u001f';

interface Series {
  labels: readonly string[];
  value: number;
}

abstract class ScalarFamily {
  protected readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    private readonly type: 'counter' | 'gauge',
  ) {}

  /** The current value of one series (0 when it was never touched). */
  get(values: readonly string[]): number {
    return this.series.get(values.join(SEP))?.value ?? 0;
  }

  /** Sum over every series whose labels match the given subset. */
  sum(where: Record<string, string> = {}): number {
    let total = 0;
    const idx = Object.entries(where).map(([k, v]) => [this.labelNames.indexOf(k), v] as const);
    for (const s of this.series.values()) if (idx.every(([i, v]) => s.labels[i] === v)) total += s.value;
    return total;
  }

  /** Every series as label values → value. */
  entries(): [readonly string[], number][] {
    return [...this.series.values()].map((s) => [s.labels, s.value]);
  }

  /** Drops every series, so a gauge with nothing to say is absent rather than stale. */
  clear(): void {
    this.series.clear();
  }

  protected cell(values: readonly string[]): Series {
    const key = values.length === 1 ? (values[0] as string) : values.join(SEP);
    let s = this.series.get(key);
    if (s === undefined) {
      s = { labels: [...values], value: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  expose(): ExposedFamily {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values: [...this.series.values()].map((s) => ({ value: s.value, labels: labelObject(this.labelNames, s.labels) })),
    };
  }
}

export class CounterFamily extends ScalarFamily {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, labelNames, 'counter');
  }

  /** Adds `by`; true when this created the series (its first event). */
  inc(values: readonly string[], by = 1): boolean {
    const before = this.series.size;
    this.cell(values).value += by;
    return this.series.size !== before;
  }

  /** Creates the series at 0 so `increase()` sees the first event instead of a new series. */
  touch(values: readonly string[]): void {
    this.cell(values);
  }
}

export class GaugeFamily extends ScalarFamily {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, labelNames, 'gauge');
  }

  set(values: readonly string[], value: number): void {
    this.cell(values).value = value;
  }
}

interface HistogramSeries {
  labels: readonly string[];
  /** Non-cumulative counts per bound; the +Inf overflow is count − sum of these. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class HistogramFamily {
  private readonly series = new Map<string, HistogramSeries>();
  private readonly leLabels: string[];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    this.leLabels = bounds.map(String);
  }

  observe(values: readonly string[], v: number): void {
    const key = values.join(SEP);
    let s = this.series.get(key);
    if (s === undefined) {
      s = { labels: [...values], counts: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    // Binary search for the first bound ≥ v (buckets are `le`, inclusive).
    let lo = 0;
    let hi = this.bounds.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.bounds[mid] as number) < v) lo = mid + 1;
      else hi = mid;
    }
    if (lo < this.bounds.length) (s.counts[lo] as number)++;
    s.sum += v;
    s.count++;
  }

  /** Cumulative count at or below `bound`, and the total count, over the series matching `where`. */
  cumulative(bound: number, where: Record<string, string> = {}): { below: number; count: number } {
    const upto = this.bounds.indexOf(bound);
    if (upto < 0) throw new Error(`${this.name} has no bucket at ${bound}`);
    let below = 0;
    let count = 0;
    for (const s of this.matching(where)) {
      for (let i = 0; i <= upto; i++) below += s.counts[i] as number;
      count += s.count;
    }
    return { below, count };
  }

  /** The distinct values of one label over the series matching `where`. */
  labelValues(label: string, where: Record<string, string> = {}): string[] {
    const i = this.labelNames.indexOf(label);
    return [...new Set(this.matching(where).map((s) => s.labels[i] as string))];
  }

  private matching(where: Record<string, string>): HistogramSeries[] {
    const idx = Object.entries(where).map(([k, v]) => [this.labelNames.indexOf(k), v] as const);
    return [...this.series.values()].filter((s) => idx.every(([i, v]) => s.labels[i] === v));
  }

  expose(): ExposedFamily {
    const values: ExposedValue[] = [];
    for (const s of this.series.values()) {
      const labels = labelObject(this.labelNames, s.labels);
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.counts[i] as number;
        values.push({ value: acc, labels: { ...labels, le: this.leLabels[i] as string }, metricName: `${this.name}_bucket` });
      }
      values.push({ value: s.count, labels: { ...labels, le: '+Inf' }, metricName: `${this.name}_bucket` });
      values.push({ value: s.sum, labels, metricName: `${this.name}_sum` });
      values.push({ value: s.count, labels, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', values };
  }
}

function labelObject(names: readonly string[], values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  names.forEach((n, i) => (out[n] = values[i] as string));
  return out;
}
