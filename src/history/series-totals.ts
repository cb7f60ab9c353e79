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
  'durationSum' | 'durationCount' | 'requests' | 'hitRequests' | 'notHitRequests' | 'hitCount' | 'degraded' | 'warmup' | 'warmupHits' | 'optInMalformed' | 'parseErrors' | 'lines' | `bucket:${number}`;

type Family = { name: string; labelNames: readonly string[]; eachSeries(): Iterable<{ labels: readonly string[]; value: number }> };

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
   * Σ rate() (`perSecond`) or Σ increase() over the window of the selection's series (of one cohort if
   * given), in Prometheus' order; undefined when the window holds fewer than two steps (no series has a
   * rate yet). With no series it is 0: an export writes every series from the first step, at 0 until it
   * exists. Worked out once per window and step: every alert reads the same sums.
   */
  sum(selection: Selection, perSecond: boolean, cohort?: string): number | undefined;
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
  /** Also keep every request's latency _sum and _count (hit or not) for the rate window: the naive mean-latency alert. */
  naive?: boolean;
}

/** Rows of per-series totals, one per step, `size` kept; a row is as wide as the series were at its step. */
class StepRows {
  private readonly rows: (Float64Array | undefined)[];
  width = 0;
  constructor(readonly size: number) {
    this.rows = new Array<Float64Array | undefined>(size);
  }
  /** The row of `step`, zeroed: the buffer of the step it replaces when as wide (no garbage per step). */
  take(step: number): Float64Array {
    const old = this.rows[step % this.size];
    const row = old !== undefined && old.length === this.width ? old.fill(0) : new Float64Array(this.width);
    this.rows[step % this.size] = row;
    return row;
  }
  row(step: number): Float64Array {
    return this.rows[step % this.size] as Float64Array;
  }
}

export class SeriesTotals {
  private readonly rings: [StepRows, StepRows];
  private readonly selections = new Map<Selection, SeriesColumn[]>();
  /** Per family series object (stable handles), its columns in the order its values are written. */
  private readonly columnsOf = new Map<object, SeriesColumn[]>();
  /** Per latency series, its _sum and _count columns (with SeriesTotalsOptions.naive). */
  private readonly naiveOf = new Map<object, readonly [SeriesColumn, SeriesColumn]>();
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
    const m = metrics;
    const n = this.o.bounds.length;
    // Columns first (a new series gets its own), so the step's rows are allocated at their final width.
    const scalars: [Family, 0 | 1, (labels: readonly string[]) => Selection[]][] = [
      [m.requests, LONG, (l) => ['requests', l[0] === 'true' ? 'hitRequests' : 'notHitRequests']],
      [m.degraded, SHORT, () => ['degraded']],
      [m.warmup, SHORT, (l) => (l[0] === 'hit' ? ['warmup', 'warmupHits'] : ['warmup'])],
      [m.optIn, SHORT, (l) => (l[0] === 'malformed' ? ['optInMalformed'] : [])],
      [m.parseErrors, SHORT, () => ['parseErrors']],
      [m.lines, SHORT, () => ['lines']],
    ];
    for (const [family, ring, selectionsOf] of scalars) {
      for (const s of family.eachSeries()) {
        if (this.columnsOf.has(s)) continue;
        const sel = selectionsOf(s.labels);
        this.columnsOf.set(s, sel.length === 0 ? [] : [this.column(ring, family.name, family.labelNames, s.labels, undefined, '', sel)]);
      }
    }
    const d = m.duration;
    for (const s of d.eachSeries()) {
      if (this.columnsOf.has(s)) continue;
      const cols: SeriesColumn[] = [];
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
      if (this.o.naive === true) {
        this.naiveOf.set(s, [
          this.column(SHORT, `${d.name}_sum`, d.labelNames, s.labels, undefined, cohortOf(s.labels), ['durationSum']),
          this.column(SHORT, `${d.name}_count`, d.labelNames, s.labels, undefined, cohortOf(s.labels), ['durationCount']),
        ]);
      }
    }
    const rows = [this.rings[LONG].take(this.pushed), this.rings[SHORT].take(this.pushed)] as const;
    const put = (c: SeriesColumn, v: number) => {
      (rows[c.ring] as Float64Array)[c.at] = v;
    };
    for (const [family] of scalars) for (const s of family.eachSeries()) for (const c of this.columnsOf.get(s) as SeriesColumn[]) put(c, s.value);
    for (const s of d.eachSeries()) {
      const naive = this.naiveOf.get(s);
      if (naive !== undefined) {
        put(naive[0], s.sum);
        put(naive[1], s.count);
      }
      const cols = this.columnsOf.get(s) as SeriesColumn[];
      if (cols.length === 0) continue;
      put(cols[0] as SeriesColumn, s.count);
      let acc = 0;
      for (let i = 0; i < n; i++) put(cols[i + 1] as SeriesColumn, (acc += s.counts[i] as number));
      put(cols[n + 1] as SeriesColumn, s.count);
    }
    let lines = 0;
    for (const s of m.lines.eachSeries()) lines += s.value;
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
    const samples = { firstMs: endMs - back * stepMs, first: 0, lastMs: endMs, last: 0, count: back + 1 };
    // Each ring's rows at both ends (a row is shorter than the ring when series came after it: those are 0).
    const kept = this.rings.map((r) => steps < r.size);
    const ends = back < 1 ? undefined : this.rings.map((r) => [r.row(now - back), r.row(now)] as const);
    const sum = (selection: Selection, perSecond: boolean, cohort?: string): number | undefined => {
      if (ends === undefined) return undefined;
      let total: number | undefined;
      for (const c of this.selections.get(selection) ?? []) {
        if (cohort !== undefined && c.cohort !== cohort) continue;
        if (!kept[c.ring]) throw new Error(`${selection} is not kept for ${windowMs / 1000} s`);
        const [then, at] = ends[c.ring] as readonly [Float64Array, Float64Array];
        samples.first = then[c.at] ?? 0;
        samples.last = at[c.at] ?? 0;
        // A series that did not move adds 0 (its rate is 0 × a finite factor), which changes no sum: skipped.
        if (samples.last === samples.first) {
          total ??= 0;
          continue;
        }
        const r = extrapolatedRate(samples, startMs, endMs, perSecond) as number;
        // PromQL's sum: the first series' value, then each next one added to it.
        total = total === undefined ? r : total + r;
      }
      return total ?? 0;
    };
    const rates = new Map<Selection, number | undefined>();
    const increases = new Map<Selection, number | undefined>();
    return {
      seconds: windowMs / 1000,
      linesNow: this.lines,
      sum: (selection, perSecond, cohort) => {
        // The canary's per-cohort sums are read once per cohort: not worth a key.
        if (cohort !== undefined) return sum(selection, perSecond, cohort);
        const known = perSecond ? rates : increases;
        let v = known.get(selection);
        if (v === undefined && !known.has(selection)) known.set(selection, (v = sum(selection, perSecond)));
        return v;
      },
    };
  }
}

/** The cohort label of a latency series (hit, model, route, cohort). */
const cohortOf = (labels: readonly string[]) => labels[3] as string;
