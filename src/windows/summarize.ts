// The four signals (docs/contract.md §4) and the tail statistics, from one Aggregate. Ratios without a denominator
// are null: "no data" must never read as 0 % or 100 %.
import type { Config } from '../config/schema.js';
import type { Aggregate } from './aggregate.js';

export interface SignalValues {
  requests: number;
  hits: number;
  hitRate: number | null;
  p50Seconds: number | null;
  p99Seconds: number | null;
  p999Seconds: number | null;
  stddevSeconds: number | null;
  p99Drift: number | null;
  degradedCount: number;
  warmupEfficiency: number | null;
}

export function summarize(agg: Aggregate, signals: Config['signals']): SignalValues {
  const p99 = agg.quantile(0.99);
  const warm = agg.warmupHits + agg.warmupMisses;
  return {
    requests: agg.requests,
    hits: agg.hits,
    hitRate: agg.requests === 0 ? null : agg.hits / agg.requests,
    p50Seconds: agg.quantile(0.5),
    p99Seconds: p99,
    p999Seconds: agg.quantile(0.999),
    stddevSeconds: agg.stddev(),
    p99Drift: p99 === null ? null : (p99 - signals.baselineSeconds) / signals.baselineSeconds,
    degradedCount: agg.degraded,
    warmupEfficiency: warm === 0 ? null : agg.warmupHits / warm,
  };
}
