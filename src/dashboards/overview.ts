// "Zero-Plane overview": the four signals as the alerts evaluate them, p99 against the band, the exact share
// above the ceiling, the P0 and the load-shedding gate; then traffic filtered by model, route and cohort.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { thresholds } from '../metrics/buckets.js';
import {
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
  type Section,
} from './panels.js';
import { P0_ALERT, P99_TAIL, rate, ratioOfRates, ruleNames, sel, increase } from './queries.js';
import { bandSteps, describeBand, pct, TAGS } from './shared.js';

export const OVERVIEW_UID = 'zero-plane-overview';

export function overviewDashboard(config: Config) {
  const s = config.signals;
  const t = thresholds(s);
  const r = ruleNames(config);
  const w = r.window;
  const job = sel(r.requests, ['job']);
  const perJob = `Per job, exactly what the alert rules evaluate (recording rules over ${w}); the model, route and cohort filters do not apply.`;
  const all = ['job', 'model', 'route', 'cohort'] as const;
  /** A recording rule's series for the selected jobs, one per job. */
  const perJobRule = (rule: string) => ({ expr: sel(rule, ['job']), legend: '{{job}}' });
  /** Keeps a per-job 0 where `x` has no series, for the selected jobs only. */
  const zeroPerJob = (x: string) => `(\n${x}\nor\n0 * ${r.requests}\n)\nand on (job)\n${job}`;

  const signals: Section = {
    title: `Signals (per job, as the alerts see them over ${w})`,
    panels: [
      statPanel({
        title: 'Hit rate',
        description: `Share of requests served by Zero-Plane. Healthy ≥ ${pct(s.hitRateTarget)}. ${perJob}`,
        queries: [perJobRule(r.hitRate)],
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
          `An estimate (histogram_quantile interpolates inside a bucket); the alerts decide the band exactly from the buckets at the floor and ceiling. ${perJob}`,
        queries: [perJobRule(r.drift)],
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
          `so the value is rounded up: any degraded request shows as at least 1, as the alert fires on > 0. ${perJob}`,
        queries: [{ expr: `ceil(${sel(r.degraded, ['job'])})`, legend: '{{job}}' }],
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
          `(baseline ${pct(s.warmupEfficiencyBaseline)}). ${perJob}`,
        queries: [perJobRule(r.warmupEfficiency)],
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
          `"condition": the expression of ${P0_ALERT} holds now (more than ${pct(P99_TAIL)} of Zero-Plane requests slower than the ` +
          `${t.ceiling} s ceiling and degraded requests > 0, over ${w}). "alert firing": Prometheus reports the alert firing ` +
          `(after its for: ${formatDuration(config.pack.for.p0)}). Per job.`,
        queries: [
          { expr: zeroPerJob(`count by (job) (\n${r.p0Condition}\n)`), legend: '{{job}} condition' },
          { expr: zeroPerJob(`max by (job) (ALERTS{alertname="${P0_ALERT}", alertstate="firing"})`), legend: '{{job}} alert firing' },
        ],
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
          `${config.gate.pauseLabel}="${config.gate.pauseValue}" fires (Alertmanager webhook). Per job.`,
        queries: [{ expr: `max by (job) (${sel('zero_plane_noncore_paused', ['job'])})`, legend: '{{job}}' }],
        noValue: 'Exporter not scraped',
        zero: { text: 'running', color: 'green' },
        one: { text: 'PAUSED', color: 'red' },
        w: 4,
        h: 5,
      }),
    ],
  };

  const band: Section = {
    title: `Latency against the band (per job, over ${w})`,
    panels: [
      timeseriesPanel({
        title: 'p99 against the band',
        description:
          `p99 of Zero-Plane latency (${r.p99}) per job. Dashed lines: the floor ${t.floor} s and the ceiling ${t.ceiling} s ` +
          `(${describeBand(t, s.tolerance)}); the baseline series is the exporter's configured baseline. ${perJob}`,
        queries: [
          { expr: sel(r.p99, ['job']), legend: '{{job}} p99' },
          { expr: `max by (job) (${sel('zero_plane_p99_baseline_seconds', ['job'])})`, legend: '{{job}} baseline' },
        ],
        unit: 's',
        steps: bandSteps(t),
        dashedSeries: '/ baseline$/',
        h: 9,
      }),
      sharePanel({
        title: 'Share of requests above the ceiling (exact)',
        description:
          `Share of Zero-Plane requests slower than the ceiling (${t.ceiling} s), exact from the histogram bucket at the ceiling ` +
          `(${r.aboveCeiling}). p99 is above the ceiling exactly when this is above ${pct(P99_TAIL)} (dashed line). ${perJob}`,
        queries: [perJobRule(r.aboveCeiling)],
        steps: healthyBelow(P99_TAIL),
        h: 9,
      }),
    ],
  };

  const req = 'zero_plane_requests_total';
  const warmup = 'zero_plane_warmup_total';
  const traffic: Section = {
    title: 'Traffic (filtered by job, model, route and cohort)',
    panels: [
      stackedRates({
        title: 'Requests: Zero-Plane hit vs fallback',
        description: 'Requests per second from the gateway log, stacked: served by Zero-Plane (hit) or not (fallback). All filters apply.',
        queries: [
          { expr: `sum(${rate(sel(req, all, 'hit="true"'))})`, legend: 'hit' },
          { expr: `sum(${rate(sel(req, all, 'hit="false"'))})`, legend: 'fallback' },
        ],
      }),
      targetSharePanel({
        title: 'Hit rate (filtered)',
        description: `Hit rate of the selected traffic over $__rate_interval. Dashed line: the ${pct(s.hitRateTarget)} target. All filters apply.`,
        queries: [{ expr: ratioOfRates(sel(req, all, 'hit="true"'), sel(req, all)), legend: 'hit rate' }],
        target: s.hitRateTarget,
      }),
      eventBars({
        title: 'Degraded requests (filtered)',
        description: 'Degraded requests per $__rate_interval, by model, route and cohort. Healthy: none. All filters apply.',
        queries: [
          {
            expr: `sum by (model, route, cohort) (${increase(sel('zero_plane_degraded_requests_total', all))}) > 0`,
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
            expr: ratioOfRates(sel(warmup, ['job', 'model'], 'outcome="hit"'), sel(warmup, ['job', 'model']), 'model'),
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
        `p99 within ${describeBand(t, s.tolerance)}, no degraded requests, warm-up efficiency ≥ ${pct(s.warmupEfficiencyTarget)}. ` +
        'Generated by zero-plane-exporter from its config; do not edit, regenerate.',
      tags: TAGS,
    },
    [signals, band, traffic],
  );
}
