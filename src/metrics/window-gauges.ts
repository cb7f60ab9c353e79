// Per-instance views over the sliding window, recomputed at each scrape. The rules never use these (they
// aggregate the counters and histogram instead); they are for the landing page, dashboards and humans.
import type { Config } from '../config/schema.js';
import type { SlidingWindow } from '../windows/sliding-window.js';
import { summarize } from '../windows/summarize.js';
import { GaugeFamily } from './families.js';

export class WindowGauges {
  readonly hitRate = new GaugeFamily('zero_plane_hit_rate', 'Share of requests in the window served by Zero-Plane (0–1).', []);
  readonly drift = new GaugeFamily('zero_plane_p99_drift', 'Window p99 of Zero-Plane latency against the baseline, as a ratio (0.05 = +5 %).', []);
  readonly degraded = new GaugeFamily('zero_plane_degraded_count', 'Degraded requests in the window.', []);
  readonly warmup = new GaugeFamily('zero_plane_warmup_efficiency', 'Warm-up hits / (hits + misses) over Zero-Plane requests in the window.', []);
  readonly latency = new GaugeFamily('zero_plane_window_latency_seconds', 'Window quantiles of Zero-Plane latency (DDSketch, nearest rank).', ['quantile']);
  readonly stddev = new GaugeFamily('zero_plane_window_latency_stddev_seconds', 'Window standard deviation of Zero-Plane latency.', []);
  readonly requests = new GaugeFamily('zero_plane_window_requests', 'Requests in the window.', []);
  readonly baseline = new GaugeFamily('zero_plane_p99_baseline_seconds', 'Configured p99 baseline of the Zero-Plane layer.', []);
  readonly tolerance = new GaugeFamily('zero_plane_p99_drift_tolerance_ratio', 'Configured drift tolerance (0.05 = ±5 %).', []);

  constructor(
    private readonly window: SlidingWindow,
    private readonly signals: Config['signals'],
  ) {
    this.baseline.set([], signals.baselineSeconds);
    this.tolerance.set([], signals.tolerance);
  }

  /** Recomputes every window gauge; gauges without data are removed, not zeroed. */
  refresh(): void {
    const v = summarize(this.window.snapshot(), this.signals);
    for (const g of [this.hitRate, this.drift, this.degraded, this.warmup, this.latency, this.stddev, this.requests]) g.clear();
    if (v.requests === 0) return;
    this.requests.set([], v.requests);
    this.degraded.set([], v.degradedCount);
    if (v.hitRate !== null) this.hitRate.set([], v.hitRate);
    if (v.p99Drift !== null) this.drift.set([], v.p99Drift);
    if (v.warmupEfficiency !== null) this.warmup.set([], v.warmupEfficiency);
    if (v.stddevSeconds !== null) this.stddev.set([], v.stddevSeconds);
    for (const [q, value] of [
      ['0.5', v.p50Seconds],
      ['0.99', v.p99Seconds],
      ['0.999', v.p999Seconds],
    ] as const) {
      if (value !== null) this.latency.set([q], value);
    }
  }

  families() {
    return [this.hitRate, this.drift, this.degraded, this.warmup, this.latency, this.stddev, this.requests, this.baseline, this.tolerance];
  }
}
