// PromQL for the dashboards. Every selector reads the exporter's own series (pack.selector) through the
// dashboard variables: one per aggregation label, `instance`, and model/route/cohort where the series
// has them, so every target is filtered by job and instance (grafana/dashboard-linter). Recording rules
// aggregated by job lose `instance`, so the panels compute from raw series; the stats that show what the
// alerts evaluate use the rules' own window and arithmetic.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { thresholds } from '../metrics/buckets.js';
import type { SignalRef, SloId } from '../pack/conditions.js';
import { by, on, type Grouping } from '../pack/grouping.js';
import { budgetStep, nonCanaryCohortRegex, ruleNames, sloEventQueries } from '../pack/recording-rules.js';
import { sloById } from '../pack/slos.js';

export { P0_ALERT, P99_TAIL } from '../pack/rules.js';

/** The variables that narrow a series by its request labels, where the series has them. */
export const FILTERS = ['model', 'route', 'cohort'] as const;
export type Filter = (typeof FILTERS)[number];

/** Grafana's rate window: at least four scrape intervals, follows the zoom. */
export const RATE_INTERVAL = '$__rate_interval';
/** The whole time range of the dashboard (instant queries over the range). */
export const RANGE = '$__range';
export const INSTANCE = 'instance=~"$instance"';

/** `metric{selector, cluster=~"$cluster", job=~"$job", instance=~"$instance", model=~"$model", …, extra…}`: one of the exporter's own series. */
export function own(g: Grouping, metric: string, filters: readonly Filter[], ...extra: string[]): string {
  return `${metric}{${[g.selector, g.variableMatchers, INSTANCE, ...filters.map((f) => `${f}=~"$${f}"`), ...extra].join(', ')}}`;
}

/** A per-instance recording rule (it carries only the aggregation labels and `instance`, no selector labels). */
export function recorded(g: Grouping, rule: string, ...extra: string[]): string {
  return `${rule}{${[g.variableMatchers, INSTANCE, ...extra].join(', ')}}`;
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
export function ratioOfRates(numerator: string, denominator: string, byLabels?: string): string {
  const sum = (selector: string) => `sum${byLabels ? ` by (${byLabels}) ` : ''}(${rate(selector)})`;
  return `${sum(numerator)}\n/\n${sum(denominator)}`;
}

/**
 * A signal of the alerts, computed from the filtered raw series exactly as the recording rules compute it
 * (increase over the same window: the ratios of increases are the rules' ratios of rates), per
 * aggregation group: with every instance selected, the value the alert compares.
 */
export function rawSignal(config: Config, g: Grouping, ref: SignalRef): string {
  const w = formatDuration(ref.window);
  const t = thresholds(config.signals);
  const sum = (selector: string, ...extra: string[]) => `sum ${by(g, ...extra)} (${increase(selector, w)})`;
  const hit = 'hit="true"';
  const count = sum(own(g, 'zero_plane_request_duration_seconds_count', [], hit));
  const bucketAt = (le: number) => sum(own(g, 'zero_plane_request_duration_seconds_bucket', [], hit, `le="${le}"`));
  const zeroIfAbsent = (numerator: string, denominator: string) => `(${numerator} or ${on(g)} 0 * ${denominator})`;
  const ratio = (numerator: string, denominator: string) => `${numerator}\n/ ${on(g)}\n${denominator}`;
  switch (ref.signal) {
    case 'burnRate': {
      const slo = sloById(config, ref.slo);
      const q = sloEventQueries(config, g, ref.slo, 'increase', w, [], (metric, ...extra) => own(g, metric, [], ...extra));
      return `(\n${ratio(q.bad(q.events), q.events)}\n) / ${slo.budget}`;
    }
    case 'sloErrorRatio': {
      const q = sloEventQueries(config, g, ref.slo, 'increase', w, [], (metric, ...extra) => own(g, metric, [], ...extra));
      return ratio(q.bad(q.events), q.events);
    }
    case 'sloEvents':
      return sloEventQueries(config, g, ref.slo, 'increase', w, [], (metric, ...extra) => own(g, metric, [], ...extra)).events;
    case 'hitRate': {
      const all = sum(own(g, 'zero_plane_requests_total', []));
      return ratio(zeroIfAbsent(sum(own(g, 'zero_plane_requests_total', [], hit)), all), all);
    }
    case 'aboveCeiling':
      return ratio(`(${count} - ${on(g)} ${bucketAt(t.ceiling)})`, count);
    case 'atOrBelowFloor':
      return ratio(bucketAt(t.floor), count);
    case 'degraded':
      return sum(own(g, 'zero_plane_degraded_requests_total', []));
    case 'warmupEfficiency': {
      const all = sum(own(g, 'zero_plane_warmup_total', []));
      return ratio(zeroIfAbsent(sum(own(g, 'zero_plane_warmup_total', [], 'outcome="hit"')), all), all);
    }
    case 'optInMalformed':
      return sum(own(g, 'zero_plane_opt_in_header_total', [], 'state="malformed"'));
    case 'parseErrorRatio':
      return ratio(sum(own(g, 'zero_plane_exporter_parse_errors_total', [])), sum(own(g, 'zero_plane_exporter_lines_total', [])));
    case 'cohortAboveCeiling': {
      const canary = `cohort!~"${nonCanaryCohortRegex(config)}"`;
      const cohortCount = sum(own(g, 'zero_plane_request_duration_seconds_count', [], hit, canary), 'cohort');
      const within = sum(own(g, 'zero_plane_request_duration_seconds_bucket', [], hit, canary, `le="${t.ceiling}"`), 'cohort');
      return `(${cohortCount} - ${on(g, 'cohort')} ${within})\n/ ${on(g, 'cohort')}\n${cohortCount}`;
    }
    case 'requests':
      return sum(own(g, 'zero_plane_requests_total', []));
    case 'hitRequests':
      return count;
    case 'cohortHitRequests':
      return sum(own(g, 'zero_plane_request_duration_seconds_count', [], hit), 'cohort');
    case 'warmupOutcomes':
      return sum(own(g, 'zero_plane_warmup_total', []));
  }
}

/**
 * An SLO's error budget left over the period, from the per-instance hourly recordings (what
 * zero_plane:slo_error_budget_remaining:ratio adds up), for the selected groups and instances.
 */
export function budgetLeft(config: Config, g: Grouping, id: SloId): string {
  const n = ruleNames(config);
  const slo = sloById(config, id);
  const period = formatDuration(config.slos.period);
  const over = (rule: string) => `sum ${by(g)} (sum_over_time(${recorded(g, rule, `slo="${id}"`)}[${period}:${budgetStep(config)}]))`;
  return `1 - (\n${over(n.sloInstanceErrors)}\n/ ${on(g)}\n${over(n.sloInstanceEvents)}\n) / ${slo.budget}`;
}
