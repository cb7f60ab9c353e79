// Plain labelled counters, gauges and histograms for the per-line hot path: a Map lookup and an add,
// no prom-client objects. They are turned into exposition only at scrape time (chunks(), exposition.ts).
// A family given a SeriesLimit never holds more than its maxSeries series plus their overflow series.
import { bucketIndex } from '../windows/bucket-quantile.js';
import { familyHeader, labelText, piecesOf, valueText } from './exposition.js';
import { canonicalNumber, openMetricsFamilyName, openMetricsHeader, openMetricsSeconds, openMetricsValue } from './openmetrics.js';
import { keyOf, SeriesLimit, type SeriesLimitOptions } from './series-limit.js';

/**
 * One series of a counter or gauge. The per-line path resolves it once per label combination and then
 * adds to `value` directly, instead of joining label values into a key and looking it up on every event.
 * Valid for as long as the family is not cleared (the per-line families never are).
 */
export interface SeriesHandle {
  readonly labels: readonly string[];
  value: number;
}

interface Series extends SeriesHandle {
  /**
   * When this process created the series (epoch ms), for OpenMetrics' `_created`; undefined for a series
   * restored from a checkpoint, which continues a count begun before this process.
   */
  created: number | undefined;
}

abstract class ScalarFamily {
  protected readonly series = new Map<string, Series>();
  private readonly lineTexts: LineTexts<Series, string>;
  /** Each series' OpenMetrics line up to its value, and its whole `_created` line (made when a scraper first asks for OpenMetrics). */
  private readonly openMetricsTexts: LineTexts<Series, { line: string; created: string }>;
  /** Undefined: unbounded (families whose labels are all closed sets, such as a build-info gauge). */
  readonly limit: SeriesLimit | undefined;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly type: 'counter' | 'gauge',
    limit?: SeriesLimitOptions,
  ) {
    this.lineTexts = new LineTexts((s) => {
      const labels = labelText(labelNames, s.labels);
      return `\n${name}${labels === '' ? '' : `{${labels}}`} `;
    });
    const family = openMetricsFamilyName(name, type);
    this.openMetricsTexts = new LineTexts((s) => {
      const labels = labelText(labelNames, s.labels);
      const braces = labels === '' ? '' : `{${labels}}`;
      if (type === 'gauge') return { line: `\n${name}${braces} `, created: '' };
      return { line: `\n${family}_total${braces} `, created: s.created === undefined ? '' : `\n${family}_created${braces} ${openMetricsSeconds(s.created)}` };
    });
    this.limit = limit === undefined ? undefined : new SeriesLimit(name, labelNames, limit);
  }

  /** How many series the family holds (overflow series included). */
  get size(): number {
    return this.series.size;
  }

  /** The current value of one series (0 when it was never touched). */
  get(values: readonly string[]): number {
    return this.series.get(keyOf(values))?.value ?? 0;
  }

  /** Whether the series exists (was touched or changed). */
  has(values: readonly string[]): boolean {
    return this.series.has(keyOf(values));
  }

  /**
   * The series, created at 0 if it does not exist yet (like touch). In a full family a new label set gets
   * its overflow series (counted), whose labels say __other__ where these say otherwise.
   */
  handle(values: readonly string[]): SeriesHandle {
    return this.cell(values);
  }

  /** Whether each of these label sets has, or would get, a series of its own (not an overflow series). */
  admits(...labelSets: (readonly string[])[]): boolean {
    return this.limit === undefined || this.limit.admits(this.series, labelSets);
  }

  /** Counts one event sent to an overflow series by the caller (who found admits() false). */
  overflowed(): void {
    this.limit?.overflowed();
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

  /** The series themselves, in the order they were created (new ones come last); read, do not change. */
  eachSeries(): IterableIterator<SeriesHandle> {
    return this.series.values();
  }

  /**
   * Sets series to saved values (a checkpoint), creating them as needed. Handles resolved before or after
   * stay valid: an existing series keeps its object and only its value changes. Rows whose label count
   * does not match this family's are ignored. Rows obey the bounds a line would: label values are cut
   * and limited by the family's limiters, and past maxSeries rows go to their overflow series. Rows that
   * land on one series add up (a gauge keeps the largest: the one restored gauge is a timestamp).
   */
  restore(rows: ReadonlyArray<readonly [readonly string[], number]>): void {
    const restored = new Set<Series>();
    for (const [labels, value] of rows) {
      if (labels.length !== this.labelNames.length) continue;
      const s = this.cell(this.limit?.restoreLabels(labels) ?? labels, false);
      if (!restored.has(s)) s.value = value;
      else s.value = this.type === 'counter' ? s.value + value : Math.max(s.value, value);
      s.created = undefined;
      restored.add(s);
    }
  }

  /** Drops every series, so a gauge with nothing to say is absent rather than stale. */
  clear(): void {
    this.series.clear();
  }

  /** The series of `values`, created if needed; in a full family, a new label set's overflow series. */
  protected cell(values: readonly string[], counted = true): Series {
    let s = this.series.get(keyOf(values));
    if (s === undefined) {
      const overflow = this.limit?.overflowFor(values, this.series.size);
      if (overflow !== undefined) {
        if (counted) this.limit?.overflowed();
        return this.cell(overflow, false);
      }
      s = { labels: [...values], value: 0, created: Date.now() };
      this.series.set(keyOf(values), s);
    }
    return s;
  }

  /** The family in the text format; each series' line up to its value is written once and kept. */
  text(): string {
    return joinChunks(this.chunks());
  }

  /** text() in pieces of about EXPOSITION_CHUNK_CHARS, cut between series: /metrics writes these. */
  chunks(): Generator<string> {
    return piecesOf(familyHeader(this.name, this.help, this.type), this.series.values(), (out, s) => {
      out.add(this.lineTexts.of(s));
      out.add(valueText(s.value));
    });
  }

  /**
   * The family in OpenMetrics 1.0, in pieces like chunks() (no final newline): a counter as `<family>_total`
   * with its `<family>_created` (unless `created` is false), a gauge as itself.
   */
  openMetricsChunks(created = true): Generator<string> {
    return piecesOf(openMetricsHeader(openMetricsFamilyName(this.name, this.type), this.help, this.type), this.series.values(), (out, s) => {
      const t = this.openMetricsTexts.of(s);
      out.add(t.line);
      out.add(openMetricsValue(s.value));
      if (created) out.add(t.created);
    });
  }
}

function joinChunks(chunks: Iterable<string>): string {
  let out = '';
  for (const c of chunks) out += c;
  return out;
}

export class CounterFamily extends ScalarFamily {
  constructor(name: string, help: string, labelNames: readonly string[], limit?: SeriesLimitOptions) {
    super(name, help, labelNames, 'counter', limit);
  }

  /** Adds `by`; true when this created the series (its first event). */
  inc(values: readonly string[], by = 1): boolean {
    const before = this.series.size;
    this.cell(values).value += by;
    return this.series.size !== before;
  }

  /** Creates the series at 0 so `increase()` sees the first event instead of a new series (not an event: never counted as overflow). */
  touch(values: readonly string[]): void {
    this.cell(values, false);
  }
}

export class GaugeFamily extends ScalarFamily {
  constructor(name: string, help: string, labelNames: readonly string[], limit?: SeriesLimitOptions) {
    super(name, help, labelNames, 'gauge', limit);
  }

  set(values: readonly string[], value: number): void {
    this.cell(values).value = value;
  }
}

/** One series of a histogram; like SeriesHandle, the per-line path keeps it and observes into it directly. */
export class HistogramSeries {
  /** Non-cumulative counts per bound; the +Inf overflow is count − sum of these. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  /** When this process created the series (epoch ms), for OpenMetrics' `_created`; undefined when restored. */
  created: number | undefined = Date.now();

  constructor(
    readonly labels: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  /** Counts `v`; returns its bucket (bucketIndex of the bounds), which `report`'s capacity windows reuse. */
  observe(v: number): number {
    const b = bucketIndex(this.bounds, v);
    if (b < this.bounds.length) (this.counts[b] as number)++;
    this.sum += v;
    this.count++;
    return b;
  }
}

/** One histogram series as a checkpoint keeps it. */
export interface HistogramRow {
  labels: readonly string[];
  /** Non-cumulative, one per bound (the +Inf overflow is count minus their sum). */
  counts: readonly number[];
  sum: number;
  count: number;
}

export class HistogramFamily {
  private readonly series = new Map<string, HistogramSeries>();
  /** Per series: its lines up to the value, one per bucket (+Inf last), then _sum and _count. */
  private readonly lineTexts: LineTexts<HistogramSeries, readonly string[]>;
  /** Per series, as OpenMetrics writes it: its lines up to the value (canonical `le`, +Inf, _count, _sum), then its whole `_created` line. */
  private readonly openMetricsTexts: LineTexts<HistogramSeries, { lines: readonly string[]; created: string }>;
  /** Bounds the label sets (each is one series of buckets, _sum and _count). */
  readonly limit: SeriesLimit | undefined;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly bounds: readonly number[],
    limit?: SeriesLimitOptions,
  ) {
    const leLabels = [...bounds.map(String), '+Inf'];
    this.lineTexts = new LineTexts((s) => {
      const labels = labelText(labelNames, s.labels);
      const open = labels === '' ? '{' : `{${labels},`;
      const plain = labels === '' ? '' : `{${labels}}`;
      return [...leLabels.map((le) => `\n${name}_bucket${open}le="${le}"} `), `\n${name}_sum${plain} `, `\n${name}_count${plain} `];
    });
    const openMetricsLe = [...bounds.map(canonicalNumber), '+Inf'];
    this.openMetricsTexts = new LineTexts((s) => {
      const labels = labelText(labelNames, s.labels);
      const open = labels === '' ? '{' : `{${labels},`;
      const plain = labels === '' ? '' : `{${labels}}`;
      return {
        lines: [...openMetricsLe.map((le) => `\n${name}_bucket${open}le="${le}"} `), `\n${name}_count${plain} `, `\n${name}_sum${plain} `],
        created: s.created === undefined ? '' : `\n${name}_created${plain} ${openMetricsSeconds(s.created)}`,
      };
    });
    this.limit = limit === undefined ? undefined : new SeriesLimit(name, labelNames, limit);
  }

  /** How many label sets the family holds (overflow ones included). */
  get size(): number {
    return this.series.size;
  }

  observe(values: readonly string[], v: number): void {
    this.handle(values).observe(v);
  }

  /**
   * The series, created empty if it does not exist yet; it shows in the exposition from then on. In a full
   * family a new label set gets its overflow series (counted).
   */
  handle(values: readonly string[], counted = true): HistogramSeries {
    let s = this.series.get(keyOf(values));
    if (s === undefined) {
      const overflow = this.limit?.overflowFor(values, this.series.size);
      if (overflow !== undefined) {
        if (counted) this.limit?.overflowed();
        return this.handle(overflow, false);
      }
      s = new HistogramSeries([...values], this.bounds);
      this.series.set(keyOf(values), s);
    }
    return s;
  }

  /** Whether each of these label sets has, or would get, a series of its own (not an overflow series). */
  admits(...labelSets: (readonly string[])[]): boolean {
    return this.limit === undefined || this.limit.admits(this.series, labelSets);
  }

  /** Counts one event sent to an overflow series by the caller (who found admits() false). */
  overflowed(): void {
    this.limit?.overflowed();
  }

  /** Whether the series exists. */
  has(values: readonly string[]): boolean {
    return this.series.has(keyOf(values));
  }

  /** The series themselves, in the order they were created (new ones come last); read, do not change. */
  eachSeries(): IterableIterator<HistogramSeries> {
    return this.series.values();
  }

  /** Every series: labels, non-cumulative bucket counts (one per bound), sum and count. */
  entries(): HistogramRow[] {
    return [...this.series.values()].map((s) => ({ labels: s.labels, counts: [...s.counts], sum: s.sum, count: s.count }));
  }

  /**
   * Sets series to saved values (a checkpoint) taken with the same bounds, creating them as needed;
   * handles stay valid. Rows whose label or bucket count does not match are ignored. Rows obey the bounds
   * a line would (cut and limited label values, maxSeries); rows that land on one series add up.
   */
  restore(rows: readonly HistogramRow[]): void {
    const restored = new Set<HistogramSeries>();
    for (const row of rows) {
      if (row.labels.length !== this.labelNames.length || row.counts.length !== this.bounds.length) continue;
      const s = this.handle(this.limit?.restoreLabels(row.labels) ?? row.labels, false);
      s.created = undefined;
      if (!restored.has(s)) {
        s.counts.set(row.counts);
        s.sum = row.sum;
        s.count = row.count;
        restored.add(s);
        continue;
      }
      for (let i = 0; i < row.counts.length; i++) (s.counts[i] as number) += row.counts[i] as number;
      s.sum += row.sum;
      s.count += row.count;
    }
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

  /** The family in the text format (buckets cumulative, then _sum and _count); each line up to its value kept per series. */
  text(): string {
    return joinChunks(this.chunks());
  }

  /** text() in pieces of about EXPOSITION_CHUNK_CHARS, cut between series (a series' buckets stay together). */
  chunks(): Generator<string> {
    const bucketCount = this.bounds.length;
    return piecesOf(familyHeader(this.name, this.help, 'histogram'), this.series.values(), (out, s) => {
      const lines = this.lineTexts.of(s);
      let acc = 0;
      for (let i = 0; i < bucketCount; i++) {
        acc += s.counts[i] as number;
        out.add(lines[i] as string);
        out.add(valueText(acc));
      }
      out.add(lines[bucketCount] as string);
      out.add(valueText(s.count));
      out.add(lines[bucketCount + 1] as string);
      out.add(valueText(s.sum));
      out.add(lines[bucketCount + 2] as string);
      out.add(valueText(s.count));
    });
  }

  /** The family in OpenMetrics 1.0, in pieces like chunks(): canonical `le` values, then _count, _sum and (unless `created` is false) _created. */
  openMetricsChunks(created = true): Generator<string> {
    const bucketCount = this.bounds.length;
    return piecesOf(openMetricsHeader(this.name, this.help, 'histogram'), this.series.values(), (out, s) => {
      const t = this.openMetricsTexts.of(s);
      let acc = 0;
      for (let i = 0; i < bucketCount; i++) {
        acc += s.counts[i] as number;
        out.add(t.lines[i] as string);
        out.add(openMetricsValue(acc));
      }
      out.add(t.lines[bucketCount] as string);
      out.add(openMetricsValue(s.count));
      out.add(t.lines[bucketCount + 1] as string);
      out.add(openMetricsValue(s.count));
      out.add(t.lines[bucketCount + 2] as string);
      out.add(openMetricsValue(s.sum));
      if (created) out.add(t.created);
    });
  }
}

/**
 * Each series' lines up to their values (name, escaped labels, `le`), made on its first exposition and kept:
 * a scrape then only appends values (building every line from its parts was ~2/3 of a scrape at 46k series).
 * Bounded as the series are: one entry per series, dropped with it.
 */
class LineTexts<S extends object, T> {
  private readonly texts = new WeakMap<S, T>();

  constructor(private readonly make: (series: S) => T) {}

  of(series: S): T {
    let t = this.texts.get(series);
    if (t === undefined) {
      t = this.make(series);
      this.texts.set(series, t);
    }
    return t;
  }
}
