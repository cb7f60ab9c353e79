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

/** Where the Zero-Plane p99 sits against the drift band: above the ceiling, at or below the floor, within; null with no hits. */
export type P99Band = 'too_slow' | 'too_fast' | 'in_band' | null;

// Exact, and the same arithmetic as the rules: p99 > ceiling ⟺ more than 1 % of hits above the ceiling
// bucket; p99 ≤ floor ⟺ at least 99 % of hits in the floor bucket. The sketch's p99 is only an estimate.
function aboveCeiling(h: HistogramFamily, ceiling: number, where: Record<string, string>): boolean {
  const { below, count } = h.cumulative(ceiling, where);
  return count > 0 && 100 * (count - below) > count;
}

function atOrBelowFloor(h: HistogramFamily, floor: number, where: Record<string, string>): boolean {
  const { below, count } = h.cumulative(floor, where);
  return count > 0 && 100 * below >= 99 * count;
}

const HITS = { hit: 'true' };

/** The band verdict of the hit latencies, decided from the buckets exactly as ZeroPlaneP99DriftOutOfBand is. */
export function p99Band(latency: HistogramFamily, config: Config): P99Band {
  const t = thresholds(config.signals);
  if (latency.cumulative(t.ceiling, HITS).count === 0) return null;
  if (aboveCeiling(latency, t.ceiling, HITS)) return 'too_slow';
  return atOrBelowFloor(latency, t.floor, HITS) ? 'too_fast' : 'in_band';
}

export function evaluateAlerts(inputs: AlertInputs, config: Config): AlertVerdict[] {
  const s = config.signals;
  const t = thresholds(s);
  const v = inputs.values;
  const h = inputs.latency;
  const above = (where: Record<string, string>) => aboveCeiling(h, t.ceiling, where);
  const hits = HITS;
  const band = p99Band(h, config);
  const stable = new Set(['', ...s.stableCohorts, OVERFLOW_VALUE]);
  const canaryAbove = h
    .labelValues('cohort', hits)
    .some((cohort) => !stable.has(cohort) && above({ ...hits, cohort }));
  // Keyed by name, so TypeScript insists every condition of REPORT_ALERTS is decided.
  const firing: Record<ReportAlert, boolean> = {
    [P0_ALERT]: band === 'too_slow' && v.degradedCount > 0,
    ZeroPlaneP99DriftOutOfBand: band === 'too_slow' || band === 'too_fast',
    ZeroPlaneCanaryRollback: canaryAbove,
    ZeroPlaneHitRateLow: v.hitRate !== null && v.hitRate < s.hitRateTarget,
    ZeroPlaneDegradedRequests: v.degradedCount > 0,
    ZeroPlaneWarmupEfficiencyLow: v.warmupEfficiency !== null && v.warmupEfficiency < s.warmupEfficiencyTarget,
    ZeroPlaneOptInHeaderMalformed: inputs.malformedOptIn > 0,
    ZeroPlaneParseErrorsHigh: inputs.lines > 0 && inputs.parseErrors / inputs.lines > s.parseErrorRatioMax,
  };
  return REPORT_ALERTS.map((name) => ({ name, firing: firing[name] }));
}
