// The series the recording rules read, one by one, as a scrape at each step of a replay would have stored
// them (and as an export backfills them), kept for as many steps as the longest window any alert reads.
// A rule's `sum(rate(x[w]))` is then each series' rate() over its samples in the window, summed in
// Prometheus' order (prometheus-rate.ts): the same float64 operations Prometheus does on the export.
//
// Two rings: the series an SLO window reads (requests, Zero-Plane request counts, the bucket at the
// ceiling) for the longest window; every other series (the other buckets, degraded, warm-up, opt-in,
// lines) for the rate window only. Memory: those series times the steps of their window.
//
// The samples are those of an export whose step divides the backtest's (15 s under 30 s): every series
// from the first step, at 0 until it exists, so a window has a sample at its end and at its start (or
// starts at a 0 sample, where extrapolation stops at once). The count of samples between only enters
// the extrapolation, which then does not apply: the factor is exactly 1 (1/seconds for rate()).
import type { ExporterMetrics } from '../metrics/exporter-metrics.js';
import { OVERFLOW_VALUE } from '../metrics/label-limiter.js';
import { canonicalNumber } from '../metrics/openmetrics.js';
import { compareLabels, extrapolatedRate, storedLabels, type StoredLabels } from './prometheus-rate.js';

/** What a rule selects: a metric with a label filter. `bucket:<i>` is the Zero-Plane bucket at bounds[i] (`+Inf` at bounds.length). */
export type Selection =
  | 'requests'
  | 'hitRequests'
  | 'notHitRequests'
  | 'hitCount'
  | 'degraded'
  | 'warmup'
  | 'warmupHits'
  | 'optInMalformed'
  | 'parseErrors'
  | 'lines'
  | `bucket:${number}`;

/** One stored series: where its values are kept, its labels as the TSDB has them (for the order), its cohort. */
export interface SeriesColumn {
  ring: 0 | 1;
  at: number;
  labels: StoredLabels;
  cohort: string;
}

const LONG = 0;
const SHORT = 1;

/** One window ending at the step now. */
export interface WindowSums {
  seconds: number;
  /**
   * Σ rate() (`perSecond`) or Σ increase() over the window of the selection's series (those `only`
   * keeps), in Prometheus' order; undefined when the window holds fewer than two steps (no series has a
   * rate yet). With no series it is 0: an export writes every series from the first step, at 0 until it exists.
   */
  sum(selection: Selection, perSecond: boolean, only?: (c: SeriesColumn) => boolean): number | undefined;
  /** Lines read up to the step now. */
  linesNow: number;
}

export interface SeriesTotalsOptions {
  bounds: readonly number[];
  ceiling: number;
  stepMs: number;
  longestWindowMs: number;
  rateWindowMs: number;
  stableCohorts: readonly string[];
  /**
   * The names of the target labels every exported series carries (their values are the same on every
   * series, so only their names can change the order).
   */
  targetLabelNames: readonly string[];
}

/** Rows of per-series totals, one per step, `size` kept; a row is as wide as the series were at its step. */
class StepRows {
  private readonly rows: Float64Array[];
  width = 0;
  constructor(readonly size: number) {
    this.rows = new Array<Float64Array>(size);
  }
  put(step: number, row: Float64Array): void {
    this.rows[step % this.size] = row;
  }
  /** The value of column `at` at `step` (0 where the series did not exist yet). */
  get(step: number, at: number): number {
    return (this.rows[step % this.size] as Float64Array)[at] ?? 0;
  }
}

export class SeriesTotals {
  private readonly rings: [StepRows, StepRows];
  private readonly selections = new Map<Selection, SeriesColumn[]>();
  /** Per family series object (stable handles), its columns in the order its values are written. */
  private readonly columnsOf = new Map<object, SeriesColumn[]>();
  private readonly stable: ReadonlySet<string>;
  private readonly ceilingIndex: number;
  private readonly target: readonly (readonly [string, string])[];
  /** Canary cohorts in the order they first appeared. */
  readonly cohorts: string[] = [];
  private pushed = 0;
  private nowMs = 0;
  private lines = 0;

  constructor(private readonly o: SeriesTotalsOptions) {
    this.rings = [new StepRows(o.longestWindowMs / o.stepMs + 1), new StepRows(o.rateWindowMs / o.stepMs + 1)];
    this.ceilingIndex = o.bounds.indexOf(o.ceiling);
    if (this.ceilingIndex < 0) throw new Error(`no histogram bucket at the ceiling ${o.ceiling}`);
    this.stable = new Set(['', ...o.stableCohorts, OVERFLOW_VALUE]);
    // Any value: it is the same on every series. Not empty, which would drop the label.
    this.target = o.targetLabelNames.map((n) => [n, 'target'] as const);
  }

  /** The counters of `metrics` as the step at `timeMs`. */
  push(timeMs: number, metrics: ExporterMetrics): void {
    const long: number[] = [];
    const short: number[] = [];
    const put = (c: SeriesColumn, v: number) => {
      (c.ring === LONG ? long : short)[c.at] = v;
    };
    const scalar = (family: { name: string; labelNames: readonly string[]; eachSeries(): Iterable<{ labels: readonly string[]; value: number }> }, ring: 0 | 1, selectionsOf: (labels: readonly string[]) => Selection[]) => {
      for (const s of family.eachSeries()) {
        let cols = this.columnsOf.get(s);
        if (cols === undefined) {
          const sel = selectionsOf(s.labels);
          cols = sel.length === 0 ? [] : [this.column(ring, `${family.name}`, family.labelNames, s.labels, undefined, '', sel)];
          this.columnsOf.set(s, cols);
        }
        for (const c of cols) put(c, s.value);
      }
    };
    const m = metrics;
    scalar(m.requests, LONG, (l) => ['requests', l[0] === 'true' ? 'hitRequests' : 'notHitRequests']);
    const n = this.o.bounds.length;
    const d = m.duration;
    for (const s of d.eachSeries()) {
      let cols = this.columnsOf.get(s);
      if (cols === undefined) {
        cols = [];
        if (s.labels[0] === 'true') {
          const cohort = s.labels[3] as string;
          if (!this.stable.has(cohort) && !this.cohorts.includes(cohort)) this.cohorts.push(cohort);
          cols.push(this.column(LONG, `${d.name}_count`, d.labelNames, s.labels, undefined, cohort, ['hitCount']));
          for (let i = 0; i <= n; i++) {
            const le = i === n ? '+Inf' : canonicalNumber(this.o.bounds[i] as number);
            cols.push(this.column(i === this.ceilingIndex ? LONG : SHORT, `${d.name}_bucket`, d.labelNames, s.labels, le, cohort, [`bucket:${i}`]));
          }
        }
        this.columnsOf.set(s, cols);
      }
      if (cols.length === 0) continue;
      put(cols[0] as SeriesColumn, s.count);
      let acc = 0;
      for (let i = 0; i < n; i++) put(cols[i + 1] as SeriesColumn, (acc += s.counts[i] as number));
      put(cols[n + 1] as SeriesColumn, s.count);
    }
    scalar(m.degraded, SHORT, () => ['degraded']);
    scalar(m.warmup, SHORT, (l) => (l[0] === 'hit' ? ['warmup', 'warmupHits'] : ['warmup']));
    scalar(m.optIn, SHORT, (l) => (l[0] === 'malformed' ? ['optInMalformed'] : []));
    scalar(m.parseErrors, SHORT, () => ['parseErrors']);
    let lines = 0;
    for (const s of m.lines.eachSeries()) lines += s.value;
    scalar(m.lines, SHORT, () => ['lines']);
    this.rings[LONG].put(this.pushed, Float64Array.from(long, (v) => v ?? 0));
    this.rings[SHORT].put(this.pushed, Float64Array.from(short, (v) => v ?? 0));
    this.pushed++;
    this.nowMs = timeMs;
    this.lines = lines;
  }

  private column(ring: 0 | 1, name: string, labelNames: readonly string[], values: readonly string[], le: string | undefined, cohort: string, selections: Selection[]): SeriesColumn {
    const pairs: (readonly [string, string])[] = [['__name__', name], ...this.target, ...labelNames.map((k, i) => [k, values[i] as string] as const)];
    if (le !== undefined) pairs.push(['le', le]);
    const rows = this.rings[ring];
    const c: SeriesColumn = { ring, at: rows.width++, labels: storedLabels(pairs), cohort };
    for (const sel of selections) {
      let list = this.selections.get(sel);
      if (list === undefined) this.selections.set(sel, (list = []));
      list.push(c);
      // New series are rare (label values are bounded): sorting again on each keeps the order exact.
      list.sort((a, b) => compareLabels(a.labels, b.labels));
    }
    return c;
  }

  /** The window of `windowMs` (a multiple of the step) ending at the step now. */
  window(windowMs: number): WindowSums {
    const stepMs = this.o.stepMs;
    const steps = windowMs / stepMs;
    const now = this.pushed - 1;
    // The timeline starts at the first step: a window reaching before it has fewer samples.
    const back = Math.min(steps, now);
    const endMs = this.nowMs;
    const startMs = endMs - windowMs;
    const firstMs = endMs - back * stepMs;
    const rings = this.rings;
    return {
      seconds: windowMs / 1000,
      linesNow: this.lines,
      sum: (selection, perSecond, only) => {
        if (back < 1) return undefined;
        let total: number | undefined;
        for (const c of this.selections.get(selection) ?? []) {
          if (only !== undefined && !only(c)) continue;
          const rows = rings[c.ring];
          if (steps >= rows.size) throw new Error(`${selection} is kept for ${((rows.size - 1) * stepMs) / 1000} s, not ${windowMs / 1000} s`);
          const samples = { firstMs, first: rows.get(now - back, c.at), lastMs: endMs, last: rows.get(now, c.at), count: back + 1 };
          const r = extrapolatedRate(samples, startMs, endMs, perSecond) as number;
          // PromQL's sum: the first series' value, then each next one added to it.
          total = total === undefined ? r : total + r;
        }
        return total ?? 0;
      },
    };
  }
}
