// The warnings before a threshold breaks, and the capacity figure: warm-up efficiency sliding below its own
// long-term level while still above signals.warmupEfficiencyTarget, p99 drift creeping up inside the band,
// and the deterministic bandwidth demand (the 24 h maximum of p99 drift times the current request rate).
// Their recording rules follow recording-rules.ts's names over pack.earlyWarning.window (1 h) and
// baselineWindow (7 d); the alerts are ticket-severity PromQL rules (`expr`): `report` does not evaluate
// them, `backtest` does with its own reading of these rules (src/history/backtest.ts earlyWarnings).
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { thresholds } from '../metrics/buckets.js';
import type { AlertSpec } from './conditions.js';
import { pct } from './figures.js';
import { by, on, own, type Grouping } from './grouping.js';
import { ruleNames, type RecordingRule } from './recording-rules.js';

export const WARMUP_SLIDING_ALERT = 'ZeroPlaneWarmupEfficiencySliding';
export const DRIFT_CREEPING_ALERT = 'ZeroPlaneP99DriftCreeping';
/** Runbook order. */
export const EARLY_WARNING_ALERT_NAMES = [WARMUP_SLIDING_ALERT, DRIFT_CREEPING_ALERT] as const;

interface EarlyWarningNames {
  /** `1h` */
  window: string;
  /** `7d` */
  baselineWindow: string;
  /** `24h` */
  capacityWindow: string;
  hitBucket: string;
  hitCount: string;
  drift: string;
  warmup: string;
  warmupEfficiency: string;
  warmupEfficiencyBaseline: string;
  driftMax: string;
  bandwidthDemand: string;
}

function earlyWarningNames(config: Config): EarlyWarningNames {
  const e = config.pack.earlyWarning;
  const w = formatDuration(e.window);
  const r = `rate${w}`;
  const baseline = formatDuration(e.baselineWindow);
  // In hours when whole (max24h, as the article says "24 h"), where formatDuration would say 1d.
  const capacity = config.pack.capacityWindow % 3_600_000 === 0 ? `${config.pack.capacityWindow / 3_600_000}h` : formatDuration(config.pack.capacityWindow);
  return {
    window: w,
    baselineWindow: baseline,
    capacityWindow: capacity,
    hitBucket: `zero_plane:request_duration_seconds_bucket:${r}`,
    hitCount: `zero_plane:request_duration_seconds_count:${r}`,
    drift: `zero_plane:p99_drift:ratio_${r}`,
    warmup: `zero_plane:warmup:${r}`,
    warmupEfficiency: `zero_plane:warmup_efficiency:ratio_${r}`,
    warmupEfficiencyBaseline: `zero_plane:warmup_efficiency:ratio_rate${baseline}`,
    driftMax: `zero_plane:p99_drift:max${capacity}`,
    bandwidthDemand: `zero_plane:deterministic_bandwidth_demand:rate${formatDuration(config.pack.rateWindow)}`,
  };
}

/**
 * The short (1 h) levels per aggregation group, the long-term (7 d) warm-up level, and the capacity rules.
 * They read the 5 m recordings of recording-rules.ts (drift, requests), so they follow them in the group.
 */
export function earlyWarningRules(config: Config, g: Grouping): RecordingRule[] {
  const t = thresholds(config.signals);
  const n = earlyWarningNames(config);
  const five = ruleNames(config);
  const w = n.window;
  const sum = (...extra: string[]) => `sum ${by(g, ...extra)}`;
  const hit = 'hit="true"';
  // The long-term level weights each hour by its warm-up outcomes: hourly rates on an hourly step tile the
  // baseline window, so this is the baseline window's hits / outcomes (168 samples per group, not 7 d of raw series).
  const over = (rule: string) => `sum_over_time(${rule}[${n.baselineWindow}:${w}])`;
  return [
    { record: n.hitBucket, expr: `${sum('le')} (rate(${own(g, 'zero_plane_request_duration_seconds_bucket', hit)}[${w}]))` },
    { record: n.hitCount, expr: `${sum()} (rate(${own(g, 'zero_plane_request_duration_seconds_count', hit)}[${w}]))` },
    // An estimate, as the 5 m drift: histogram_quantile interpolates inside the bucket under the ceiling.
    { record: n.drift, expr: `histogram_quantile(0.99, ${n.hitBucket}) / ${t.baseline} - 1` },
    { record: n.warmup, expr: `${sum()} (rate(${own(g, 'zero_plane_warmup_total')}[${w}]))` },
    {
      record: n.warmupEfficiency,
      expr: `(${sum()} (rate(${own(g, 'zero_plane_warmup_total', 'outcome="hit"')}[${w}])) or ${on(g)} 0 * ${n.warmup})\n/\n${n.warmup}`,
    },
    // `>= 0` drops the NaN of an hour with no warm-up outcome (0/0): kept, it would make the level NaN, and
    // the sliding warning mute, for the whole baseline window after one quiet hour. That hour adds 0 below.
    { record: n.warmupEfficiencyBaseline, expr: `${over(`(${n.warmupEfficiency} * ${n.warmup} >= 0)`)}\n/\n${over(n.warmup)}` },
    // Capacity: the day's worst p99 drift, and the request rate scaled by it (docs/pack.md "Capacity").
    { record: n.driftMax, expr: `max_over_time(${five.drift}[${n.capacityWindow}])` },
    { record: n.bandwidthDemand, expr: `(1 + ${n.driftMax})\n* ${on(g)}\n${five.requests}` },
  ];
}

/** A difference of two ratios, in percentage points. */
const points = (ratio: number) => `${Number((ratio * 100).toPrecision(10))} points`;

export function earlyWarningSpecs(config: Config, g: Grouping): AlertSpec[] {
  const s = config.signals;
  const e = config.pack.earlyWarning;
  const n = earlyWarningNames(config);
  const min = config.alerts.minRequests;
  const seconds = e.window / 1000;
  const where = g.labelsText;
  const join = `and ${on(g)}`;
  const ticket = { labels: { severity: 'warning' }, keepFiringFor: 0, per: [] as string[], guards: [] };
  return [
    {
      alert: WARMUP_SLIDING_ALERT,
      ...ticket,
      // The short level below the long-term one by more than the drop, yet not below the target: under the
      // target ZeroPlaneWarmupEfficiencyLow's condition holds and this warning has nothing to add.
      expr:
        `${n.warmupEfficiency}\n< ${on(g)}\n(${n.warmupEfficiencyBaseline} - ${e.warmupDrop})\n` +
        `${join}\n(${n.warmupEfficiency} >= ${s.warmupEfficiencyTarget})\n` +
        `${join}\n(${n.warmup} * ${seconds} >= ${min})`,
      for: config.pack.for.warmupSliding,
      summary: `Zero-Plane warm-up efficiency is sliding below its ${n.baselineWindow} level, still above ${pct(s.warmupEfficiencyTarget)}.`,
      description:
        `${where}: warm-up efficiency over ${n.window} is {{ $value | humanizePercentage }}, more than ${points(e.warmupDrop)} below its ${n.baselineWindow} level ` +
        `({{ with query (printf "${n.warmupEfficiencyBaseline}{${g.queryMatchers}}" ${g.queryArgs}) }}{{ . | first | value | humanizePercentage }}{{ else }}unknown{{ end }}), ` +
        `while still above the ${pct(s.warmupEfficiencyTarget)} alert threshold: often the first sign of a new user population. Needs at least ${min} warm-up outcomes per ${n.window}.`,
    },
    {
      alert: DRIFT_CREEPING_ALERT,
      ...ticket,
      // Above the early level, not past the band's edge (there ZeroPlaneP99DriftOutOfBand speaks).
      expr: `(${n.drift} > ${e.driftAbove})\n${join}\n(${n.drift} <= ${s.tolerance})\n${join}\n(${n.hitCount} * ${seconds} >= ${min})`,
      for: config.pack.for.driftCreeping,
      summary: `Zero-Plane p99 drift is creeping above +${pct(e.driftAbove)} inside its ±${pct(s.tolerance)} band.`,
      description:
        `${where}: p99 drift of Zero-Plane latency over ${n.window} is +{{ $value | humanizePercentage }} (an estimate inside a histogram bucket), above the +${pct(e.driftAbove)} early level ` +
        `and inside the ±${pct(s.tolerance)} band. Needs at least ${min} Zero-Plane requests per ${n.window}.`,
    },
  ];
}
