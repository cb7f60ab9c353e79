// The metrics as plain data, and adding one such state to live metrics: the metrics part of a checkpoint
// (checkpoint/checkpoint-state.ts) and what a `report` worker thread sends back. No schema library here:
// the worker thread imports this, and every module it loads is paid for in its own heap.
import type { ExporterMetrics } from './exporter-metrics.js';
import { GaugeFamily, HistogramFamily } from './families.js';
import { keyOf } from './series-limit.js';

/** Every series and label admission as plain data (structured-clone safe). */
export interface MetricsState {
  histogramBounds: number[];
  /** Family name → [labels, value] per series. */
  series: Record<string, [string[], number][]>;
  histograms: Record<string, { labels: string[]; counts: number[]; sum: number; count: number }[]>;
  /** Bounded label → the values it admitted, in order. */
  labelValues: Record<string, string[]>;
}

/** Every series and label admission of `metrics`, as a deep copy in plain data. */
export function metricsState(metrics: ExporterMetrics): MetricsState {
  const series: MetricsState['series'] = {};
  const histograms: MetricsState['histograms'] = {};
  for (const family of metrics.families()) {
    if (family instanceof HistogramFamily) {
      histograms[family.name] = family.entries().map((r) => ({ labels: [...r.labels], counts: [...r.counts], sum: r.sum, count: r.count }));
    } else {
      series[family.name] = family.entries().map(([labels, value]) => [[...labels], value]);
    }
  }
  const labelValues: MetricsState['labelValues'] = {};
  for (const [label, limiter] of Object.entries(metrics.limiters())) labelValues[label] = limiter.values();
  return { histogramBounds: [...metrics.duration.bounds], series, histograms, labelValues };
}

/**
 * Whether adding `later` (metrics of the lines that follow, counted from fresh metrics) to `metrics` gives
 * exactly what one pass over all the lines would have: the later lines admitted every label value they saw
 * and made no overflow series, all the values together fit each label limit, and all the series together
 * fit each family's series limit. Then in one pass every one of those values and series would also have
 * been admitted, so none of the later lines maps to __other__ differently. What `metrics` itself overflowed
 * earlier does not matter: those lines were read by the same limits either way. Cut values (too_long) do
 * not matter either: a cut depends on the value alone.
 */
export function mergesExactly(metrics: ExporterMetrics, later: MetricsState): boolean {
  const replaced = (later.series[metrics.labelOverflow.name] ?? []).some(([labels, v]) => labels[1] !== 'too_long' && v > 0);
  const folded = (later.series[metrics.seriesOverflow.name] ?? []).some(([, v]) => v > 0);
  if (replaced || folded) return false;
  const limitsFit = Object.entries(metrics.limiters()).every(([label, limiter]) => limiter.fitsWith(later.labelValues[label] ?? []));
  return limitsFit && metrics.families().every((family) => seriesFit(family, later));
}

/** Whether the family's series and the ones `later` has for it, together, fit its series limit. */
function seriesFit(family: ReturnType<ExporterMetrics['families']>[number], later: MetricsState): boolean {
  const max = family.limit?.maxSeries;
  if (max === undefined) return true;
  const rows = family instanceof HistogramFamily ? (later.histograms[family.name] ?? []).map((r) => r.labels) : (later.series[family.name] ?? []).map(([labels]) => labels);
  const seen = new Set<string>();
  let extra = 0;
  for (const labels of rows) {
    const key = keyOf(labels);
    if (seen.has(key)) continue;
    seen.add(key);
    if (!family.has(labels)) extra++;
  }
  return family.size + extra <= max;
}

/**
 * Adds `later` to `metrics`: counters and histograms add, the last-record gauge keeps the larger value,
 * label admissions are appended in their order. Exact only where mergesExactly said so. New series are
 * appended in the order `later` created them, which is the order one pass would have created them in.
 */
export function mergeMetricsState(metrics: ExporterMetrics, later: MetricsState): void {
  const bounds = metrics.duration.bounds;
  if (later.histogramBounds.length !== bounds.length || later.histogramBounds.some((b, i) => b !== bounds[i])) {
    throw new Error('cannot merge metrics taken with other histogram bounds');
  }
  for (const family of metrics.families()) {
    if (family instanceof HistogramFamily) {
      for (const row of later.histograms[family.name] ?? []) {
        const s = family.handle(row.labels);
        for (let i = 0; i < row.counts.length; i++) (s.counts[i] as number) += row.counts[i] as number;
        s.sum += row.sum;
        s.count += row.count;
      }
    } else if (family instanceof GaugeFamily) {
      for (const [labels, value] of later.series[family.name] ?? []) {
        if (!family.has(labels) || value > family.get(labels)) family.set(labels, value);
      }
    } else {
      for (const [labels, value] of later.series[family.name] ?? []) family.inc(labels, value);
    }
  }
  for (const [label, limiter] of Object.entries(metrics.limiters())) limiter.admit(later.labelValues[label] ?? []);
}
