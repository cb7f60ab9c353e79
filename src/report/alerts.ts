// The alert conditions of SPEC §7 that a one-shot report can decide from its own numbers. The rules in
// alerts/ decide the same conditions from Prometheus series, with the same thresholds from the config.
import type { Config } from '../config/schema.js';
import { thresholds } from '../metrics/buckets.js';
import { OVERFLOW_VALUE } from '../metrics/label-limiter.js';
import type { HistogramFamily } from '../metrics/families.js';
import type { SignalValues } from '../windows/summarize.js';

export interface AlertVerdict {
  name: string;
  firing: boolean;
}

export interface AlertInputs {
  values: SignalValues;
  /** zero_plane_request_duration_seconds: the band is decided from its buckets, as the rules do. */
  latency: HistogramFamily;
  malformedOptIn: number;
  lines: number;
  parseErrors: number;
}

export const P0_ALERT = 'ZeroPlaneP0DriftWithDegraded';

export function evaluateAlerts(inputs: AlertInputs, config: Config): AlertVerdict[] {
  const s = config.signals;
  const t = thresholds(s);
  const v = inputs.values;
  const h = inputs.latency;
  // Exact, and the same arithmetic as the rules: p99 > ceiling ⟺ more than 1 % of hits above the ceiling
  // bucket; p99 ≤ floor ⟺ at least 99 % of hits in the floor bucket. The sketch's p99 is only an estimate.
  const above = (where: Record<string, string>) => {
    const { below, count } = h.cumulative(t.ceiling, where);
    return count > 0 && 100 * (count - below) > count;
  };
  const atOrBelowFloor = (where: Record<string, string>) => {
    const { below, count } = h.cumulative(t.floor, where);
    return count > 0 && 100 * below >= 99 * count;
  };
  const hits = { hit: 'true' };
  const aboveCeiling = above(hits);
  const stable = new Set(['', ...s.stableCohorts, OVERFLOW_VALUE]);
  const canaryAbove = h
    .labelValues('cohort', hits)
    .some((cohort) => !stable.has(cohort) && above({ ...hits, cohort }));
  return [
    { name: P0_ALERT, firing: aboveCeiling && v.degradedCount > 0 },
    { name: 'ZeroPlaneP99DriftOutOfBand', firing: aboveCeiling || atOrBelowFloor(hits) },
    { name: 'ZeroPlaneCanaryRollback', firing: canaryAbove },
    { name: 'ZeroPlaneHitRateLow', firing: v.hitRate !== null && v.hitRate < s.hitRateTarget },
    { name: 'ZeroPlaneDegradedRequests', firing: v.degradedCount > 0 },
    { name: 'ZeroPlaneWarmupEfficiencyLow', firing: v.warmupEfficiency !== null && v.warmupEfficiency < s.warmupEfficiencyTarget },
    { name: 'ZeroPlaneOptInHeaderMalformed', firing: inputs.malformedOptIn > 0 },
    { name: 'ZeroPlaneParseErrorsHigh', firing: inputs.lines > 0 && inputs.parseErrors / inputs.lines > s.parseErrorRatioMax },
  ];
}
