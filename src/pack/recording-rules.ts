// The recording rules: every signal the alerts compare, per aggregation group (pack.aggregationLabels),
// from the exporter's counters and histogram, and the SLOs' error ratios over each burn-rate window and
// error budget over the period. Names follow level:metric:operations.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { thresholds } from '../metrics/buckets.js';
import { OVERFLOW_VALUE } from '../metrics/label-limiter.js';
import type { SignalRef, SloId } from './conditions.js';
import { by, on, own, type Grouping } from './grouping.js';
import { promDuration, slothLabels, sloById, slos, sloWindows } from './slos.js';

export interface RecordingRule {
  record: string;
  expr: string;
  labels?: Record<string, string>;
}

/** The names of the recording rules, for the pack's rate window. */
export interface RuleNames {
  /** `5m` */
  window: string;
  requests: string;
  hitRate: string;
  hitBucket: string;
  hitCount: string;
  p50: string;
  p99: string;
  p999: string;
  drift: string;
  aboveCeiling: string;
  atOrBelowFloor: string;
  degraded: string;
  warmup: string;
  warmupEfficiency: string;
  optInMalformed: string;
  parseErrorRatio: string;
  cohortBucket: string;
  cohortCount: string;
  cohortP99: string;
  cohortAboveCeiling: string;
  /** Per cohort: the 5 m p99 drift, and its σ over pack.dispersionWindow (the convergence radius). */
  cohortDrift: string;
  cohortDriftStddev: string;
  /** Per aggregation group and instance, over slos.budgetStep (1h): the SLO's events and bad events. */
  sloInstanceEvents: string;
  sloInstanceErrors: string;
  sloErrorBudgetRemaining: string;
  /** Over an SLO window: events (per second) and bad events / events. */
  sloEvents(window: number): string;
  sloErrorRatio(window: number): string;
}

export function ruleNames(config: Config): RuleNames {
  const w = formatDuration(config.pack.rateWindow);
  const r = `rate${w}`;
  return {
    window: w,
    requests: `zero_plane:requests:${r}`,
    hitRate: `zero_plane:hit_rate:ratio_${r}`,
    hitBucket: `zero_plane:request_duration_seconds_bucket:${r}`,
    hitCount: `zero_plane:request_duration_seconds_count:${r}`,
    p50: `zero_plane:request_duration_seconds:p50_${r}`,
    p99: `zero_plane:request_duration_seconds:p99_${r}`,
    p999: `zero_plane:request_duration_seconds:p999_${r}`,
    drift: `zero_plane:p99_drift:ratio_${r}`,
    aboveCeiling: `zero_plane:latency_above_ceiling:ratio_${r}`,
    atOrBelowFloor: `zero_plane:latency_at_or_below_floor:ratio_${r}`,
    degraded: `zero_plane:degraded_requests:increase${w}`,
    warmup: `zero_plane:warmup:${r}`,
    warmupEfficiency: `zero_plane:warmup_efficiency:ratio_${r}`,
    optInMalformed: `zero_plane:opt_in_header_malformed:increase${w}`,
    parseErrorRatio: `zero_plane:exporter_parse_errors:ratio_${r}`,
    cohortBucket: `zero_plane_cohort:request_duration_seconds_bucket:${r}`,
    cohortCount: `zero_plane_cohort:request_duration_seconds_count:${r}`,
    cohortP99: `zero_plane_cohort:request_duration_seconds:p99_${r}`,
    cohortAboveCeiling: `zero_plane_cohort:latency_above_ceiling:ratio_${r}`,
    cohortDrift: `zero_plane_cohort:p99_drift:ratio_${r}`,
    cohortDriftStddev: `zero_plane_cohort:p99_drift:stddev_over_time${formatDuration(config.pack.dispersionWindow)}`,
    sloInstanceEvents: `zero_plane_instance:slo_requests:increase${budgetStep(config)}`,
    sloInstanceErrors: `zero_plane_instance:slo_errors:increase${budgetStep(config)}`,
    sloErrorBudgetRemaining: 'zero_plane:slo_error_budget_remaining:ratio',
    sloEvents: (window) => `zero_plane:slo_requests:rate${formatDuration(window)}`,
    sloErrorRatio: (window) => `zero_plane:slo_errors_per_requests:ratio_rate${formatDuration(window)}`,
  };
}

/**
 * The error budget is counted in increases over slos.budgetStep (1 h) on that step: a 28 d period is 672
 * samples per instance to add up (a 5 m step would be 8 064), at the price of not counting the current
 * step yet (nor anything before the first step boundary after the rules start).
 */
export const budgetStep = (config: Config) => formatDuration(config.slos.budgetStep);

/** Seconds in `ms`, as PromQL writes a count from a per-second rate. */
const seconds = (ms: number) => ms / 1000;

/**
 * A signal as the alerts read it: its recording rule (a count from a rate is rate × seconds). Only the
 * pack's rate window is recorded for the 5 m signals; an SLO's signals for each of its windows.
 */
export function recordedSignal(config: Config, ref: SignalRef): string {
  const n = ruleNames(config);
  if (ref.signal === 'burnRate' || ref.signal === 'sloErrorRatio' || ref.signal === 'sloEvents') {
    const slo = sloById(config, ref.slo);
    const sel = `{slo="${ref.slo}"}`;
    if (ref.signal === 'burnRate') return `${n.sloErrorRatio(ref.window)}${sel} / ${slo.budget}`;
    return ref.signal === 'sloErrorRatio' ? `${n.sloErrorRatio(ref.window)}${sel}` : `${n.sloEvents(ref.window)}${sel} * ${seconds(ref.window)}`;
  }
  if (ref.window !== config.pack.rateWindow) throw new Error(`${ref.signal} is only recorded over pack.rateWindow`);
  const w = seconds(ref.window);
  const names: Record<typeof ref.signal, string> = {
    hitRate: n.hitRate,
    aboveCeiling: n.aboveCeiling,
    atOrBelowFloor: n.atOrBelowFloor,
    degraded: n.degraded,
    warmupEfficiency: n.warmupEfficiency,
    optInMalformed: n.optInMalformed,
    parseErrorRatio: n.parseErrorRatio,
    // Canary cohorts only.
    cohortAboveCeiling: `${n.cohortAboveCeiling}{cohort!~"${nonCanaryCohortRegex(config)}"}`,
    requests: `${n.requests} * ${w}`,
    hitRequests: `${n.hitCount} * ${w}`,
    cohortHitRequests: `${n.cohortCount} * ${w}`,
    warmupOutcomes: `${n.warmup} * ${w}`,
  };
  return names[ref.signal];
}

/** Cohorts that are not canaries: none, the stable ones, and the overflow bucket (values past the label limit). */
export function nonCanaryCohortRegex(config: Config): string {
  return ['', ...config.signals.stableCohorts, OVERFLOW_VALUE].map(promRegexLiteral).join('|');
}

/** Escapes a literal for use inside a PromQL regex in a double-quoted string. */
const promRegexLiteral = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\\\$&').replace(/"/g, '\\"');

/** The 5 m signals (docs/contract.md §7), per aggregation group, then per cohort. */
export function signalRules(config: Config, g: Grouping): RecordingRule[] {
  const t = thresholds(config.signals);
  const n = ruleNames(config);
  const w = n.window;
  const sum = (...extra: string[]) => `sum ${by(g, ...extra)}`;
  // `x or on (…) 0 * total` keeps a group present at 0 when no series matches the numerator's filter yet
  // (all requests fell back): an absent ratio would keep ZeroPlaneHitRateLow quiet exactly when it matters.
  const zeroIfAbsent = (numerator: string, denominator: string) => `(${numerator} or ${on(g)} 0 * ${denominator})`;
  const hit = 'hit="true"';
  return [
    { record: n.requests, expr: `${sum()} (rate(${own(g, 'zero_plane_requests_total')}[${w}]))` },
    {
      record: n.hitRate,
      expr: `${zeroIfAbsent(`${sum()} (rate(${own(g, 'zero_plane_requests_total', hit)}[${w}]))`, n.requests)}\n/\n${n.requests}`,
    },
    { record: n.hitBucket, expr: `${sum('le')} (rate(${own(g, 'zero_plane_request_duration_seconds_bucket', hit)}[${w}]))` },
    { record: n.hitCount, expr: `${sum()} (rate(${own(g, 'zero_plane_request_duration_seconds_count', hit)}[${w}]))` },
    { record: n.p50, expr: `histogram_quantile(0.5, ${n.hitBucket})` },
    { record: n.p99, expr: `histogram_quantile(0.99, ${n.hitBucket})` },
    { record: n.p999, expr: `histogram_quantile(0.999, ${n.hitBucket})` },
    // An estimate for display: histogram_quantile interpolates inside a bucket. Alerts use the exact ratios below.
    { record: n.drift, expr: `${n.p99} / ${t.baseline} - 1` },
    // Exact: p99 > ceiling ⟺ more than 1 % of hit requests are slower than the ceiling bucket.
    { record: n.aboveCeiling, expr: `(${n.hitCount} - ignoring (le) ${n.hitBucket}{le="${t.ceiling}"})\n/\n${n.hitCount}` },
    // Exact: p99 ≤ floor ⟺ at least 99 % of hit requests are in the floor bucket.
    { record: n.atOrBelowFloor, expr: `${n.hitBucket}{le="${t.floor}"}\n/ ignoring (le)\n${n.hitCount}` },
    { record: n.degraded, expr: `${sum()} (increase(${own(g, 'zero_plane_degraded_requests_total')}[${w}]))` },
    { record: n.warmup, expr: `${sum()} (rate(${own(g, 'zero_plane_warmup_total')}[${w}]))` },
    {
      record: n.warmupEfficiency,
      expr: `${zeroIfAbsent(`${sum()} (rate(${own(g, 'zero_plane_warmup_total', 'outcome="hit"')}[${w}]))`, n.warmup)}\n/\n${n.warmup}`,
    },
    { record: n.optInMalformed, expr: `${sum()} (increase(${own(g, 'zero_plane_opt_in_header_total', 'state="malformed"')}[${w}]))` },
    {
      record: n.parseErrorRatio,
      expr: `${sum()} (rate(${own(g, 'zero_plane_exporter_parse_errors_total')}[${w}]))\n/\n${sum()} (rate(${own(g, 'zero_plane_exporter_lines_total')}[${w}]))`,
    },
    { record: n.cohortBucket, expr: `${sum('cohort', 'le')} (rate(${own(g, 'zero_plane_request_duration_seconds_bucket', hit)}[${w}]))` },
    { record: n.cohortCount, expr: `${sum('cohort')} (rate(${own(g, 'zero_plane_request_duration_seconds_count', hit)}[${w}]))` },
    { record: n.cohortP99, expr: `histogram_quantile(0.99, ${n.cohortBucket})` },
    {
      record: n.cohortAboveCeiling,
      expr: `(${n.cohortCount} - ignoring (le) ${n.cohortBucket}{le="${t.ceiling}"})\n/\n${n.cohortCount}`,
    },
    // The convergence radius per cohort (docs/pack.md): an estimate, as the drift above. Over the rule's own
    // samples (one per evaluation, of overlapping 5 m windows), so smoother than `compare`'s disjoint windows.
    { record: n.cohortDrift, expr: `${n.cohortP99} / ${t.baseline} - 1` },
    { record: n.cohortDriftStddev, expr: `stddev_over_time(${n.cohortDrift}[${formatDuration(config.pack.dispersionWindow)}])` },
  ];
}

/**
 * An SLO's events and bad events over `window`, summed `by` the aggregation labels and `labels`, from the
 * raw series: hit-rate counts requests and those not served by Zero-Plane (a series that may not exist
 * yet); latency counts Zero-Plane requests and those slower than the ceiling, `events` (the recorded
 * events, so the count is read once) minus the bucket at the ceiling: exact.
 */
export function sloEventQueries(
  config: Config,
  g: Grouping,
  id: SloId,
  fn: 'rate' | 'increase',
  window: string,
  labels: string[],
  select: (metric: string, ...extra: string[]) => string = (metric, ...extra) => own(g, metric, ...extra),
) {
  const ceiling = thresholds(config.signals).ceiling;
  const sum = (selector: string) => `sum ${by(g, ...labels)} (${fn}(${selector}[${window}]))`;
  const zeroIfAbsent = (bad: string, events: string) => `(\n${bad}\nor ${on(g, ...labels)}\n0 * ${events}\n)`;
  if (id === 'hit-rate') {
    return {
      events: sum(select('zero_plane_requests_total')),
      bad: (events: string) => zeroIfAbsent(sum(select('zero_plane_requests_total', 'hit="false"')), events),
    };
  }
  return {
    events: sum(select('zero_plane_request_duration_seconds_count', 'hit="true"')),
    bad: (events: string) => `(\n${events}\n- ${on(g, ...labels)}\n${sum(select('zero_plane_request_duration_seconds_bucket', 'hit="true"', `le="${ceiling}"`))}\n)`,
  };
}

/**
 * The SLOs: per instance, events and bad events of each hour (what the error budget and the dashboards
 * add up); per group, each burn-rate window's events and error ratio from the raw series (exact, as
 * Sloth and Pyrra do), and the budget left over the period.
 */
export function sloRules(config: Config, g: Grouping): RecordingRule[] {
  const n = ruleNames(config);
  const period = formatDuration(config.slos.period);
  const rules: RecordingRule[] = [];
  for (const slo of slos(config)) {
    const labels = () => ({ slo: slo.id });
    const is = `{slo="${slo.id}"}`;
    const inst = sloEventQueries(config, g, slo.id, 'increase', budgetStep(config), ['instance']);
    rules.push({ record: n.sloInstanceEvents, expr: inst.events, labels: labels() });
    rules.push({ record: n.sloInstanceErrors, expr: inst.bad(`${n.sloInstanceEvents}${is}`), labels: labels() });
    for (const window of sloWindows(config)) {
      const q = sloEventQueries(config, g, slo.id, 'rate', formatDuration(window), []);
      const events = `${n.sloEvents(window)}${is}`;
      rules.push({ record: n.sloEvents(window), expr: q.events, labels: labels() });
      rules.push({ record: n.sloErrorRatio(window), expr: `${q.bad(events)}\n/ ${on(g)}\n${events}`, labels: labels() });
    }
    // Each request once: hourly increases on an hourly step sum to the period's count (Pyrra's subquery
    // form), so the period costs 672 recorded samples per instance, not 28 days of raw series.
    const over = (rule: string) => `sum ${by(g)} (sum_over_time(${rule}${is}[${period}:${budgetStep(config)}]))`;
    rules.push({
      record: n.sloErrorBudgetRemaining,
      expr: `1 - (\n${over(n.sloInstanceErrors)}\n/ ${on(g)}\n${over(n.sloInstanceEvents)}\n) / ${slo.budget}`,
      labels: labels(),
    });
    rules.push(...slothRules(config, g, slo.id, `${over(n.sloInstanceErrors)}\n/ ${on(g)}\n${over(n.sloInstanceEvents)}`));
  }
  return rules;
}

/**
 * The same SLO as Sloth writes it (github.com/slok/sloth, its Prometheus rules: SLI, metadata and info
 * series), so Sloth's dashboards and UI show it unchanged: slo:sli_error:ratio_rate<window> from the
 * ratios above (without our `slo` label) and over the period, the objective, budget and period as
 * constants, the burn rates and budget left, sloth_slo_info. Every series carries sloth_id,
 * sloth_service, sloth_slo (and the SLIs sloth_window); the SLIs and burn rates keep the aggregation
 * labels, as a grouped Sloth SLO does. `periodRatio` is the period's bad events / events.
 */
function slothRules(config: Config, g: Grouping, id: SloId, periodRatio: string): RecordingRule[] {
  const n = ruleNames(config);
  const slo = sloById(config, id);
  const ids = slothLabels(config, id);
  const sel = `{${Object.entries(ids)
    .map(([k, v]) => `${k}="${v}"`)
    .join(', ')}}`;
  const sli = (window: string) => `slo:sli_error:ratio_rate${window}`;
  const period = promDuration(config.slos.period);
  // A burn window as long as the period would record the same name and labels twice: the period's wins.
  const windows = sloWindows(config).filter((w) => promDuration(w) !== period);
  const shortest = windows[0] ?? config.slos.period;
  const perBudget = (rule: string) => `${rule}${sel}\n/ on (sloth_id, sloth_slo, sloth_service) group_left\nslo:error_budget:ratio${sel}`;
  return [
    ...windows.map((window) => ({
      record: sli(promDuration(window)),
      expr: `sum without (slo) (${n.sloErrorRatio(window)}{slo="${id}"})`,
      labels: { ...ids, sloth_window: promDuration(window) },
    })),
    { record: sli(period), expr: periodRatio, labels: { ...ids, sloth_window: period } },
    { record: 'slo:objective:ratio', expr: `vector(${slo.objective})`, labels: ids },
    { record: 'slo:error_budget:ratio', expr: `vector(${slo.budget})`, labels: ids },
    { record: 'slo:time_period:days', expr: `vector(${config.slos.period / 86_400_000})`, labels: ids },
    { record: 'slo:current_burn_rate:ratio', expr: perBudget(sli(promDuration(shortest))), labels: ids },
    { record: 'slo:period_burn_rate:ratio', expr: perBudget(sli(period)), labels: ids },
    { record: 'slo:period_error_budget_remaining:ratio', expr: `1 - slo:period_burn_rate:ratio${sel}`, labels: ids },
    {
      record: 'sloth_slo_info',
      expr: 'vector(1)',
      labels: { ...ids, sloth_objective: String(Number((slo.objective * 100).toPrecision(12))), sloth_spec: 'prometheus/v1', sloth_mode: 'zero-plane-exporter-generate' },
    },
  ];
}
