import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { histogramBuckets, thresholds } from '../../../src/metrics/buckets.js';
import { ExporterMetrics } from '../../../src/metrics/exporter-metrics.js';
import { Registry, type Metric } from 'prom-client';
import { CounterFamily, GaugeFamily, HistogramFamily } from '../../../src/metrics/families.js';
import { buildRegistry } from '../../../src/metrics/registry.js';

describe('histogram buckets', () => {
  it('contain the fast target, floor, baseline and ceiling exactly', () => {
    const b = histogramBuckets(defaultConfig());
    for (const bound of [0.12, 0.17575, 0.185, 0.19425]) expect(b).toContain(bound);
    expect([...b].sort((x, y) => x - y)).toEqual(b);
    expect(new Set(b).size).toBe(b.length);
  });

  it('follow the config: another baseline and tolerance move the threshold bounds', () => {
    const c = parseConfig('signals:\n  baselineSeconds: 0.2\n  tolerance: 0.1\n  fastTargetSeconds: 0.1\nmetrics:\n  histogramBuckets: [0.05, 1]\n', 't.yml');
    expect(thresholds(c.signals)).toEqual({ fastTarget: 0.1, floor: 0.18, baseline: 0.2, ceiling: 0.22 });
    expect(histogramBuckets(c)).toEqual([0.05, 0.1, 0.18, 0.2, 0.22, 1]);
  });

  it('decide "p99 above the ceiling" exactly: (count − bucket{le=ceiling}) / count > 0.01', () => {
    const ceiling = thresholds(defaultConfig().signals).ceiling;
    for (const slow of [10, 11]) {
      const h = new HistogramFamily('h', 'h', [], histogramBuckets(defaultConfig()));
      for (let i = 0; i < 1000 - slow; i++) h.observe([], 0.19425); // exactly at the ceiling counts as ≤
      for (let i = 0; i < slow; i++) h.observe([], 0.1943);
      const { below, count } = h.cumulative(ceiling);
      const sorted = [...Array(1000 - slow).fill(0.19425), ...Array(slow).fill(0.1943)];
      const p99 = sorted[Math.ceil(0.99 * 1000) - 1] as number;
      expect((count - below) / count > 0.01).toBe(p99 > ceiling);
    }
  });
});

describe('exposition', () => {
  it('histogram buckets are cumulative and +Inf equals _count', async () => {
    const m = new ExporterMetrics([0.1, 0.2], { labelValueLimit: 50, downgradeReasonLimit: 20 });
    for (const v of [0.05, 0.1, 0.15, 0.3]) m.duration.observe(['true', 'm', '/r', ''], v);
    const text = await buildRegistry([m.duration], 'test').metrics();
    expect(text).toContain('zero_plane_request_duration_seconds_bucket{hit="true",model="m",route="/r",cohort="",le="0.1"} 2');
    expect(text).toContain('zero_plane_request_duration_seconds_bucket{hit="true",model="m",route="/r",cohort="",le="0.2"} 3');
    expect(text).toContain('zero_plane_request_duration_seconds_bucket{hit="true",model="m",route="/r",cohort="",le="+Inf"} 4');
    expect(text).toContain('zero_plane_request_duration_seconds_count{hit="true",model="m",route="/r",cohort=""} 4');
    expect(text).toMatch(/zero_plane_request_duration_seconds_sum\{[^}]*\} 0\.6/);
    expect(text).toContain('zero_plane_exporter_build_info{version="test"');
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('label values past the limit become __other__ and are counted', () => {
    const m = new ExporterMetrics([0.1], { labelValueLimit: 2, downgradeReasonLimit: 1 });
    expect(['a', 'b', 'c', 'a', 'd'].map((v) => m.model.map(v))).toEqual(['a', 'b', '__other__', 'a', '__other__']);
    expect(m.reason.map('x')).toBe('x');
    expect(m.reason.map('y')).toBe('__other__');
    expect(m.labelOverflow.get(['model', 'too_many_values'])).toBe(2);
    expect(m.labelOverflow.get(['reason', 'too_many_values'])).toBe(1);
    expect(m.labelOverflow.get(['route', 'too_many_values'])).toBe(0);
  });

  it('series alerts take increase() of exist at zero before the first event', async () => {
    const m = new ExporterMetrics([0.1], { labelValueLimit: 50, downgradeReasonLimit: 20 });
    const text = await buildRegistry(m.families(), 'test').metrics();
    expect(text).toContain('zero_plane_opt_in_header_total{state="malformed",defect="invisible_char"} 0');
    expect(text).toContain('zero_plane_exporter_parse_errors_total{reason="too_long"} 0');
  });

  it('is the very text prom-client writes for the same families (escapes, NaN, ±Inf, no labels, updates)', async () => {
    const odd = ['plain', 'quote " and \\ backslash', 'new\nline', 'ünïcödé ✓', '', '__other__'];
    const counter = new CounterFamily('c_total', 'help with \\ and\nnewline', ['a', 'b']);
    const gauge = new GaugeFamily('g', 'a gauge', ['a']);
    const bare = new CounterFamily('bare_total', 'no labels', []);
    const histogram = new HistogramFamily('h_seconds', 'h', ['a'], [0.1, 0.25, 1]);
    const unlabelled = new HistogramFamily('u_seconds', 'u', [], [0.5]);
    odd.forEach((v, i) => {
      counter.inc([v, odd[(i + 1) % odd.length] as string], i + 0.5);
      gauge.set([v], [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 1e21, 1.5e-7][i] as number);
      histogram.observe([v], i / 4);
    });
    bare.inc([]);
    unlabelled.observe([], 0.3);
    const families = [counter, gauge, bare, histogram, unlabelled];
    const reference = async (): Promise<string> => {
      const r = new Registry();
      for (const f of families) r.registerMetric({ name: f.name, get: async () => promClientShape(f) } as unknown as Metric);
      return r.metrics();
    };
    const ours = (): string => `${families.map((f) => f.text()).join('\n\n')}\n`;
    expect(ours()).toBe(await reference());
    // Label text is kept per series: values changed after a scrape show, new series appear.
    counter.inc(['plain', 'quote " and \\ backslash'], 2);
    histogram.observe(['brand new'], 0.2);
    expect(ours()).toBe(await reference());
  });
});

/** A family as prom-client's Registry takes it from a metric's get() (what the exporter handed it before writing its own text). */
function promClientShape(f: CounterFamily | GaugeFamily | HistogramFamily): object {
  const labelsOf = (values: readonly string[]): Record<string, string> => Object.fromEntries(f.labelNames.map((n, i) => [n, values[i] as string]));
  if (!(f instanceof HistogramFamily)) {
    return { name: f.name, help: f.help, type: f.type, aggregator: 'sum', values: f.entries().map(([labels, value]) => ({ value, labels: labelsOf(labels) })) };
  }
  const values = f.entries().flatMap((row) => {
    const labels = labelsOf(row.labels);
    let acc = 0;
    return [
      ...f.bounds.map((b, i) => ({ value: (acc += row.counts[i] as number), labels: { ...labels, le: String(b) }, metricName: `${f.name}_bucket` })),
      { value: row.count, labels: { ...labels, le: '+Inf' }, metricName: `${f.name}_bucket` },
      { value: row.sum, labels, metricName: `${f.name}_sum` },
      { value: row.count, labels, metricName: `${f.name}_count` },
    ];
  });
  return { name: f.name, help: f.help, type: 'histogram', aggregator: 'sum', values };
}
