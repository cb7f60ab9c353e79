// The value of each signal an alert compares (src/pack/conditions.ts), over one window of a replay, with
// the arithmetic of the recording rules that Prometheus evaluates (src/pack/recording-rules.ts): a rate is
// the increase times 1/seconds (what rate() multiplies by when the samples span the window), a count from
// a rate is that rate times the seconds again, a ratio divides rates. Computed the same way, a comparison
// right at its threshold (6 of 600 above the ceiling is 0.010000000000000009 as rates) comes out as it
// does in Prometheus. undefined where the rule has no value: no series yet, or 0/0 (NaN in Prometheus).
import type { Config } from '../config/schema.js';
import { thresholds } from '../metrics/buckets.js';
import type { SignalRef, SloId } from '../pack/conditions.js';
import { sloById } from '../pack/slos.js';
import { T, type WindowTotals } from './step-totals.js';

/** What every evaluation reads, worked out once: where the ceiling and floor buckets are, each SLO's budget. */
export interface SignalContext {
  bounds: readonly number[];
  ceilingBucket: number;
  floorBucket: number;
  budgets: Readonly<Record<SloId, number>>;
}

export function signalContext(config: Config, bounds: readonly number[]): SignalContext {
  const t = thresholds(config.signals);
  const budget = (id: SloId) => sloById(config, id).budget;
  return { bounds, ceilingBucket: T.buckets + bounds.indexOf(t.ceiling), floorBucket: T.buckets + bounds.indexOf(t.floor), budgets: { 'hit-rate': budget('hit-rate'), latency: budget('latency') } };
}

const ratio = (num: number, den: number): number | undefined => {
  const r = num / den;
  return Number.isNaN(r) ? undefined : r;
};

/** rate(): the increase times the factor 1/seconds, as extrapolatedRate applies it with no extrapolation. */
const rate = (w: WindowTotals, index: number) => w.get(index) * (1 / w.seconds);

/** A signal over window `w`; `cohort` for the canary signals. Before the first line every rule is absent. */
export function signalValue(ref: SignalRef, w: WindowTotals, ctx: SignalContext, cohort?: string): number | undefined {
  if (w.now(T.lines) === 0) return undefined;
  const hitCount = rate(w, T.hitCount);
  switch (ref.signal) {
    case 'hitRate':
      return ratio(rate(w, T.hitRequests), rate(w, T.requests));
    case 'aboveCeiling':
      return ratio(hitCount - rate(w, ctx.ceilingBucket), hitCount);
    case 'atOrBelowFloor':
      return ratio(rate(w, ctx.floorBucket), hitCount);
    case 'degraded':
      return w.get(T.degraded);
    case 'warmupEfficiency':
      return ratio(rate(w, T.warmupHits), rate(w, T.warmup));
    case 'optInMalformed':
      return w.get(T.optInMalformed);
    case 'parseErrorRatio':
      return ratio(rate(w, T.parseErrors), rate(w, T.lines));
    case 'requests':
      return rate(w, T.requests) * w.seconds;
    case 'hitRequests':
      return hitCount * w.seconds;
    case 'warmupOutcomes':
      return rate(w, T.warmup) * w.seconds;
    case 'cohortAboveCeiling':
    case 'cohortHitRequests': {
      const c = cohort === undefined ? undefined : w.cohorts.get(cohort);
      if (c === undefined) return undefined;
      const count = c.count * (1 / w.seconds);
      return ref.signal === 'cohortHitRequests' ? count * w.seconds : ratio(count - c.belowCeiling * (1 / w.seconds), count);
    }
    case 'burnRate':
    case 'sloEvents': {
      const events = ref.slo === 'hit-rate' ? rate(w, T.requests) : hitCount;
      if (ref.signal === 'sloEvents') return events * w.seconds;
      const bad = ref.slo === 'hit-rate' ? rate(w, T.notHitRequests) : hitCount - rate(w, ctx.ceilingBucket);
      const errorRatio = ratio(bad, events);
      return errorRatio === undefined ? undefined : errorRatio / ctx.budgets[ref.slo];
    }
  }
}

/** histogram_quantile over the Zero-Plane buckets' rates, as Prometheus 2.42 computes it (bucketQuantile). */
export function hitQuantile(q: number, w: WindowTotals, bounds: readonly number[]): number | undefined {
  const counts = bounds.map((_, i) => rate(w, T.buckets + i));
  const total = rate(w, T.hitCount);
  return histogramQuantile(q, [...bounds, Infinity], [...counts, total]);
}

/** Prometheus' bucketQuantile on cumulative `counts` per upper bound (the last +Inf). */
function histogramQuantile(q: number, upper: readonly number[], counts: readonly number[]): number | undefined {
  const n = upper.length;
  if (n < 2 || upper[n - 1] !== Infinity) return undefined;
  // ensureMonotonic: a bucket never counts less than the one below it.
  const c = [...counts];
  for (let i = 1; i < n; i++) if ((c[i] as number) < (c[i - 1] as number)) c[i] = c[i - 1] as number;
  const observations = c[n - 1] as number;
  if (!(observations > 0)) return undefined;
  let rank = q * observations;
  let b = 0;
  while (b < n - 1 && (c[b] as number) < rank) b++;
  if (b === n - 1) return upper[n - 2];
  if (b === 0 && (upper[0] as number) <= 0) return upper[0];
  let start = 0;
  let count = c[b] as number;
  if (b > 0) {
    start = upper[b - 1] as number;
    count -= c[b - 1] as number;
    rank -= c[b - 1] as number;
  }
  return start + ((upper[b] as number) - start) * (rank / count);
}
