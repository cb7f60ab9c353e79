// The alert conditions of SPEC §7 that a one-shot report can decide from its own numbers. The rules in
// alerts/ decide the same conditions from Prometheus series, with the same thresholds from the config.
import type { Config } from '../config/schema.js';
import { thresholds } from '../metrics/buckets.js';
import { OVERFLOW_VALUE } from '../metrics/label-limiter.js';
import { ALERT_NAMES, P0_ALERT } from '../pack/rules.js';
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

export { P0_ALERT };

/** Alerts on the exporter's own health (down, a stalled source): a one-shot report has none to decide. */
const EXPORTER_HEALTH_ALERTS = ['ZeroPlaneExporterDown', 'ZeroPlaneLogSourceStalled'] as const satisfies readonly (typeof ALERT_NAMES)[number][];
type ReportAlert = Exclude<(typeof ALERT_NAMES)[number], (typeof EXPORTER_HEALTH_ALERTS)[number]>;

/** The conditions a report decides, in its output order: the SPEC §7 alerts as the rules list them, but the exporter's health. */
export const REPORT_ALERTS = ALERT_NAMES.filter((name): name is ReportAlert => !(EXPORTER_HEALTH_ALERTS as readonly string[]).includes(name));

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
  // Keyed by name, so TypeScript insists every condition of REPORT_ALERTS is decided.
  const firing: Record<ReportAlert, boolean> = {
    [P0_ALERT]: aboveCeiling && v.degradedCount > 0,
    ZeroPlaneP99DriftOutOfBand: aboveCeiling || atOrBelowFloor(hits),
    ZeroPlaneCanaryRollback: canaryAbove,
    ZeroPlaneHitRateLow: v.hitRate !== null && v.hitRate < s.hitRateTarget,
    ZeroPlaneDegradedRequests: v.degradedCount > 0,
    ZeroPlaneWarmupEfficiencyLow: v.warmupEfficiency !== null && v.warmupEfficiency < s.warmupEfficiencyTarget,
    ZeroPlaneOptInHeaderMalformed: inputs.malformedOptIn > 0,
    ZeroPlaneParseErrorsHigh: inputs.lines > 0 && inputs.parseErrors / inputs.lines > s.parseErrorRatioMax,
  };
  return REPORT_ALERTS.map((name) => ({ name, firing: firing[name] }));
}
