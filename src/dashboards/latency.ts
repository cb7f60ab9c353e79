// "Zero-Plane latency": the distribution from the histogram buckets (heatmap, quantiles), the exporter's own
// window gauges (p50/p99/p99.9 and σ), canary cohorts against the rest and their σ of p99 drift (the convergence
// radius), the deterministic bandwidth demand, and a per model/route breakdown.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { thresholds } from '../metrics/buckets.js';
import {
  buildDashboard,
  healthyBelow,
  heatmapPanel,
  secondsPanel,
  sharePanel,
  targetSharePanel,
  timeseriesPanel,
  type Section,
} from './panels.js';
import { groupingOf, type Grouping } from '../pack/grouping.js';
import { nonCanaryCohortRegex } from '../pack/rules.js';
import { FILTERS, own, P99_TAIL, rate, ratioOfRates } from './queries.js';
import { bandSteps, describeBand, pct, TAGS } from './shared.js';

export const LATENCY_UID = 'zero-plane-latency';

export function latencyDashboard(config: Config, g: Grouping = groupingOf(config)) {
  const s = config.signals;
  const t = thresholds(s);
  const all = FILTERS;
  const bucket = 'zero_plane_request_duration_seconds_bucket';
  const count = 'zero_plane_request_duration_seconds_count';
  const hitBuckets = (by: string, ...extra: string[]) => `sum by (${by}) (${rate(own(g, bucket, all, 'hit="true"', ...extra))})`;
  const quantile = (q: number, by = 'le', ...extra: string[]) => `histogram_quantile(${q}, ${hitBuckets(by, ...extra)})`;
  const stable = nonCanaryCohortRegex(config);
  const canary = `cohort!~"${stable}"`;
  const rest = `cohort=~"${stable}"`;
  /** Exact share of hit requests slower than the ceiling, from the bucket at the ceiling. */
  const aboveCeiling = (by: string, extra: string) => {
    const total = `sum${by ? ` by (${by})` : ''} (${rate(own(g, count, all, 'hit="true"', extra))})`;
    const within = `sum${by ? ` by (${by})` : ''} (${rate(own(g, bucket, all, 'hit="true"', extra, `le="${t.ceiling}"`))})`;
    return `(${total} - ${within})\n/\n${total}`;
  };
  const stableList = ['(none)', ...s.stableCohorts].join(', ');
  const req = 'zero_plane_requests_total';
  const dispersion = formatDuration(config.pack.dispersionWindow);
  const evaluation = formatDuration(config.pack.evaluationInterval);
  // In hours when whole, as the recording rule's name (max24h), where formatDuration would say 1d.
  const capacityWindow = config.pack.capacityWindow % 3_600_000 === 0 ? `${config.pack.capacityWindow / 3_600_000}h` : formatDuration(config.pack.capacityWindow);
  const band = `Dashed lines: the floor ${t.floor} s and the ceiling ${t.ceiling} s, ${describeBand(t, s.tolerance)}.`;

  const distribution: Section = {
    title: 'Distribution of Zero-Plane latency (every filter applies)',
    panels: [
      heatmapPanel({
        title: 'Latency heatmap',
        description:
          'Zero-Plane (hit) requests per second in each zero_plane_request_duration_seconds bucket. The buckets include the fast target, ' +
          `the floor, the baseline and the ceiling exactly (${t.fastTarget}, ${t.floor}, ${t.baseline}, ${t.ceiling} s). All filters apply.`,
        queries: [{ expr: hitBuckets('le'), legend: '{{le}}', format: 'heatmap' }],
        unit: 'reqps',
        yUnit: 's',
        h: 10,
      }),
      secondsPanel({
        title: 'p50 / p99 / p99.9 from the buckets',
        description:
          `Quantiles of Zero-Plane latency over $__rate_interval, interpolated inside buckets by histogram_quantile. ${band} All filters apply.`,
        queries: [
          { expr: quantile(0.5), legend: 'p50' },
          { expr: quantile(0.99), legend: 'p99' },
          { expr: quantile(0.999), legend: 'p99.9' },
        ],
        steps: bandSteps(t),
        h: 10,
      }),
    ],
  };

  const window: Section = {
    title: 'The exporter\'s window (per instance, exact quantiles)',
    panels: [
      secondsPanel({
        title: 'Window quantiles',
        description:
          `p50, p99 and p99.9 of Zero-Plane latency over the exporter's sliding window (${formatDuration(config.window.duration)}), ` +
          `from its DDSketch (within 0.5 % of the exact value): zero_plane_window_latency_seconds{quantile}. ${band} ` +
          'Per instance; the model, route and cohort filters do not apply.',
        queries: [
          { expr: own(g, 'zero_plane_window_latency_seconds', [], 'quantile="0.5"'), legend: '{{instance}} p50' },
          { expr: own(g, 'zero_plane_window_latency_seconds', [], 'quantile="0.99"'), legend: '{{instance}} p99' },
          { expr: own(g, 'zero_plane_window_latency_seconds', [], 'quantile="0.999"'), legend: '{{instance}} p99.9' },
        ],
        steps: bandSteps(t),
      }),
      secondsPanel({
        title: 'Window standard deviation (σ)',
        description:
          `Standard deviation of Zero-Plane latency over the exporter's sliding window: zero_plane_window_latency_stddev_seconds. ` +
          'Deterministic latency keeps it small and flat. Per instance; the model, route and cohort filters do not apply.',
        queries: [{ expr: own(g, 'zero_plane_window_latency_stddev_seconds', []), legend: '{{instance}} σ' }],
      }),
    ],
  };

  const cohorts: Section = {
    title: 'Canary cohorts against the rest',
    panels: [
      secondsPanel({
        title: 'p99: canary cohorts vs the rest',
        description:
          `p99 of Zero-Plane latency for each canary cohort (any cohort other than ${stableList}) and for the rest together. ${band} ` +
          'All filters apply.',
        queries: [
          { expr: quantile(0.99, 'cohort, le', canary), legend: 'canary {{cohort}}' },
          { expr: quantile(0.99, 'le', rest), legend: 'stable and no cohort' },
        ],
        steps: bandSteps(t),
      }),
      sharePanel({
        title: 'Share above the ceiling: canary cohorts vs the rest',
        description:
          `Share of Zero-Plane requests slower than the ceiling (${t.ceiling} s), exact from the bucket at the ceiling. ` +
          `A canary above ${pct(P99_TAIL)} (dashed line) has p99 above the ceiling: ZeroPlaneCanaryRollback fires on this over ` +
          `${formatDuration(config.pack.rateWindow)}. All filters apply.`,
        queries: [
          { expr: aboveCeiling('cohort', canary), legend: 'canary {{cohort}}' },
          { expr: aboveCeiling('', rest), legend: 'stable and no cohort' },
        ],
        steps: healthyBelow(P99_TAIL),
      }),
      sharePanel({
        title: `Convergence radius: σ of p99 drift per cohort over ${dispersion}`,
        description:
          `The standard deviation, over the last ${dispersion}, of each cohort's p99 drift (p99 / ${t.baseline} s − 1 over $__rate_interval, ` +
          `sampled every ${evaluation}): how far its p99 wanders, the article's convergence radius. A cohort tighter than the rest is the ` +
          `better one even when its mean is no faster; compare cohorts with a verdict and an interval with \`zero-plane-exporter compare\`. ` +
          `zero_plane_cohort:p99_drift:stddev_over_time${dispersion} records the same over ${formatDuration(config.pack.rateWindow)} windows. All filters apply.`,
        queries: [{ expr: `stddev_over_time((${quantile(0.99, 'cohort, le')} / ${t.baseline} - 1)[${dispersion}:${evaluation}])`, legend: '{{cohort}}' }],
      }),
    ],
  };

  const capacity: Section = {
    title: 'Capacity',
    panels: [
      timeseriesPanel({
        title: 'Deterministic bandwidth demand',
        description:
          `Plan capacity on the latency fingerprint, not the average: (1 + the maximum p99 drift over the last ${capacityWindow}) × the current request rate ` +
          `(all requests per second), in baseline requests per second: capacity for that many requests at the baseline p99 (${t.baseline} s) covers ` +
          `the current traffic at the day's worst p99. The drift is p99 / ${t.baseline} s − 1 over $__rate_interval, sampled every ${formatDuration(config.pack.rateWindow)}; ` +
          `zero_plane:deterministic_bandwidth_demand:rate${formatDuration(config.pack.rateWindow)} records the same per job. All filters apply.`,
        queries: [
          {
            expr: `(1 + max_over_time((${quantile(0.99)} / ${t.baseline} - 1)[${capacityWindow}:${formatDuration(config.pack.rateWindow)}]))\n* ${`sum (${rate(own(g, req, all))})`}`,
            legend: 'demand',
          },
          { expr: `sum (${rate(own(g, req, all))})`, legend: 'request rate' },
        ],
        unit: 'reqps',
        min: 0,
      }),
    ],
  };

  const breakdown: Section = {
    title: 'Per model and route',
    collapsed: true,
    panels: [
      secondsPanel({
        title: 'p99 by model',
        description: `p99 of Zero-Plane latency per model. ${band} All filters apply.`,
        queries: [{ expr: quantile(0.99, 'model, le'), legend: '{{model}}' }],
        steps: bandSteps(t),
      }),
      secondsPanel({
        title: 'p99 by route',
        description: `p99 of Zero-Plane latency per route. ${band} All filters apply.`,
        queries: [{ expr: quantile(0.99, 'route, le'), legend: '{{route}}' }],
        steps: bandSteps(t),
      }),
      timeseriesPanel({
        title: 'Requests by model and route',
        description: 'Requests per second (hit and fallback) per model and route. All filters apply.',
        queries: [{ expr: `sum by (model, route) (${rate(own(g, req, all))})`, legend: '{{model}} {{route}}' }],
        unit: 'reqps',
        min: 0,
      }),
      targetSharePanel({
        title: 'Hit rate by model and route',
        description: `Share served by Zero-Plane per model and route. Dashed line: the ${pct(s.hitRateTarget)} target. All filters apply.`,
        queries: [{ expr: ratioOfRates(own(g, req, all, 'hit="true"'), own(g, req, all), 'model, route'), legend: '{{model}} {{route}}' }],
        target: s.hitRateTarget,
      }),
    ],
  };

  return buildDashboard(
    {
      uid: LATENCY_UID,
      title: 'Zero-Plane latency',
      description:
        `Zero-Plane latency in depth: the distribution from the histogram buckets, the exporter's exact window quantiles and σ, ` +
        `canary cohorts against the rest with their convergence radius, the deterministic bandwidth demand, and per model and route; the band is ${describeBand(t, s.tolerance)}. ` +
        'Generated by zero-plane-exporter from its config; do not edit, regenerate.',
      tags: TAGS,
    },
    [distribution, window, cohorts, capacity, breakdown],
    { grouping: g, editable: config.dashboards.editable },
  );
}
