// "Zero-Plane overview": the four signals as the alerts evaluate them, the SLOs' error budgets, p99 against
// the band, the exact share above the ceiling, the P0 and the load-shedding gate; then traffic filtered by
// model, route and cohort.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { thresholds } from '../metrics/buckets.js';
import { alertSpecs } from '../pack/alert-specs.js';
import { renderCondition, type SignalRef } from '../pack/conditions.js';
import { by, groupingOf, on, type Grouping } from '../pack/grouping.js';
import { burnPairs, exhaustion, slos, sloWindows } from '../pack/slos.js';
import {
  barGaugePanel,
  buildDashboard,
  eventBars,
  flagStat,
  healthyBelow,
  healthyFrom,
  healthyWithin,
  sharePanel,
  stackedRates,
  statPanel,
  targetSharePanel,
  timeseriesPanel,
  type PanelDraft,
  type Section,
} from './panels.js';
import { budgetLeft, FILTERS, increase, own, P0_ALERT, P99_TAIL, rate, ratioOfRates, rawSignal } from './queries.js';
import { probeSection } from './probe-row.js';
import { bandSteps, describeBand, pct, TAGS } from './shared.js';

export const OVERVIEW_UID = 'zero-plane-overview';

export function overviewDashboard(config: Config, g: Grouping = groupingOf(config)) {
  const s = config.signals;
  const t = thresholds(s);
  const window = config.pack.rateWindow;
  const w = formatDuration(window);
  const group = g.labelWords;
  const asAlerts =
    `Per ${group}, what the alert rules compare: the same arithmetic over the same ${w} window, from the raw series of the selected ` +
    'instances (all of them: exactly the rule\'s value). The model, route and cohort filters do not apply.';
  const signal = (ref: SignalRef) => ({ expr: rawSignal(config, g, ref), legend: g.legend });
  const at = (name: Exclude<SignalRef['signal'], 'burnRate' | 'sloErrorRatio' | 'sloEvents'>) => signal({ signal: name, window });
  const hitBucket = 'zero_plane_request_duration_seconds_bucket';
  const p0 = alertSpecs(config, g).find((a) => a.alert === P0_ALERT);
  if (!p0) throw new Error(`the alerting pack has no ${P0_ALERT}`);
  const p0Condition = renderCondition(p0, (ref) => rawSignal(config, g, ref), `and ${on(g)}`);
  /** Keeps a per-group 0 where `x` has no series (traffic, but the condition does not hold). */
  const zeroPerGroup = (x: string) => `${x}\nor ${on(g)}\n0 * ${rawSignal(config, g, { signal: 'requests', window })}`;

  const signals: Section = {
    title: `Signals (per ${group}, as the alerts see them over ${w})`,
    panels: [
      statPanel({
        title: 'Hit rate',
        description: `Share of requests served by Zero-Plane. Healthy ≥ ${pct(s.hitRateTarget)}. ${asAlerts}`,
        queries: [at('hitRate')],
        unit: 'percentunit',
        decimals: 2,
        min: 0,
        max: 1,
        noValue: 'No traffic',
        steps: healthyFrom(s.hitRateTarget),
        w: 4,
        h: 5,
      }),
      statPanel({
        title: 'p99 drift',
        description:
          `(p99 of Zero-Plane latency − baseline) / baseline: p99 within ${describeBand(t, s.tolerance)} is drift within ±${pct(s.tolerance)} (green). ` +
          `An estimate (histogram_quantile interpolates inside a bucket); the alerts decide the band exactly from the buckets at the floor and ceiling. ${asAlerts}`,
        queries: [
          {
            expr: `histogram_quantile(0.99, sum ${by(g, 'le')} (${increase(own(g, hitBucket, [], 'hit="true"'), w)})) / ${t.baseline} - 1`,
            legend: g.legend,
          },
        ],
        unit: 'percentunit',
        decimals: 1,
        noValue: 'No traffic',
        steps: healthyWithin(-s.tolerance, s.tolerance),
        w: 4,
        h: 5,
      }),
      statPanel({
        title: 'Degraded requests',
        description:
          `Requests whose delay profile says degraded, over the last ${w}. Healthy: 0. increase() extrapolates to the window's edges, ` +
          `so the value is rounded up: any degraded request shows as at least 1, as the alert fires on > 0. ${asAlerts}`,
        queries: [{ expr: `ceil(${rawSignal(config, g, { signal: 'degraded', window })})`, legend: g.legend }],
        unit: 'none',
        decimals: 0,
        min: 0,
        noValue: 'No traffic',
        steps: healthyBelow(1),
        w: 4,
        h: 5,
      }),
      statPanel({
        title: 'Warm-up efficiency',
        description:
          `Warm-up hits / (hits + misses) of Zero-Plane requests. Healthy ≥ ${pct(s.warmupEfficiencyTarget)} ` +
          `(baseline ${pct(s.warmupEfficiencyBaseline)}). ${asAlerts}`,
        queries: [at('warmupEfficiency')],
        unit: 'percentunit',
        decimals: 1,
        min: 0,
        max: 1,
        noValue: 'No warm-up data',
        steps: healthyFrom(s.warmupEfficiencyTarget),
        w: 4,
        h: 5,
      }),
      flagStat({
        title: 'P0: p99 above the ceiling with degraded requests',
        description:
          `The condition of ${P0_ALERT} holds now: more than ${pct(P99_TAIL)} of Zero-Plane requests slower than the ${t.ceiling} s ceiling ` +
          `and degraded requests > 0 over ${w}, with at least ${config.alerts.minRequests} Zero-Plane requests in the window ` +
          `(alerts.minRequests). The alert fires once it has held for ${formatDuration(config.pack.for.p0)}. Per ${group}, from the raw ` +
          'series of the selected instances.',
        queries: [{ expr: zeroPerGroup(`count ${by(g)} (\n${p0Condition}\n)`), legend: g.legend }],
        noValue: 'No traffic',
        zero: { text: 'no', color: 'green' },
        one: { text: 'P0', color: 'red' },
        w: 4,
        h: 5,
      }),
      flagStat({
        title: 'Non-core calls paused',
        description:
          `zero_plane_noncore_paused: the exporter's load-shedding gate pauses non-core AI calls while an alert with ` +
          `${config.gate.pauseLabel}="${config.gate.pauseValue}" fires (Alertmanager webhook). Per ${group}.`,
        queries: [{ expr: `max ${by(g)} (${own(g, 'zero_plane_noncore_paused', [])})`, legend: g.legend }],
        noValue: 'Exporter not scraped',
        zero: { text: 'running', color: 'green' },
        one: { text: 'PAUSED', color: 'red' },
        w: 4,
        h: 5,
      }),
    ],
  };

  const period = formatDuration(config.slos.period);
  const pairs = burnPairs(config);
  const firstPage = pairs.find((p) => p.tier === 'page') ?? pairs[0];
  if (!firstPage) throw new Error('slos: no burn-rate pair');
  const lowest = (tier: 'page' | 'ticket') => Math.min(...pairs.filter((p) => p.tier === tier).map((p) => p.factor));
  const burnSteps = [
    { value: null, color: 'green' },
    { value: lowest('ticket'), color: 'orange' },
    { value: lowest('page'), color: 'red' },
  ];
  const budgetPanels: PanelDraft[] = slos(config).flatMap((slo) => {
    const left = budgetLeft(config, g, slo.id);
    const burnNow = rawSignal(config, g, { signal: 'burnRate', slo: slo.id, window: firstPage.long });
    const about = `The ${slo.title} SLO: ${pct(slo.objective)} of ${slo.events} good over ${period}, a budget of ${pct(slo.budget)} ${slo.bad}.`;
    return [
      statPanel({
        title: `${slo.title[0]?.toUpperCase()}${slo.title.slice(1)} budget left`,
        description:
          `${about} Share of the ${period} error budget not yet spent (negative: overspent), per ${group}, from the ` +
          `recordings zero_plane_instance:slo_*:increase${formatDuration(config.slos.budgetStep)} of the selected instances` +
          ' (zero_plane:slo_error_budget_remaining:ratio for all of them). ' +
          `Counted in whole steps of ${formatDuration(config.slos.budgetStep)} (slos.budgetStep).`,
        queries: [{ expr: left, legend: g.legend }],
        unit: 'percentunit',
        decimals: 1,
        noValue: 'No data yet',
        steps: healthyFrom(0),
        w: 4,
        h: 6,
      }),
      statPanel({
        title: `${slo.title[0]?.toUpperCase()}${slo.title.slice(1)} budget: time to exhaustion`,
        description:
          `${about} How long the budget left lasts at the burn rate of the last ${formatDuration(firstPage.long)}: budget left × ${period} / burn rate. ` +
          `Red below ${exhaustion(config, firstPage.factor)} (what a ${firstPage.factor}× burn leaves, the first page), orange below ${period} ` +
          '(burning faster than the budget allows). "Not burning": no bad event in that window.',
        queries: [{ expr: `clamp_min(\n${left}\n, 0) * ${config.slos.period / 1000}\n/ ${on(g)}\n(${burnNow} > 0)`, legend: g.legend }],
        unit: 's',
        decimals: 0,
        noValue: 'Not burning',
        steps: [
          { value: null, color: 'red' },
          { value: config.slos.period / 1000 / firstPage.factor, color: 'orange' },
          { value: config.slos.period / 1000, color: 'green' },
        ],
        w: 4,
        h: 6,
      }),
      barGaugePanel({
        title: `${slo.title[0]?.toUpperCase()}${slo.title.slice(1)} burn rate per window`,
        description:
          `${about} Burn rate over each window the burn-rate alerts use: (bad ${slo.events} / ${slo.events}) / ${slo.budget}; 1 spends the budget ` +
          `exactly over ${period}. ${pairs.map((p) => `${p.tier === 'page' ? 'Page' : 'Ticket'} when over ${p.factor}× over both ${formatDuration(p.long)} and ${formatDuration(p.short)}`).join('; ')}. ` +
          `Orange from ${lowest('ticket')}×, red from ${lowest('page')}×. Per ${group}, from the raw series of the selected instances (the alerts' values for all of them).`,
        queries: sloWindows(config).map((window) => ({
          expr: rawSignal(config, g, { signal: 'burnRate', slo: slo.id, window }),
          legend: `${g.legend} ${formatDuration(window)}`,
          instant: true,
        })),
        unit: 'none',
        decimals: 1,
        min: 0,
        noValue: 'No traffic',
        color: burnSteps,
        w: 16,
        h: 6,
      }),
    ];
  });
  const budget: Section = { title: `Error budget (SLOs over ${period}, per ${group})`, panels: budgetPanels };

  const band: Section = {
    title: `Latency against the band (per ${group})`,
    panels: [
      timeseriesPanel({
        title: 'p99 against the band',
        description:
          `p99 of Zero-Plane latency per ${group} over $__rate_interval. Dashed lines: the floor ${t.floor} s and the ceiling ${t.ceiling} s ` +
          `(${describeBand(t, s.tolerance)}); the baseline series is the exporter's configured baseline. The model, route and cohort filters do not apply.`,
        queries: [
          { expr: `histogram_quantile(0.99, sum ${by(g, 'le')} (${rate(own(g, hitBucket, [], 'hit="true"'))}))`, legend: `${g.legend} p99` },
          { expr: `max ${by(g)} (${own(g, 'zero_plane_p99_baseline_seconds', [])})`, legend: `${g.legend} baseline` },
        ],
        unit: 's',
        steps: bandSteps(t),
        dashedSeries: '/ baseline$/',
        h: 9,
      }),
      sharePanel({
        title: 'Share of requests above the ceiling (exact)',
        description:
          `Share of Zero-Plane requests slower than the ceiling (${t.ceiling} s) over $__rate_interval, exact from the histogram bucket at the ceiling. ` +
          `p99 is above the ceiling exactly when this is above ${pct(P99_TAIL)} (dashed line). Per ${group}; the model, route and cohort filters do not apply.`,
        queries: [
          {
            expr:
              `(\nsum ${by(g)} (${rate(own(g, 'zero_plane_request_duration_seconds_count', [], 'hit="true"'))})\n- ${on(g)}\n` +
              `sum ${by(g)} (${rate(own(g, hitBucket, [], 'hit="true"', `le="${t.ceiling}"`))})\n)\n/ ${on(g)}\n` +
              `sum ${by(g)} (${rate(own(g, 'zero_plane_request_duration_seconds_count', [], 'hit="true"'))})`,
            legend: g.legend,
          },
        ],
        steps: healthyBelow(P99_TAIL),
        h: 9,
      }),
    ],
  };

  const req = 'zero_plane_requests_total';
  const warmup = 'zero_plane_warmup_total';
  const all = FILTERS;
  const traffic: Section = {
    title: 'Traffic (every filter applies)',
    panels: [
      stackedRates({
        title: 'Requests: Zero-Plane hit vs fallback',
        description: 'Requests per second from the gateway log, stacked: served by Zero-Plane (hit) or not (fallback). All filters apply.',
        queries: [
          { expr: `sum(${rate(own(g, req, all, 'hit="true"'))})`, legend: 'hit' },
          { expr: `sum(${rate(own(g, req, all, 'hit="false"'))})`, legend: 'fallback' },
        ],
      }),
      targetSharePanel({
        title: 'Hit rate (filtered)',
        description: `Hit rate of the selected traffic over $__rate_interval. Dashed line: the ${pct(s.hitRateTarget)} target. All filters apply.`,
        queries: [{ expr: ratioOfRates(own(g, req, all, 'hit="true"'), own(g, req, all)), legend: 'hit rate' }],
        target: s.hitRateTarget,
      }),
      eventBars({
        title: 'Degraded requests (filtered)',
        description: 'Degraded requests per $__rate_interval, by model, route and cohort. Healthy: none. All filters apply.',
        queries: [
          {
            expr: `sum by (model, route, cohort) (${increase(own(g, 'zero_plane_degraded_requests_total', all))}) > 0`,
            legend: '{{model}} {{route}} {{cohort}}',
          },
        ],
      }),
      targetSharePanel({
        title: 'Warm-up efficiency by model',
        description:
          `Warm-up hits / (hits + misses) of Zero-Plane requests, by model. Dashed line: the ${pct(s.warmupEfficiencyTarget)} target. ` +
          'zero_plane_warmup_total carries only a model label: the route and cohort filters do not apply.',
        queries: [
          {
            expr: ratioOfRates(own(g, warmup, ['model'], 'outcome="hit"'), own(g, warmup, ['model']), 'model'),
            legend: '{{model}}',
          },
        ],
        target: s.warmupEfficiencyTarget,
      }),
    ],
  };

  return buildDashboard(
    {
      uid: OVERVIEW_UID,
      title: 'Zero-Plane overview',
      description:
        `The four Zero-Plane signals against the thresholds of the alerting pack: hit rate ≥ ${pct(s.hitRateTarget)}, ` +
        `p99 within ${describeBand(t, s.tolerance)}, no degraded requests, warm-up efficiency ≥ ${pct(s.warmupEfficiencyTarget)}; ` +
        `and the error budgets of the SLOs over ${period}. Generated by zero-plane-exporter from its config; do not edit, regenerate.`,
      tags: TAGS,
    },
    [signals, budget, band, traffic, probeSection(config, g)],
    { grouping: g, editable: config.dashboards.editable },
  );
}
