// Histogram bounds derived from the config. The four threshold bounds are always present, exactly, so
// "p99 above the ceiling" is decided from the bucket at the ceiling and never interpolated.
import type { Config } from '../config/schema.js';

/** Rounds away float noise (0.185 × 1.05 = 0.19425000000000003) so the `le` label reads as written. */
function clean(x: number): number {
  return Number(x.toPrecision(12));
}

export interface Thresholds {
  fastTarget: number;
  floor: number;
  baseline: number;
  ceiling: number;
}

export function thresholds(signals: Config['signals']): Thresholds {
  const b = signals.baselineSeconds;
  return {
    fastTarget: clean(signals.fastTargetSeconds),
    floor: clean(b * (1 - signals.tolerance)),
    baseline: clean(b),
    ceiling: clean(b * (1 + signals.tolerance)),
  };
}

/** Default spread around the baseline: finer near it (±2 %, ±10 %), coarse out to 10 s for degraded tails. */
const DEFAULT_SPREAD_RATIOS = [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98, 1.02, 1.1, 1.25, 1.5, 2, 3, 5];
const DEFAULT_TAIL_SECONDS = [2.5, 5, 10];

export function histogramBuckets(config: Config): number[] {
  const t = thresholds(config.signals);
  const extra = config.metrics.histogramBuckets ?? [...DEFAULT_SPREAD_RATIOS.map((r) => config.signals.baselineSeconds * r), ...DEFAULT_TAIL_SECONDS];
  const all = new Set([...extra.map(clean), t.fastTarget, t.floor, t.baseline, t.ceiling]);
  return [...all].sort((a, b) => a - b);
}
