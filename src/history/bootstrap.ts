// A seeded percentile bootstrap for two independent samples: each iteration resamples both with replacement
// (mulberry32 from the seed, so the same input and seed give the same interval on any machine) and computes
// every statistic on the pair; the interval is the (1 − confidence)/2 and (1 + confidence)/2 quantiles of
// those values (linear between order statistics). No distribution is assumed, and nothing here is a p-value:
// on samples as tight as Zero-Plane's latencies a test's p-value goes to 0 for differences nobody would act on.
import { createRng } from '../simulate/random.js';

export interface BootstrapOptions {
  iterations: number;
  /** e.g. 0.95 */
  confidence: number;
  seed: number;
}

/** A statistic on the original samples, and its bootstrap interval. */
export interface Interval {
  estimate: number;
  low: number;
  high: number;
}

/** A statistic of two samples (b against a, e.g. σ_b / σ_a). */
export type PairStatistic<T> = (a: readonly T[], b: readonly T[]) => number;

export function bootstrapIntervals<T>(a: readonly T[], b: readonly T[], statistics: readonly PairStatistic<T>[], o: BootstrapOptions): Interval[] {
  if (a.length === 0 || b.length === 0) throw new Error('bootstrap needs two non-empty samples');
  const rng = createRng(o.seed);
  const values = statistics.map(() => new Float64Array(o.iterations));
  const ra: T[] = new Array<T>(a.length);
  const rb: T[] = new Array<T>(b.length);
  for (let i = 0; i < o.iterations; i++) {
    for (let j = 0; j < a.length; j++) ra[j] = a[Math.floor(rng() * a.length)] as T;
    for (let j = 0; j < b.length; j++) rb[j] = b[Math.floor(rng() * b.length)] as T;
    statistics.forEach((stat, k) => ((values[k] as Float64Array)[i] = stat(ra, rb)));
  }
  return statistics.map((stat, k) => {
    // NaN (a statistic undefined on a resample, e.g. 0/0) has no place in an order: left out.
    const sorted = (values[k] as Float64Array).filter((v) => !Number.isNaN(v)).sort();
    return { estimate: stat(a, b), low: quantile(sorted, (1 - o.confidence) / 2), high: quantile(sorted, (1 + o.confidence) / 2) };
  });
}

/** The q-quantile of sorted values, linear between order statistics (Hyndman & Fan type 7); NaN when empty. */
export function quantile(sorted: Float64Array, q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(n - 1, lo + 1);
  return (sorted[lo] as number) + (h - lo) * ((sorted[hi] as number) - (sorted[lo] as number));
}
