// Exact counts, a mergeable quantile sketch and mergeable moments over a set of records. A window is a
// ring of these; `report` uses one over the whole input. Merging never averages averages.
import { LogCollapsingLowestDenseDDSketch } from '@datadog/sketches-js';
import type { Signals } from '../signals/classify.js';

/**
 * An Aggregate as plain data that crosses threads (`report` on two threads): the counts, the moments and
 * the sketch's non-empty bins by key. protobufjs (toProto/fromProto) is not a dependency, so the bins
 * travel as numbers and are rebuilt with the same mapping (see mergeState).
 */
export interface AggregateState {
  requests: number;
  hits: number;
  degraded: number;
  warmupHits: number;
  warmupMisses: number;
  moments: { n: number; mean: number; m2: number };
  sketch: SketchState;
}

export interface SketchState {
  /** [key, count] of every non-empty bin of positive values. */
  bins: [number, number][];
  /** [key, count] of every non-empty bin of negative values (latencies are never negative, but stay exact). */
  negativeBins: [number, number][];
  zeroCount: number;
  count: number;
  min: number;
  max: number;
  sum: number;
}

/** Bounds sketch memory against hostile latencies (1e-300 s…); collapsing the lowest bins keeps the tail exact. */
const SKETCH_BIN_LIMIT = 4096;

export class Aggregate {
  requests = 0;
  hits = 0;
  degraded = 0;
  warmupHits = 0;
  warmupMisses = 0;
  /** Hit-request latencies, seconds. */
  sketch: LogCollapsingLowestDenseDDSketch;
  // Welford / Chan moments of hit latencies, for σ without keeping samples.
  private n = 0;
  private mean = 0;
  private m2 = 0;

  constructor(readonly relativeAccuracy: number) {
    this.sketch = new LogCollapsingLowestDenseDDSketch({ relativeAccuracy, binLimit: SKETCH_BIN_LIMIT });
  }

  add(signals: Signals, latencySeconds: number): void {
    this.requests++;
    if (signals.degraded) this.degraded++;
    if (!signals.hit) return;
    this.hits++;
    if (signals.warmup === 'hit') this.warmupHits++;
    else if (signals.warmup === 'miss') this.warmupMisses++;
    this.sketch.accept(latencySeconds);
    this.n++;
    const delta = latencySeconds - this.mean;
    this.mean += delta / this.n;
    this.m2 += delta * (latencySeconds - this.mean);
  }

  merge(other: Aggregate): void {
    this.requests += other.requests;
    this.hits += other.hits;
    this.degraded += other.degraded;
    this.warmupHits += other.warmupHits;
    this.warmupMisses += other.warmupMisses;
    if (other.n === 0) return;
    this.sketch.merge(other.sketch);
    this.mergeMoments(other.n, other.mean, other.m2);
  }

  /** This aggregate as plain data (structured-clone safe). */
  state(): AggregateState {
    const sk = this.sketch;
    return {
      requests: this.requests,
      hits: this.hits,
      degraded: this.degraded,
      warmupHits: this.warmupHits,
      warmupMisses: this.warmupMisses,
      moments: { n: this.n, mean: this.mean, m2: this.m2 },
      sketch: { bins: binsOf(sk.store), negativeBins: binsOf(sk.negativeStore), zeroCount: sk.zeroCount, count: sk.count, min: sk.min, max: sk.max, sum: sk.sum },
    };
  }

  /**
   * Adds an aggregate taken with state(), exactly as merge() would add the Aggregate itself. Throws if a bin
   * would not land on its own key again (it always does with the same relativeAccuracy: proven in
   * test/live/cli/report-parallel.test.ts).
   */
  mergeState(other: AggregateState): void {
    this.requests += other.requests;
    this.hits += other.hits;
    this.degraded += other.degraded;
    this.warmupHits += other.warmupHits;
    this.warmupMisses += other.warmupMisses;
    if (other.moments.n === 0) return;
    this.sketch.merge(sketchFromState(other.sketch, this.relativeAccuracy));
    this.mergeMoments(other.moments.n, other.moments.mean, other.moments.m2);
  }

  /** Chan et al.: combines the moments of two disjoint sets of samples. */
  private mergeMoments(otherN: number, otherMean: number, otherM2: number): void {
    if (otherN === 0) return;
    const n = this.n + otherN;
    const delta = otherMean - this.mean;
    this.m2 += otherM2 + (delta * delta * this.n * otherN) / n;
    this.mean += (delta * otherN) / n;
    this.n = n;
  }

  /** Nearest-rank quantile of hit latencies (the value at rank ⌈q·n⌉), or null with no hits. */
  quantile(q: number): number | null {
    const n = this.sketch.count;
    if (n === 0) return null;
    // DDSketch looks up rank q·(n−1) (0-based); map the nearest rank onto that convention.
    const rank = Math.max(1, Math.ceil(q * n)) - 1;
    const value = this.sketch.getValueAtQuantile(n === 1 ? 0 : rank / (n - 1));
    // The sketch returns a bin's representative value; the true value never leaves [min, max].
    return Math.min(Math.max(value, this.sketch.min), this.sketch.max);
  }

  /** Population standard deviation of hit latencies, or null with no hits. */
  stddev(): number | null {
    return this.n === 0 ? null : Math.sqrt(this.m2 / this.n);
  }
}

/** The store's fields as @datadog/sketches-js 2.x keeps them (DenseStore: bins[i] counts key offset + i). */
interface DenseStoreFields {
  bins: number[];
  offset: number;
}

function binsOf(store: unknown): [number, number][] {
  const { bins, offset } = store as DenseStoreFields;
  const out: [number, number][] = [];
  for (let i = 0; i < bins.length; i++) if ((bins[i] as number) > 0) out.push([offset + i, bins[i] as number]);
  return out;
}

/**
 * A sketch holding exactly the bins of `s`: each bin's representative value is accepted with the bin's
 * count as weight, which the same mapping puts back on the same key (checked per bin). The summary fields
 * accept() would have set from representative values are then set to the originals.
 */
export function sketchFromState(s: SketchState, relativeAccuracy: number): LogCollapsingLowestDenseDDSketch {
  const sketch = new LogCollapsingLowestDenseDDSketch({ relativeAccuracy, binLimit: SKETCH_BIN_LIMIT });
  const mapping = sketch.mapping;
  for (const [sign, bins] of [
    [1, s.bins],
    [-1, s.negativeBins],
  ] as const) {
    for (const [key, count] of bins) {
      const value = mapping.value(key);
      if (mapping.key(value) !== key) throw new Error(`sketch bin ${key} does not map back onto itself`);
      sketch.accept(sign * value, count);
    }
  }
  if (s.zeroCount > 0) sketch.accept(0, s.zeroCount);
  sketch.count = s.count;
  sketch.min = s.min;
  sketch.max = s.max;
  sketch.sum = s.sum;
  return sketch;
}
