// What the recording rules add up, taken from the exporter's counters and histogram after each step of a
// replay, and kept for as many steps as the longest window any alert reads. A rule's increase over a
// window is then the total now minus the total one window ago: what Prometheus computes from samples
// taken at every step (and what an export backfills), where no extrapolation applies (docs/history.md).
import type { ExporterMetrics } from '../metrics/exporter-metrics.js';
import { OVERFLOW_VALUE } from '../metrics/label-limiter.js';

/** Indices into a totals vector; the hit buckets (cumulative, one per bound) follow BUCKETS. */
export const T = {
  /** zero_plane_requests_total */
  requests: 0,
  /** zero_plane_requests_total{hit="true"} */
  hitRequests: 1,
  /** zero_plane_requests_total{hit="false"} */
  notHitRequests: 2,
  /** zero_plane_request_duration_seconds_count{hit="true"} */
  hitCount: 3,
  degraded: 4,
  warmup: 5,
  warmupHits: 6,
  /** zero_plane_opt_in_header_total{state="malformed"} */
  optInMalformed: 7,
  parseErrors: 8,
  lines: 9,
  /** zero_plane_request_duration_seconds_bucket{hit="true", le=bounds[i]} at BUCKETS + i */
  buckets: 10,
} as const;

/** A canary cohort's Zero-Plane requests and those at or under the ceiling. */
export interface CohortTotals {
  count: number;
  belowCeiling: number;
}

/** Totals over a window: now minus one window ago (zero before the timeline began: every counter started at 0). */
export interface WindowTotals {
  seconds: number;
  get(index: number): number;
  /** The total at the step now (not a difference). */
  now(index: number): number;
  /** Canary cohorts only (not stable, not empty, not __other__), for the rate window only. */
  cohorts: ReadonlyMap<string, CohortTotals>;
}

export class StepTotalsRing {
  readonly width: number;
  private readonly ring: Float64Array;
  private readonly cohortRing: Map<string, CohortTotals>[];
  /** Steps kept: the longest window in steps, plus the step now. */
  private readonly size: number;
  private readonly cohortSize: number;
  /** Steps pushed so far. */
  private pushed = 0;
  private readonly ceilingIndex: number;
  private readonly stable: ReadonlySet<string>;

  constructor(
    private readonly bounds: readonly number[],
    ceiling: number,
    private readonly stepMs: number,
    longestWindowMs: number,
    private readonly rateWindowMs: number,
    stableCohorts: readonly string[],
  ) {
    this.width = T.buckets + bounds.length;
    this.size = longestWindowMs / stepMs + 1;
    this.cohortSize = rateWindowMs / stepMs + 1;
    this.ring = new Float64Array(this.size * this.width);
    this.cohortRing = Array.from({ length: this.cohortSize }, () => new Map());
    this.ceilingIndex = bounds.indexOf(ceiling);
    if (this.ceilingIndex < 0) throw new Error(`no histogram bucket at the ceiling ${ceiling}`);
    this.stable = new Set(['', ...stableCohorts, OVERFLOW_VALUE]);
  }

  /** Takes the totals of `metrics` as the step now. */
  push(metrics: ExporterMetrics): void {
    const at = (this.pushed % this.size) * this.width;
    const v = this.ring;
    v.fill(0, at, at + this.width);
    const add = (index: number, x: number) => {
      v[at + index] = (v[at + index] as number) + x;
    };
    for (const s of metrics.requests.eachSeries()) {
      add(T.requests, s.value);
      add(s.labels[0] === 'true' ? T.hitRequests : T.notHitRequests, s.value);
    }
    const cohorts = new Map<string, CohortTotals>();
    const n = this.bounds.length;
    for (const s of metrics.duration.eachSeries()) {
      if (s.labels[0] !== 'true') continue;
      add(T.hitCount, s.count);
      let acc = 0;
      let belowCeiling = 0;
      for (let i = 0; i < n; i++) {
        acc += s.counts[i] as number;
        add(T.buckets + i, acc);
        if (i === this.ceilingIndex) belowCeiling = acc;
      }
      const cohort = s.labels[3] as string;
      if (this.stable.has(cohort)) continue;
      const c = cohorts.get(cohort);
      if (c === undefined) cohorts.set(cohort, { count: s.count, belowCeiling });
      else {
        c.count += s.count;
        c.belowCeiling += belowCeiling;
      }
    }
    for (const s of metrics.degraded.eachSeries()) add(T.degraded, s.value);
    for (const s of metrics.warmup.eachSeries()) {
      add(T.warmup, s.value);
      if (s.labels[0] === 'hit') add(T.warmupHits, s.value);
    }
    for (const s of metrics.optIn.eachSeries()) if (s.labels[0] === 'malformed') add(T.optInMalformed, s.value);
    for (const s of metrics.parseErrors.eachSeries()) add(T.parseErrors, s.value);
    for (const s of metrics.lines.eachSeries()) add(T.lines, s.value);
    this.cohortRing[this.pushed % this.cohortSize] = cohorts;
    this.pushed++;
  }

  /** The totals over the `windowMs` before the step now (a multiple of the step, at most the longest window). */
  window(windowMs: number): WindowTotals {
    const steps = windowMs / this.stepMs;
    const now = this.pushed - 1;
    const then = now - steps;
    const at = (now % this.size) * this.width;
    const from = then < 0 ? -1 : (then % this.size) * this.width;
    const v = this.ring;
    const cohorts = new Map<string, CohortTotals>();
    if (windowMs === this.rateWindowMs) {
      const past = then < 0 ? undefined : this.cohortRing[then % this.cohortSize];
      for (const [cohort, c] of this.cohortRing[now % this.cohortSize] as Map<string, CohortTotals>) {
        const p = past?.get(cohort);
        cohorts.set(cohort, { count: c.count - (p?.count ?? 0), belowCeiling: c.belowCeiling - (p?.belowCeiling ?? 0) });
      }
    }
    return {
      seconds: windowMs / 1000,
      get: (index) => (v[at + index] as number) - (from < 0 ? 0 : (v[from + index] as number)),
      now: (index) => v[at + index] as number,
      cohorts,
    };
  }
}
