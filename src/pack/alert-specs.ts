// Every alert of the pack as data (conditions.ts): the alerts of docs/contract.md §7 with their traffic guards, the
// SLO burn-rate pairs, and the exporter's own health. rules.ts renders them; report and the dashboards
// read the same specs.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { thresholds } from '../metrics/buckets.js';
import type { AlertSpec, Comparison, SignalName, SignalRef } from './conditions.js';
import { ms, pct, pct4Digits } from './figures.js';
import { by, on, own, type Grouping } from './grouping.js';
import { ruleNames } from './recording-rules.js';
import { burnPairs, errorRatioThreshold, exhaustion, slothLabels, slos, SLO_ALERTS } from './slos.js';

/** The P0: drift above the ceiling and degraded requests together. */
export const P0_ALERT = 'ZeroPlaneP0DriftWithDegraded';

/** The alerts of docs/contract.md §7, in the order the runbook lists them. */
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

/** Alerts beyond docs/contract.md §7: the SLO burn rates and two more on the exporter itself (runbook order). */
export const MORE_ALERT_NAMES = [SLO_ALERTS['hit-rate'], SLO_ALERTS.latency, 'ZeroPlaneExporterAbsent', 'ZeroPlaneExporterGone', 'ZeroPlaneRequestsStopped', 'ZeroPlaneHeadersNotFound'] as const;

export type AlertName = (typeof ALERT_NAMES)[number] | (typeof MORE_ALERT_NAMES)[number];

/** Share of requests that may be slower than the ceiling while p99 still is not. */
export const P99_TAIL = 0.01;

/** A burn factor or its error ratio in words: 4 digits (0.9333×, not 0.933333333333×). */
const x = (factor: number) => `${Number(factor.toPrecision(4))}`;
const pct4 = (ratio: number) => `${pct4Digits(ratio)} %`;

export function alertSpecs(config: Config, g: Grouping): AlertSpec[] {
  const s = config.signals;
  const p = config.pack;
  const t = thresholds(s);
  const n = ruleNames(config);
  const w = n.window;
  const window = p.rateWindow;
  const min = config.alerts.minRequests;
  const at = (signal: SignalName, op: Comparison['op'], value: number): Comparison => ({ ref: { signal, window }, op, value });
  /** The alert's group, then a `query` of a recording rule for that same group. */
  const where = g.labelsText;
  const valueOf = (rule: string, format: string, otherwise = '', extra = '') =>
    `{{ with query (printf "${rule}{${extra}${g.queryMatchers}}" ${g.queryArgs}) }}{{ . | first | value | ${format} }}${otherwise ? `{{ else }}${otherwise}` : ''}{{ end }}`;
  const driftOf = valueOf(n.drift, 'humanizePercentage', 'unknown');
  const band = `[${ms(t.floor)}, ${ms(t.ceiling)}] (baseline ${ms(t.baseline)} ± ${pct(s.tolerance)})`;
  const eventWords: Partial<Record<SignalRef['signal'], string>> = {
    requests: 'requests',
    hitRequests: 'Zero-Plane requests',
    cohortHitRequests: 'Zero-Plane requests of the cohort',
    warmupOutcomes: 'warm-up outcomes',
  };
  // Alerts over the 5 m window keep firing through a brief dip, so one incident notifies once.
  const windowed = { keepFiringFor: p.keepFiringFor, per: [] as string[] };
  const health = { keepFiringFor: 0, per: [] as string[], guards: [] as Comparison[] };

  const specs: AlertSpec[] = [
    {
      alert: P0_ALERT,
      labels: { severity: 'critical', priority: 'P0' },
      condition: { combine: 'all', comparisons: [at('aboveCeiling', '>', P99_TAIL), at('degraded', '>', 0)] },
      guards: [at('hitRequests', '>=', min)],
      for: p.for.p0,
      ...windowed,
      summary: `Zero-Plane p99 is above +${pct(s.tolerance)} of its baseline while degraded requests are served.`,
      description:
        `${where}: {{ $value | humanizePercentage }} of Zero-Plane requests took longer than ${ms(t.ceiling)} over ${w} ` +
        `(p99 drift ${driftOf}), and ${valueOf(n.degraded, 'printf "%.0f"')} requests were degraded. ` +
        `Non-core calls should pause (load-shedding gate).`,
    },
    {
      alert: 'ZeroPlaneP99DriftOutOfBand',
      labels: { severity: 'warning' },
      condition: { combine: 'any', comparisons: [at('aboveCeiling', '>', P99_TAIL), at('atOrBelowFloor', '>=', 1 - P99_TAIL)] },
      guards: [at('hitRequests', '>=', min)],
      for: p.for.driftOutOfBand,
      ...windowed,
      summary: `Zero-Plane p99 latency is outside its ±${pct(s.tolerance)} band.`,
      description: `${where}: p99 of Zero-Plane latency over ${w} is outside ${band}; p99 drift ${driftOf}.`,
    },
    {
      alert: 'ZeroPlaneCanaryRollback',
      labels: { severity: 'critical' },
      condition: { combine: 'all', comparisons: [at('cohortAboveCeiling', '>', P99_TAIL)] },
      guards: [at('cohortHitRequests', '>=', min)],
      for: p.for.canaryRollback,
      keepFiringFor: p.keepFiringFor,
      per: ['cohort'],
      summary: 'A canary cohort has Zero-Plane p99 above the ceiling: roll it back.',
      description: `${where}: cohort {{ $labels.cohort }} has {{ $value | humanizePercentage }} of Zero-Plane requests slower than ${ms(t.ceiling)} (more than 1 %, so p99 is above the ceiling).`,
    },
    {
      alert: 'ZeroPlaneHitRateLow',
      labels: { severity: 'warning' },
      condition: { combine: 'all', comparisons: [at('hitRate', '<', s.hitRateTarget)] },
      // All requests, not only hits: a collapse to 0 % hits must still be able to fire.
      guards: [at('requests', '>=', min)],
      for: p.for.hitRateLow,
      ...windowed,
      summary: `Zero-Plane hit rate is below ${pct(s.hitRateTarget)}.`,
      description: `${where}: {{ $value | humanizePercentage }} of requests were served by Zero-Plane over ${w} (healthy ≥ ${pct(s.hitRateTarget)}).`,
    },
    {
      alert: 'ZeroPlaneDegradedRequests',
      labels: { severity: 'warning' },
      condition: { combine: 'all', comparisons: [at('degraded', '>', 0)] },
      guards: [],
      for: p.for.degraded,
      ...windowed,
      summary: 'Degraded requests are being served.',
      description: `${where}: {{ $value | printf "%.0f" }} requests carried degraded=?1 over ${w} (healthy: 0).`,
    },
    {
      alert: 'ZeroPlaneWarmupEfficiencyLow',
      labels: { severity: 'warning' },
      condition: { combine: 'all', comparisons: [at('warmupEfficiency', '<', s.warmupEfficiencyTarget)] },
      guards: [at('warmupOutcomes', '>=', min)],
      for: p.for.warmupEfficiencyLow,
      ...windowed,
      summary: `Zero-Plane warm-up efficiency stays below ${pct(s.warmupEfficiencyTarget)}.`,
      description: `${where}: warm-up efficiency is {{ $value | humanizePercentage }} over ${w} (alert below ${pct(s.warmupEfficiencyTarget)}, baseline ${pct(s.warmupEfficiencyBaseline)}).`,
    },
    {
      alert: 'ZeroPlaneOptInHeaderMalformed',
      labels: { severity: 'warning' },
      condition: { combine: 'all', comparisons: [at('optInMalformed', '>', 0)] },
      guards: [],
      for: p.for.optInMalformed,
      ...windowed,
      summary: `Requests carry a malformed ${config.headers.optIn.name} opt-in header.`,
      description: `${where}: {{ $value | printf "%.0f" }} requests over ${w} sent ${config.headers.optIn.name} with a value that is not exactly "${config.headers.optIn.value}"; zero_plane_opt_in_header_total{state="malformed"} tells the defect (invisible_char, whitespace, case, value).`,
    },
    {
      alert: 'ZeroPlaneExporterDown',
      labels: { severity: 'warning' },
      expr: `${own(g, 'up')} == 0`,
      for: p.for.exporterDown,
      ...health,
      summary: 'zero-plane-exporter cannot be scraped.',
      description: `${where} / {{ $labels.instance }}: the scrape fails, so no Zero-Plane signal or alert is current.`,
    },
    {
      alert: 'ZeroPlaneLogSourceStalled',
      labels: { severity: 'warning' },
      expr: `time() - ${own(g, 'zero_plane_exporter_last_record_timestamp_seconds')} > ${p.stalledAfter / 1000}`,
      for: p.for.sourceStalled,
      ...health,
      summary: 'No new gateway log record is arriving.',
      description: `${where} / {{ $labels.instance }}: the newest record from {{ $labels.source }} is {{ $value | humanizeDuration }} old (alert after ${formatDuration(p.stalledAfter)}).`,
    },
    {
      alert: 'ZeroPlaneParseErrorsHigh',
      labels: { severity: 'warning' },
      condition: { combine: 'all', comparisons: [at('parseErrorRatio', '>', s.parseErrorRatioMax)] },
      guards: [],
      for: p.for.parseErrorsHigh,
      ...windowed,
      summary: 'Many gateway log lines cannot be read.',
      description: `${where}: {{ $value | humanizePercentage }} of log lines were skipped over ${w} (alert above ${pct(s.parseErrorRatioMax)}); zero_plane_exporter_parse_errors_total{reason} says why.`,
    },
  ];
  // Say the guard where it applies, so nobody wonders why a quiet window with one slow request is silent.
  for (const spec of specs) {
    const guard = spec.guards[0];
    if (guard) spec.description += ` Needs at least ${min} ${eventWords[guard.ref.signal] ?? 'events'} per ${w}.`;
  }

  for (const slo of slos(config)) {
    for (const pair of burnPairs(config)) {
      const long = formatDuration(pair.long);
      const short = formatDuration(pair.short);
      // `>` like every "above" threshold of the pack (and Sloth's), on the error ratio against factor × budget.
      const limit = errorRatioThreshold(slo, pair);
      const burn = (window: number): Comparison => ({ ref: { signal: 'sloErrorRatio', slo: slo.id, window }, op: '>', value: limit });
      const events: Comparison = { ref: { signal: 'sloEvents', slo: slo.id, window: pair.long }, op: '>=', value: min };
      const period = formatDuration(config.slos.period);
      specs.push({
        alert: slo.alert,
        // sloth_*: as Sloth labels its alerts, so its UI lists them under the SLO (ALERTS{sloth_id!=""}).
        labels: { severity: pair.tier === 'page' ? 'critical' : 'warning', slo: slo.id, long_window: long, short_window: short, ...slothLabels(config, slo.id), sloth_severity: pair.tier },
        condition: { combine: 'all', comparisons: [burn(pair.long), burn(pair.short)] },
        guards: [events],
        for: 0,
        keepFiringFor: 0,
        per: [],
        summary: `The Zero-Plane ${slo.title} SLO is burning its ${period} error budget ${x(pair.factor)}× too fast.`,
        description:
          `${where}: over ${long}, ${slo.bad} were {{ $value | humanizePercentage }} of ${slo.events}, more than ${pct4(limit)} ` +
          `(${x(pair.factor)}× the ${pct(slo.budget)} budget of the ${pct(slo.objective)} ${slo.title} objective over ${period}), and more than that over ${short} too. ` +
          `At ${x(pair.factor)}× the whole budget lasts ${exhaustion(config, pair.factor)}. ` +
          `Budget left over ${period}: ${valueOf(n.sloErrorBudgetRemaining, 'humanizePercentage', 'unknown', `slo='${slo.id}',`)}. ` +
          `Needs at least ${min} ${slo.events} over ${long}.`,
      });
    }
  }

  specs.push(
    {
      alert: 'ZeroPlaneExporterAbsent',
      labels: { severity: 'warning' },
      expr: `absent(${own(g, 'up')})`,
      for: p.for.exporterAbsent,
      ...health,
      summary: 'Prometheus has no zero-plane-exporter target: every Zero-Plane alert is silent.',
      description: `No series matches up{${g.selector}} (pack.selector): the exporter's target is gone from service discovery or the scrape config, so no Zero-Plane signal is collected and no other alert of the pack can fire.`,
    },
    {
      alert: 'ZeroPlaneExporterGone',
      labels: { severity: 'warning' },
      // Per group: ZeroPlaneExporterAbsent only sees "no series at all", so one cluster losing its targets
      // while the others stay would go unnoticed. A group gone longer than goneLookback is forgotten.
      expr: `group ${by(g)} (${own(g, 'up')} offset ${formatDuration(p.goneLookback)})\nunless ${on(g)}\ngroup ${by(g)} (${own(g, 'up')})`,
      for: p.for.exporterGone,
      ...health,
      summary: 'An aggregation group had zero-plane-exporter targets and has none now: its Zero-Plane alerts are silent.',
      description:
        `${where}: Prometheus scraped the exporter here ${formatDuration(p.goneLookback)} ago and has no target matching up{${g.selector}} here now ` +
        `(pack.selector, per ${g.labelWords}): service discovery lost it, the scrape config changed, or the gateway was removed. ` +
        `Fires for up to ${formatDuration(p.goneLookback)} (pack.goneLookback) after the last target left.`,
    },
    {
      alert: 'ZeroPlaneRequestsStopped',
      labels: { severity: 'warning' },
      // `unless`: a group with no request series at all (never any traffic) fires too.
      expr: `max ${by(g)} (${own(g, 'up')}) == 1\nunless ${on(g)}\nsum ${by(g)} (increase(${own(g, 'zero_plane_requests_total')}[${formatDuration(p.stalledAfter)}])) > 0`,
      for: p.for.requestsStopped,
      ...health,
      summary: 'zero-plane-exporter is up but counts no requests.',
      description: `${where}: the exporter is scraped, yet no request was counted for ${formatDuration(p.stalledAfter)}: the gateway serves no traffic, stopped writing its log, or the exporter reads the wrong file.`,
    },
    {
      alert: 'ZeroPlaneHeadersNotFound',
      labels: { severity: 'warning' },
      // The exporter sets the gauge only after input.headerWatch (1000 records or 5 m) without one.
      expr: `${own(g, 'zero_plane_exporter_headers_unseen')} == 1`,
      for: p.for.headersNotFound,
      ...health,
      summary: 'A log source carries no Zero-Plane response header where its preset looks: its hit rate and degraded count mean nothing.',
      description:
        `${where} / {{ $labels.instance }}: none of the records from {{ $labels.source }} carried ${config.headers.layerId.name} or another wanted response header ` +
        `where its input preset looks, so every request counts as a non-hit and none as degraded. The exporter's log ("no header found") names the paths it looked at and the mapping or preset that would find them.`,
    },
  );
  return specs;
}
