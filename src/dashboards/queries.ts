// PromQL for the dashboards: selectors that honour the dashboard variables, and the recording-rule names
// of the alerting pack, derived from the same config so a panel always reads a rule that exists.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { P0_ALERT, ruleGroups, type AlertingRule } from '../pack/rules.js';

export { P0_ALERT };
export { P99_TAIL } from '../pack/rules.js';

/** The query variables every dashboard has, besides `datasource`. */
export const FILTERS = ['job', 'model', 'route', 'cohort'] as const;
export type Filter = (typeof FILTERS)[number];

/** Grafana's rate window: at least four scrape intervals, follows the zoom. */
export const RATE_INTERVAL = '$__rate_interval';
/** The whole time range of the dashboard (instant queries over the range). */
export const RANGE = '$__range';

/** `metric{job=~"$job", …, extra…}`: one `=~` matcher per variable, then any literal matchers. */
export function sel(metric: string, filters: readonly Filter[], ...extra: string[]): string {
  const matchers = [...filters.map((f) => `${f}=~"$${f}"`), ...extra];
  return `${metric}{${matchers.join(', ')}}`;
}

/** `rate(selector[$__rate_interval])`. */
export function rate(selector: string): string {
  return `rate(${selector}[${RATE_INTERVAL}])`;
}

/** `increase(selector[window])`, by default over `$__rate_interval`. */
export function increase(selector: string, window: string = RATE_INTERVAL): string {
  return `increase(${selector}[${window}])`;
}

/** `sum(rate(numerator)) / sum(rate(denominator))` on three lines, both sides summed `by` the same labels. */
export function ratioOfRates(numerator: string, denominator: string, by?: string): string {
  const sum = (selector: string) => `sum${by ? ` by (${by}) ` : ''}(${rate(selector)})`;
  return `${sum(numerator)}\n/\n${sum(denominator)}`;
}



/** Recording rules (and the P0 alert's condition) the dashboards read, named after `pack.rateWindow`. */
export interface RuleNames {
  window: string;
  requests: string;
  hitRate: string;
  p50: string;
  p99: string;
  p999: string;
  drift: string;
  aboveCeiling: string;
  degraded: string;
  warmupEfficiency: string;
  parseErrorRatio: string;
  cohortAboveCeiling: string;
  /** The expression of ZeroPlaneP0DriftWithDegraded, verbatim. */
  p0Condition: string;
}


export function ruleNames(config: Config): RuleNames {
  const w = formatDuration(config.pack.rateWindow);
  const r = `rate${w}`;
  const groups = ruleGroups(config);
  const rules = groups.flatMap((g) => g.rules);
  const p0 = rules.find((x): x is AlertingRule => 'alert' in x && x.alert === P0_ALERT);
  if (!p0) throw new Error(`the alerting pack has no ${P0_ALERT}`);
  const names: RuleNames = {
    window: w,
    requests: `zero_plane:requests:${r}`,
    hitRate: `zero_plane:hit_rate:ratio_${r}`,
    p50: `zero_plane:request_duration_seconds:p50_${r}`,
    p99: `zero_plane:request_duration_seconds:p99_${r}`,
    p999: `zero_plane:request_duration_seconds:p999_${r}`,
    drift: `zero_plane:p99_drift:ratio_${r}`,
    aboveCeiling: `zero_plane:latency_above_ceiling:ratio_${r}`,
    degraded: `zero_plane:degraded_requests:increase${w}`,
    warmupEfficiency: `zero_plane:warmup_efficiency:ratio_${r}`,
    parseErrorRatio: `zero_plane:exporter_parse_errors:ratio_${r}`,
    cohortAboveCeiling: `zero_plane_cohort:latency_above_ceiling:ratio_${r}`,
    p0Condition: p0.expr,
  };
  // A dashboard must never read a rule the pack does not record: fail at generation time, not in Grafana.
  const recorded = new Set(rules.flatMap((x) => ('record' in x ? [x.record] : [])));
  for (const [key, name] of Object.entries(names)) {
    if (key === 'window' || key === 'p0Condition') continue;
    if (!recorded.has(name)) throw new Error(`dashboards read ${name}, which the alerting pack does not record`);
  }
  return names;
}
