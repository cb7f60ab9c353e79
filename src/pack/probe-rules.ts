// "Probes fall back from Zero-Plane": the recording rule and the alert over the synthetic probe's series
// (metrics/probe-names.ts), which Prometheus scrapes from /probe with the multi-target pattern (docs/probe.md).
// A probe series carries the probe job's labels and instance = the target, so the rule keeps the aggregation
// labels and the instance: one alert per probed target. The probe job is the user's own (not pack.selector's
// exporter job): the series are found by their name, which only this exporter's probe writes.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { PROBE_DOWNGRADE, PROBE_FALLBACK, PROBE_OPT_IN } from '../metrics/probe-names.js';
import type { AlertSpec } from './conditions.js';
import { pct } from './figures.js';
import { by, type Grouping } from './grouping.js';
import type { RecordingRule } from './recording-rules.js';

export const PROBE_FALLBACK_ALERT = 'ZeroPlaneProbeFallback';

/** `zero_plane:probe_fallback:ratio_avg5m`: the share of a target's probes over pack.rateWindow answered, but not by Zero-Plane. */
export function probeFallbackRule(config: Config): string {
  return `zero_plane:probe_fallback:ratio_avg${formatDuration(config.pack.rateWindow)}`;
}

export function probeRules(config: Config, g: Grouping): RecordingRule[] {
  const w = formatDuration(config.pack.rateWindow);
  return [{ record: probeFallbackRule(config), expr: `avg ${by(g, 'instance')} (avg_over_time(${PROBE_FALLBACK}[${w}]))` }];
}

export function probeSpecs(config: Config, g: Grouping): AlertSpec[] {
  const a = config.probe.fallbackAlert;
  const w = formatDuration(config.pack.rateWindow);
  return [
    {
      alert: PROBE_FALLBACK_ALERT,
      labels: { severity: 'warning' },
      keepFiringFor: 0,
      per: [],
      guards: [],
      expr: `${probeFallbackRule(config)} > ${a.ratio}`,
      for: a.for,
      summary: 'Synthetic probes are answered, but not by the Zero-Plane layer.',
      description:
        `${g.labelsText} {{ $labels.instance }}: {{ $value | humanizePercentage }} of the probes over ${w} got an answer that was not served by Zero-Plane ` +
        `(more than ${pct(a.ratio)}): the opt-in header is dropped or malformed on the way, the request is downgraded (${PROBE_DOWNGRADE}), ` +
        `or the layer is falling back silently. ${PROBE_OPT_IN} says what the probe sent.`,
    },
  ];
}
