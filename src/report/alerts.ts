// The alert conditions of SPEC §7 that a one-shot report can decide from its own numbers. The rules in
// alerts/ decide the same conditions from Prometheus series, with the same thresholds from the config.
import type { Config } from '../config/schema.js';
import { thresholds } from '../metrics/buckets.js';
import type { Aggregate } from '../windows/aggregate.js';
import type { SignalValues } from '../windows/summarize.js';

export interface AlertVerdict {
  name: string;
  firing: boolean;
}

export interface AlertInputs {
  values: SignalValues;
  cohorts: ReadonlyMap<string, Aggregate>;
  malformedOptIn: number;
  lines: number;
  parseErrors: number;
}

export const P0_ALERT = 'ZeroPlaneP0DriftWithDegraded';

export function evaluateAlerts(inputs: AlertInputs, config: Config): AlertVerdict[] {
  const s = config.signals;
  const t = thresholds(s);
  const v = inputs.values;
  // Compare p99 with the bounds themselves: (p99 − b) / b picks up float noise exactly at the ceiling.
  const above = v.p99Seconds !== null && v.p99Seconds > t.ceiling;
  const below = v.p99Seconds !== null && v.p99Seconds < t.floor;
  const stable = new Set(['', ...s.stableCohorts]);
  const canaryAbove = [...inputs.cohorts].some(([cohort, agg]) => {
    if (stable.has(cohort)) return false;
    const p99 = agg.quantile(0.99);
    return p99 !== null && p99 > t.ceiling;
  });
  return [
    { name: P0_ALERT, firing: above && v.degradedCount > 0 },
    { name: 'ZeroPlaneP99DriftOutOfBand', firing: above || below },
    { name: 'ZeroPlaneCanaryRollback', firing: canaryAbove },
    { name: 'ZeroPlaneHitRateLow', firing: v.hitRate !== null && v.hitRate < s.hitRateTarget },
    { name: 'ZeroPlaneDegradedRequests', firing: v.degradedCount > 0 },
    { name: 'ZeroPlaneWarmupEfficiencyLow', firing: v.warmupEfficiency !== null && v.warmupEfficiency < s.warmupEfficiencyTarget },
    { name: 'ZeroPlaneOptInHeaderMalformed', firing: inputs.malformedOptIn > 0 },
    { name: 'ZeroPlaneParseErrorsHigh', firing: inputs.lines > 0 && inputs.parseErrors / inputs.lines > s.parseErrorRatioMax },
  ];
}
