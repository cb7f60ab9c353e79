import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { defaultConfig } from '../src/config/schema.js';
import { histogramBuckets, thresholds } from '../src/metrics/buckets.js';
import { ExporterMetrics } from '../src/metrics/exporter-metrics.js';
import { HistogramFamily } from '../src/metrics/families.js';
import { buildRegistry } from '../src/metrics/registry.js';

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
    expect(m.labelOverflow.get(['model'])).toBe(2);
    expect(m.labelOverflow.get(['reason'])).toBe(1);
    expect(m.labelOverflow.get(['route'])).toBe(0);
  });

  it('series alerts take increase() of exist at zero before the first event', async () => {
    const m = new ExporterMetrics([0.1], { labelValueLimit: 50, downgradeReasonLimit: 20 });
    const text = await buildRegistry(m.families(), 'test').metrics();
    expect(text).toContain('zero_plane_opt_in_header_total{state="malformed",defect="invisible_char"} 0');
    expect(text).toContain('zero_plane_exporter_parse_errors_total{reason="too_long"} 0');
  });
});
