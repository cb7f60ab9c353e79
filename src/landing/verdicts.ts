// Healthy or not, per signal, by the config's thresholds (docs/contract.md §4), with the same rules as `report`:
// no data is its own verdict, never "healthy".
import type { Config } from '../config/schema.js';
import { thresholds, type Thresholds } from '../metrics/buckets.js';
import type { SignalValues } from '../windows/summarize.js';

export type Verdict = 'healthy' | 'unhealthy' | 'nodata';

export interface Verdicts {
  hitRate: Verdict;
  p99Drift: Verdict;
  degraded: Verdict;
  warmupEfficiency: Verdict;
  /** The P0 condition: p99 above the band's ceiling and degraded requests, at the same time. */
  p0: boolean;
}

export interface LandingThresholds extends Thresholds {
  tolerance: number;
  hitRateTarget: number;
  warmupEfficiencyTarget: number;
  windowSeconds: number;
}

export function landingThresholds(config: Config): LandingThresholds {
  const s = config.signals;
  return {
    ...thresholds(s),
    tolerance: s.tolerance,
    hitRateTarget: s.hitRateTarget,
    warmupEfficiencyTarget: s.warmupEfficiencyTarget,
    windowSeconds: config.window.duration / 1000,
  };
}

const judge = (healthy: boolean | null): Verdict => (healthy === null ? 'nodata' : healthy ? 'healthy' : 'unhealthy');

export function verdicts(v: SignalValues, signals: Config['signals']): Verdicts {
  const t = thresholds(signals);
  const p99 = v.p99Seconds;
  return {
    hitRate: judge(v.hitRate === null ? null : v.hitRate >= signals.hitRateTarget),
    // The band is the one the rules use: p99 within [floor, ceiling] (baseline ± tolerance).
    p99Drift: judge(p99 === null ? null : p99 >= t.floor && p99 <= t.ceiling),
    degraded: judge(v.requests === 0 ? null : v.degradedCount === 0),
    warmupEfficiency: judge(v.warmupEfficiency === null ? null : v.warmupEfficiency >= signals.warmupEfficiencyTarget),
    p0: p99 !== null && p99 > t.ceiling && v.degradedCount > 0,
  };
}
