// The `report` JSON (SPEC §6): the same numbers the exporter exposes, over everything read.
import type { Config } from '../config/schema.js';
import { thresholds, type Thresholds } from '../metrics/buckets.js';
import type { Pipeline } from '../pipeline.js';
import { summarize, type SignalValues } from '../windows/summarize.js';
import { evaluateAlerts, type AlertVerdict } from './alerts.js';

export interface Report extends SignalValues {
  lines: number;
  records: number;
  parseErrors: Record<string, number>;
  headerParseErrors: Record<string, number>;
  cachedCount: number;
  downgrades: Record<string, number>;
  throttleModes: Record<string, number>;
  optInHeader: Record<string, number>;
  optInDefects: Record<string, number>;
  warmupHits: number;
  warmupMisses: number;
  thresholds: Thresholds & { hitRateTarget: number; warmupEfficiencyTarget: number };
  alerts: AlertVerdict[];
}

export function buildReport(pipeline: Pipeline, config: Config): Report {
  const m = pipeline.metrics;
  const total = pipeline.total;
  if (total === undefined) throw new Error('buildReport needs a pipeline created with keepTotals');
  const values = summarize(total, config.signals);
  const optInHeader = { valid: m.optIn.sum({ state: 'valid' }), missing: m.optIn.sum({ state: 'missing' }), malformed: m.optIn.sum({ state: 'malformed' }) };
  const parseErrors = byFirstLabel(m.parseErrors.entries());
  const lines = m.lines.sum();
  const parseErrorCount = Object.values(parseErrors).reduce((a, b) => a + b, 0);
  return {
    lines,
    records: m.requests.sum(),
    parseErrors,
    headerParseErrors: byFirstLabel(m.headerParseErrors.entries()),
    ...values,
    warmupHits: total.warmupHits,
    warmupMisses: total.warmupMisses,
    cachedCount: m.cached.sum(),
    downgrades: byFirstLabel(m.downgrades.entries()),
    throttleModes: byFirstLabel(m.throttleModes.entries()),
    optInHeader,
    optInDefects: byFirstLabel(m.optIn.entries().filter(([labels]) => labels[0] === 'malformed').map(([l, v]) => [l.slice(1), v])),
    thresholds: { ...thresholds(config.signals), hitRateTarget: config.signals.hitRateTarget, warmupEfficiencyTarget: config.signals.warmupEfficiencyTarget },
    alerts: evaluateAlerts(
      { values, latency: m.duration, malformedOptIn: optInHeader.malformed, lines, parseErrors: parseErrorCount, warmupOutcomes: total.warmupHits + total.warmupMisses },
      config,
    ),
  };
}

/** Sums series by their first label value, sorted by that value for stable output. */
function byFirstLabel(entries: [readonly string[], number][]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [labels, value] of entries) {
    const key = labels[0] as string;
    out[key] = (out[key] ?? 0) + value;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}
