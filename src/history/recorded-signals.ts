// The value of each signal an alert compares (src/pack/conditions.ts), over one window of a replay, as
// Prometheus evaluates the recording rules (src/pack/recording-rules.ts) over an export of it: each
// `sum(rate(…))` is the series' own rates summed in Prometheus' order (series-totals.ts), then the rule's
// own arithmetic on those sums (a ratio divides them, a count from a rate is that rate times the seconds
// again), so a comparison right at its threshold comes out as Prometheus has it, to the last bit.
// undefined where the rule has no value: no rate yet, or 0/0 (NaN in Prometheus).
import type { Config } from '../config/schema.js';
import { thresholds } from '../metrics/buckets.js';
import type { SignalRef, SloId } from '../pack/conditions.js';
import { sloById } from '../pack/slos.js';
import { histogramQuantile } from '../windows/bucket-quantile.js';
import type { Selection, WindowSums } from './series-totals.js';

/** What every evaluation reads, worked out once: where the ceiling and floor buckets are, each SLO's budget. */
export interface SignalContext {
  bounds: readonly number[];
  ceilingBucket: Selection;
  floorBucket: Selection;
  budgets: Readonly<Record<SloId, number>>;
}

export function signalContext(config: Config, bounds: readonly number[]): SignalContext {
  const t = thresholds(config.signals);
  const budget = (id: SloId) => sloById(config, id).budget;
  return { bounds, ceilingBucket: `bucket:${bounds.indexOf(t.ceiling)}`, floorBucket: `bucket:${bounds.indexOf(t.floor)}`, budgets: { 'hit-rate': budget('hit-rate'), latency: budget('latency') } };
}

/** PromQL's binary operators: no result when a side has none. */
const op = (a: number | undefined, b: number | undefined, f: (x: number, y: number) => number): number | undefined => (a === undefined || b === undefined ? undefined : f(a, b));
const minus = (a: number | undefined, b: number | undefined) => op(a, b, (x, y) => x - y);
const times = (a: number | undefined, b: number) => op(a, b, (x, y) => x * y);
/** a / b, undefined for NaN (0/0), which no comparison holds on. */
const ratio = (a: number | undefined, b: number | undefined): number | undefined => {
  const r = op(a, b, (x, y) => x / y);
  return r === undefined || Number.isNaN(r) ? undefined : r;
};
/** `a or on (…) 0 * b`: the rules keep a group at 0 when no series matches a's filter. */
const orZero = (a: number | undefined, b: number | undefined) => a ?? times(b, 0);

/** A signal over window `w`; `cohort` for the canary signals. Before the first line every rule is absent. */
export function signalValue(ref: SignalRef, w: WindowSums, ctx: SignalContext, cohort?: string): number | undefined {
  if (w.linesNow === 0) return undefined;
  const rate = (s: Selection) => w.sum(s, true);
  const increase = (s: Selection) => w.sum(s, false);
  switch (ref.signal) {
    case 'hitRate': {
      const requests = rate('requests');
      return ratio(orZero(rate('hitRequests'), requests), requests);
    }
    case 'aboveCeiling': {
      const count = rate('hitCount');
      return ratio(minus(count, rate(ctx.ceilingBucket)), count);
    }
    case 'atOrBelowFloor':
      return ratio(rate(ctx.floorBucket), rate('hitCount'));
    case 'degraded':
      return increase('degraded');
    case 'warmupEfficiency': {
      const outcomes = rate('warmup');
      return ratio(orZero(rate('warmupHits'), outcomes), outcomes);
    }
    case 'optInMalformed':
      return increase('optInMalformed');
    case 'parseErrorRatio':
      return ratio(rate('parseErrors'), rate('lines'));
    case 'requests':
      return times(rate('requests'), w.seconds);
    case 'hitRequests':
      return times(rate('hitCount'), w.seconds);
    case 'warmupOutcomes':
      return times(rate('warmup'), w.seconds);
    case 'cohortAboveCeiling':
    case 'cohortHitRequests': {
      if (cohort === undefined) return undefined;
      const count = w.sum('hitCount', true, cohort);
      return ref.signal === 'cohortHitRequests' ? times(count, w.seconds) : ratio(minus(count, w.sum(ctx.ceilingBucket, true, cohort)), count);
    }
    case 'burnRate':
    case 'sloErrorRatio':
    case 'sloEvents': {
      const events = ref.slo === 'hit-rate' ? rate('requests') : rate('hitCount');
      if (ref.signal === 'sloEvents') return times(events, w.seconds);
      const bad = ref.slo === 'hit-rate' ? orZero(rate('notHitRequests'), events) : minus(events, rate(ctx.ceilingBucket));
      const errorRatio = ratio(bad, events);
      if (ref.signal === 'sloErrorRatio' || errorRatio === undefined) return errorRatio;
      return errorRatio / ctx.budgets[ref.slo];
    }
  }
}

/** histogram_quantile over the sums by le of the Zero-Plane buckets' rates (+Inf from its own series), as Prometheus 2.42 computes it (bucketQuantile). */
export function hitQuantile(q: number, w: WindowSums, bounds: readonly number[]): number | undefined {
  const counts: number[] = [];
  for (let i = 0; i <= bounds.length; i++) {
    const c = w.sum(`bucket:${i}`, true);
    if (c === undefined) return undefined;
    counts.push(c);
  }
  return histogramQuantile(q, [...bounds, Infinity], counts);
}
