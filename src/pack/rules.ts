// Prometheus recording and alerting rules, generated from the same config the exporter reads, so a
// threshold can never differ between what the exporter exposes and what the rules alert on.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { thresholds } from '../metrics/buckets.js';
import { OVERFLOW_VALUE } from '../metrics/label-limiter.js';

export interface RecordingRule {
  record: string;
  expr: string;
}

export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: { summary: string; description: string; runbook_url: string };
}

export interface RuleGroup {
  name: string;
  interval: string;
  rules: (RecordingRule | AlertingRule)[];
}

/** The P0: drift above the ceiling and degraded requests together. */
export const P0_ALERT = 'ZeroPlaneP0DriftWithDegraded';

/** The alerts of SPEC §7, in the order the runbook lists them. */
export const ALERT_NAMES = [
  P0_ALERT,
  'ZeroPlaneP99DriftOutOfBand',
  'ZeroPlaneCanaryRollback',
  'ZeroPlaneHitRateLow',
  'ZeroPlaneDegradedRequests',
  'ZeroPlaneWarmupEfficiencyLow',
  'ZeroPlaneOptInHeaderMalformed',
  'ZeroPlaneExporterDown',
  'ZeroPlaneLogSourceStalled',
  'ZeroPlaneParseErrorsHigh',
] as const;

/** Share of requests that may be slower than the ceiling while p99 still is not. */
export const P99_TAIL = 0.01;

const ms = (seconds: number) => `${Number((seconds * 1000).toPrecision(10))} ms`;
const pct = (ratio: number) => `${Number((ratio * 100).toPrecision(10))} %`;
/** Escapes a literal for use inside a PromQL regex in a double-quoted string. */
const promRegexLiteral = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\\\$&').replace(/"/g, '\\"');

/** Cohorts that are not canaries: none, the stable ones, and the overflow bucket (values past the label limit). */
export function nonCanaryCohortRegex(config: Config): string {
  return ['', ...config.signals.stableCohorts, OVERFLOW_VALUE].map(promRegexLiteral).join('|');
}

export function ruleGroups(config: Config): RuleGroup[] {
  const s = config.signals;
  const p = config.pack;
  const t = thresholds(s);
  const w = formatDuration(p.rateWindow);
  const rate = `rate${w}`;
  const forOf = (msValue: number) => (msValue === 0 ? {} : { for: formatDuration(msValue) });
  const runbook = (alert: string) => `${p.runbookUrl}#${alert.toLowerCase()}`;
  // `x or 0 * total` keeps a job present at 0 when no series matches the numerator's filter yet (all
  // requests fell back): an absent ratio would keep ZeroPlaneHitRateLow quiet exactly when it matters.
  const zeroIfAbsent = (numerator: string, denominator: string) => `(${numerator} or 0 * ${denominator})`;

  const hitBucket = `zero_plane:request_duration_seconds_bucket:${rate}`;
  const hitCount = `zero_plane:request_duration_seconds_count:${rate}`;
  const cohortBucket = `zero_plane_cohort:request_duration_seconds_bucket:${rate}`;
  const cohortCount = `zero_plane_cohort:request_duration_seconds_count:${rate}`;
  const above = `zero_plane:latency_above_ceiling:ratio_${rate}`;
  const atOrBelowFloor = `zero_plane:latency_at_or_below_floor:ratio_${rate}`;
  const degraded = `zero_plane:degraded_requests:increase${w}`;
  const drift = `zero_plane:p99_drift:ratio_${rate}`;
  const stableCohorts = nonCanaryCohortRegex(config);
  const driftOf = `{{ with query (printf "${drift}{job='%s'}" $labels.job) }}{{ . | first | value | humanizePercentage }}{{ else }}unknown{{ end }}`;

  const recording: RecordingRule[] = [
    { record: `zero_plane:requests:${rate}`, expr: `sum by (job) (rate(zero_plane_requests_total[${w}]))` },
    {
      record: `zero_plane:hit_rate:ratio_${rate}`,
      expr: `${zeroIfAbsent(`sum by (job) (rate(zero_plane_requests_total{hit="true"}[${w}]))`, `zero_plane:requests:${rate}`)}\n/\nzero_plane:requests:${rate}`,
    },
    { record: hitBucket, expr: `sum by (job, le) (rate(zero_plane_request_duration_seconds_bucket{hit="true"}[${w}]))` },
    { record: hitCount, expr: `sum by (job) (rate(zero_plane_request_duration_seconds_count{hit="true"}[${w}]))` },
    { record: `zero_plane:request_duration_seconds:p50_${rate}`, expr: `histogram_quantile(0.5, ${hitBucket})` },
    { record: `zero_plane:request_duration_seconds:p99_${rate}`, expr: `histogram_quantile(0.99, ${hitBucket})` },
    { record: `zero_plane:request_duration_seconds:p999_${rate}`, expr: `histogram_quantile(0.999, ${hitBucket})` },
    // An estimate for display: histogram_quantile interpolates inside a bucket. Alerts use the exact ratios below.
    { record: drift, expr: `zero_plane:request_duration_seconds:p99_${rate} / ${t.baseline} - 1` },
    // Exact: p99 > ceiling ⟺ more than 1 % of hit requests are slower than the ceiling bucket.
    { record: above, expr: `(${hitCount} - ignoring (le) ${hitBucket}{le="${t.ceiling}"})\n/\n${hitCount}` },
    // Exact: p99 ≤ floor ⟺ at least 99 % of hit requests are in the floor bucket.
    { record: atOrBelowFloor, expr: `${hitBucket}{le="${t.floor}"}\n/ ignoring (le)\n${hitCount}` },
    { record: degraded, expr: `sum by (job) (increase(zero_plane_degraded_requests_total[${w}]))` },
    {
      record: `zero_plane:warmup_efficiency:ratio_${rate}`,
      expr: `${zeroIfAbsent(`sum by (job) (rate(zero_plane_warmup_total{outcome="hit"}[${w}]))`, `sum by (job) (rate(zero_plane_warmup_total[${w}]))`)}\n/\nsum by (job) (rate(zero_plane_warmup_total[${w}]))`,
    },
    { record: `zero_plane:opt_in_header_malformed:increase${w}`, expr: `sum by (job) (increase(zero_plane_opt_in_header_total{state="malformed"}[${w}]))` },
    {
      record: `zero_plane:exporter_parse_errors:ratio_${rate}`,
      expr: `sum by (job) (rate(zero_plane_exporter_parse_errors_total[${w}]))\n/\nsum by (job) (rate(zero_plane_exporter_lines_total[${w}]))`,
    },
    { record: cohortBucket, expr: `sum by (job, cohort, le) (rate(zero_plane_request_duration_seconds_bucket{hit="true"}[${w}]))` },
    { record: cohortCount, expr: `sum by (job, cohort) (rate(zero_plane_request_duration_seconds_count{hit="true"}[${w}]))` },
    { record: `zero_plane_cohort:request_duration_seconds:p99_${rate}`, expr: `histogram_quantile(0.99, ${cohortBucket})` },
    {
      record: `zero_plane_cohort:latency_above_ceiling:ratio_${rate}`,
      expr: `(${cohortCount} - ignoring (le) ${cohortBucket}{le="${t.ceiling}"})\n/\n${cohortCount}`,
    },
  ];

  const band = `[${ms(t.floor)}, ${ms(t.ceiling)}] (baseline ${ms(t.baseline)} ± ${pct(s.tolerance)})`;
  const alerts: AlertingRule[] = [
    {
      alert: P0_ALERT,
      // Both sides are aggregated `by (job)`, so `and on (job)` matches one-to-one.
      expr: `(${above} > ${P99_TAIL})\nand on (job)\n(${degraded} > 0)`,
      ...forOf(p.for.p0),
      labels: { severity: 'critical', priority: 'P0' },
      annotations: {
        summary: `Zero-Plane p99 is above +${pct(s.tolerance)} of its baseline while degraded requests are served.`,
        description:
          `{{ $labels.job }}: {{ $value | humanizePercentage }} of Zero-Plane requests took longer than ${ms(t.ceiling)} over ${w} ` +
          `(p99 drift ${driftOf}), and {{ with query (printf "${degraded}{job='%s'}" $labels.job) }}{{ . | first | value | printf "%.0f" }}{{ end }} ` +
          `requests were degraded. Non-core calls should pause (load-shedding gate).`,
        runbook_url: runbook(P0_ALERT),
      },
    },
    {
      alert: 'ZeroPlaneP99DriftOutOfBand',
      expr: `(${above} > ${P99_TAIL})\nor\n(${atOrBelowFloor} >= ${1 - P99_TAIL})`,
      ...forOf(p.for.driftOutOfBand),
      labels: { severity: 'warning' },
      annotations: {
        summary: `Zero-Plane p99 latency is outside its ±${pct(s.tolerance)} band.`,
        description: `{{ $labels.job }}: p99 of Zero-Plane latency over ${w} is outside ${band}; p99 drift ${driftOf}.`,
        runbook_url: runbook('ZeroPlaneP99DriftOutOfBand'),
      },
    },
    {
      alert: 'ZeroPlaneCanaryRollback',
      expr: `zero_plane_cohort:latency_above_ceiling:ratio_${rate}{cohort!~"${stableCohorts}"} > ${P99_TAIL}`,
      ...forOf(p.for.canaryRollback),
      labels: { severity: 'critical' },
      annotations: {
        summary: 'A canary cohort has Zero-Plane p99 above the ceiling: roll it back.',
        description: `{{ $labels.job }}: cohort {{ $labels.cohort }} has {{ $value | humanizePercentage }} of Zero-Plane requests slower than ${ms(t.ceiling)} (more than 1 %, so p99 is above the ceiling).`,
        runbook_url: runbook('ZeroPlaneCanaryRollback'),
      },
    },
    {
      alert: 'ZeroPlaneHitRateLow',
      expr: `zero_plane:hit_rate:ratio_${rate} < ${s.hitRateTarget}`,
      ...forOf(p.for.hitRateLow),
      labels: { severity: 'warning' },
      annotations: {
        summary: `Zero-Plane hit rate is below ${pct(s.hitRateTarget)}.`,
        description: `{{ $labels.job }}: {{ $value | humanizePercentage }} of requests were served by Zero-Plane over ${w} (healthy ≥ ${pct(s.hitRateTarget)}).`,
        runbook_url: runbook('ZeroPlaneHitRateLow'),
      },
    },
    {
      alert: 'ZeroPlaneDegradedRequests',
      expr: `${degraded} > 0`,
      ...forOf(p.for.degraded),
      labels: { severity: 'warning' },
      annotations: {
        summary: 'Degraded requests are being served.',
        description: `{{ $labels.job }}: {{ $value | printf "%.0f" }} requests carried degraded=?1 over ${w} (healthy: 0).`,
        runbook_url: runbook('ZeroPlaneDegradedRequests'),
      },
    },
    {
      alert: 'ZeroPlaneWarmupEfficiencyLow',
      expr: `zero_plane:warmup_efficiency:ratio_${rate} < ${s.warmupEfficiencyTarget}`,
      ...forOf(p.for.warmupEfficiencyLow),
      labels: { severity: 'warning' },
      annotations: {
        summary: `Zero-Plane warm-up efficiency stays below ${pct(s.warmupEfficiencyTarget)}.`,
        description: `{{ $labels.job }}: warm-up efficiency is {{ $value | humanizePercentage }} over ${w} (alert below ${pct(s.warmupEfficiencyTarget)}, baseline ${pct(s.warmupEfficiencyBaseline)}).`,
        runbook_url: runbook('ZeroPlaneWarmupEfficiencyLow'),
      },
    },
    {
      alert: 'ZeroPlaneOptInHeaderMalformed',
      expr: `zero_plane:opt_in_header_malformed:increase${w} > 0`,
      ...forOf(p.for.optInMalformed),
      labels: { severity: 'warning' },
      annotations: {
        summary: `Requests carry a malformed ${config.headers.optIn.name} opt-in header.`,
        description: `{{ $labels.job }}: {{ $value | printf "%.0f" }} requests over ${w} sent ${config.headers.optIn.name} with a value that is not exactly "${config.headers.optIn.value}"; zero_plane_opt_in_header_total{state="malformed"} tells the defect (invisible_char, whitespace, case, value).`,
        runbook_url: runbook('ZeroPlaneOptInHeaderMalformed'),
      },
    },
    {
      alert: 'ZeroPlaneExporterDown',
      expr: `up{${p.exporterSelector}} == 0`,
      ...forOf(p.for.exporterDown),
      labels: { severity: 'warning' },
      annotations: {
        summary: 'zero-plane-exporter cannot be scraped.',
        description: '{{ $labels.job }} / {{ $labels.instance }}: the scrape fails, so no Zero-Plane signal or alert is current.',
        runbook_url: runbook('ZeroPlaneExporterDown'),
      },
    },
    {
      alert: 'ZeroPlaneLogSourceStalled',
      expr: `time() - zero_plane_exporter_last_record_timestamp_seconds > ${p.stalledAfter / 1000}`,
      ...forOf(p.for.sourceStalled),
      labels: { severity: 'warning' },
      annotations: {
        summary: 'No new gateway log record is arriving.',
        description: `{{ $labels.job }} / {{ $labels.instance }}: the newest record from {{ $labels.source }} is {{ $value | humanizeDuration }} old (alert after ${formatDuration(p.stalledAfter)}).`,
        runbook_url: runbook('ZeroPlaneLogSourceStalled'),
      },
    },
    {
      alert: 'ZeroPlaneParseErrorsHigh',
      expr: `zero_plane:exporter_parse_errors:ratio_${rate} > ${s.parseErrorRatioMax}`,
      ...forOf(p.for.parseErrorsHigh),
      labels: { severity: 'warning' },
      annotations: {
        summary: 'Many gateway log lines cannot be read.',
        description: `{{ $labels.job }}: {{ $value | humanizePercentage }} of log lines were skipped over ${w} (alert above ${pct(s.parseErrorRatioMax)}); zero_plane_exporter_parse_errors_total{reason} says why.`,
        runbook_url: runbook('ZeroPlaneParseErrorsHigh'),
      },
    },
  ];

  const interval = formatDuration(p.evaluationInterval);
  return [
    { name: 'zero-plane.rules', interval, rules: recording },
    { name: 'zero-plane.alerts', interval, rules: alerts },
  ];
}
