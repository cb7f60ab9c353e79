// Exact counts, a mergeable quantile sketch and mergeable moments over a set of records. A window is a
// ring of these; `report` uses one over the whole input. Merging never averages averages.
import { LogCollapsingLowestDenseDDSketch } from '@datadog/sketches-js';
import type { Signals } from '../signals/classify.js';

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
    const n = this.n + other.n;
    const delta = other.mean - this.mean;
    this.m2 += other.m2 + (delta * delta * this.n * other.n) / n;
    this.mean += (delta * other.n) / n;
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
