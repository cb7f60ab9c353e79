// What a parse worker's metrics gained since it last said (cli/parse-worker.ts): the series created or
// changed, as a MetricsState that mergeMetricsState adds to the serving thread's metrics. Counters and
// histograms are zeroed once taken, so each count crosses threads once; the worker keeps its series (and
// so its label and series limits) as one pass would. The last-record gauge is sent when it moved: the
// serving thread keeps the larger value.
import type { ExporterMetrics } from './exporter-metrics.js';
import { GaugeFamily, HistogramFamily } from './families.js';
import type { MetricsState } from './metrics-state.js';

export class MetricsDelta {
  /** Per family, how many of its series were said already (new ones are appended, so the rest are new). */
  private readonly said = new Map<string, number>();
  /** Per gauge family, each series' value when last said, in series order. */
  private readonly gaugeSaid = new Map<string, number[]>();
  /** Per bounded label, how many of its admitted values were said. */
  private readonly labelsSaid = new Map<string, number>();

  constructor(private readonly metrics: ExporterMetrics) {}

  /**
   * Counts what the metrics hold now as said, zeroing counters and histograms: restored from a checkpoint,
   * which the serving thread restored too. The series stay, so limits agree with the serving thread's.
   */
  baseline(): void {
    this.take();
  }

  /** The series created or changed since the last take (or baseline), in the order they were created. */
  take(): MetricsState {
    const series: MetricsState['series'] = {};
    const histograms: MetricsState['histograms'] = {};
    for (const family of this.metrics.families()) {
      const known = this.said.get(family.name) ?? 0;
      let i = 0;
      if (family instanceof HistogramFamily) {
        const rows: MetricsState['histograms'][string] = [];
        for (const s of family.eachSeries()) {
          if (s.count !== 0 || i >= known) {
            rows.push({ labels: [...s.labels], counts: Array.from(s.counts), sum: s.sum, count: s.count });
            s.counts.fill(0);
            s.sum = 0;
            s.count = 0;
          }
          i++;
        }
        if (rows.length > 0) histograms[family.name] = rows;
      } else if (family instanceof GaugeFamily) {
        const before = this.gaugeSaid.get(family.name) ?? [];
        const rows: [string[], number][] = [];
        for (const s of family.eachSeries()) {
          if (i >= known || before[i] !== s.value) {
            rows.push([[...s.labels], s.value]);
            before[i] = s.value;
          }
          i++;
        }
        this.gaugeSaid.set(family.name, before);
        if (rows.length > 0) series[family.name] = rows;
      } else {
        const rows: [string[], number][] = [];
        for (const s of family.eachSeries()) {
          if (s.value !== 0 || i >= known) {
            rows.push([[...s.labels], s.value]);
            s.value = 0;
          }
          i++;
        }
        if (rows.length > 0) series[family.name] = rows;
      }
      this.said.set(family.name, i);
    }
    const labelValues: MetricsState['labelValues'] = {};
    for (const [label, limiter] of Object.entries(this.metrics.limiters())) {
      const known = this.labelsSaid.get(label) ?? 0;
      if (limiter.size === known) continue;
      labelValues[label] = limiter.values().slice(known);
      this.labelsSaid.set(label, limiter.size);
    }
    return { histogramBounds: [...this.metrics.duration.bounds], series, histograms, labelValues };
  }
}

/** Whether a delta carries nothing: no series, histogram or label value. */
export function emptyMetricsState(state: MetricsState): boolean {
  return Object.keys(state.series).length === 0 && Object.keys(state.histograms).length === 0 && Object.keys(state.labelValues).length === 0;
}
