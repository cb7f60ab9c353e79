// OpenMetrics 1.0 on /metrics: what the exposition writes (units, _created, canonical le, # EOF), that
// Debian's python3-prometheus-client OpenMetrics parser accepts it, and how the Accept header chooses it.
import { describe, expect, it } from 'vitest';
import { histogramBuckets } from '../../../src/metrics/buckets.js';
import { ExporterMetrics } from '../../../src/metrics/exporter-metrics.js';
import { CounterFamily, GaugeFamily } from '../../../src/metrics/families.js';
import { canonicalNumber, OPENMETRICS_CONTENT_TYPE } from '../../../src/metrics/openmetrics.js';
import { buildRegistry, prefersOpenMetrics } from '../../../src/metrics/registry.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { PROMETHEUS_ACCEPT, pythonOpenMetrics } from '../../helpers/openmetrics.js';

function metricsWithTraffic() {
  const config = defaultConfig();
  const m = new ExporterMetrics(histogramBuckets(config), config.metrics);
  for (const v of [0.18, 0.2, 0.19]) m.duration.observe(['true', 'claude', '/v1/messages', 'canary'], v);
  m.requests.inc(['true', '2xx', 'claude', '/v1/messages', 'canary'], 3);
  m.degraded.inc(['claude', '/v1/messages', 'canary']);
  m.lastRecord.set(['gateway.log'], 1715040000.5);
  m.labelOverflow.inc(['model', 'too_many_values']);
  return m;
}

describe('OpenMetrics numbers', () => {
  it('writes le in the canonical form (Go %g, ".0" on whole numbers), as client_golang and client_python do', () => {
    const cases: [number, string][] = [
      [0.185, '0.185'],
      [0.00925, '0.00925'],
      [2.5, '2.5'],
      [10, '10.0'],
      [1, '1.0'],
      [0, '0.0'],
      [123456, '123456.0'],
      [1e6, '1e+06'],
      [1.5e7, '1.5e+07'],
      [1e-5, '1e-05'],
      [0.0001, '0.0001'],
      [1e-10, '1e-10'],
      [Infinity, '+Inf'],
    ];
    for (const [v, text] of cases) expect(canonicalNumber(v), String(v)).toBe(text);
  });
});

describe("OpenMetrics exposition of the exporter's families", () => {
  it('ends with # EOF, has no blank line, declares units and writes counters as <family>_total with _created', async () => {
    const before = Date.now();
    const m = metricsWithTraffic();
    const after = Date.now();
    const text = await buildRegistry(m.families(), 'test').metrics('openmetrics');
    expect(text.endsWith('\n# EOF\n')).toBe(true);
    expect(text).not.toMatch(/\n\n/);
    expect(text).toContain('# TYPE zero_plane_requests counter\n');
    expect(text).toContain('zero_plane_requests_total{hit="true",status_class="2xx",model="claude",route="/v1/messages",cohort="canary"} 3\n');
    const created = /zero_plane_requests_created\{hit="true",status_class="2xx",model="claude",route="\/v1\/messages",cohort="canary"\} (\S+)\n/.exec(text);
    expect(Number(created?.[1]) * 1000).toBeGreaterThanOrEqual(before);
    expect(Number(created?.[1]) * 1000).toBeLessThanOrEqual(after);
    expect(text).toContain('# TYPE zero_plane_request_duration_seconds histogram\n# UNIT zero_plane_request_duration_seconds seconds\n');
    expect(text).toContain('le="10.0"} 3\n');
    expect(text).toMatch(/zero_plane_request_duration_seconds_created\{hit="true",model="claude",route="\/v1\/messages",cohort="canary"\} \d+(\.\d+)?\n/);
    expect(text).toContain('# UNIT zero_plane_exporter_last_record_timestamp_seconds seconds\n');
    expect(text).toContain('zero_plane_exporter_last_record_timestamp_seconds{source="gateway.log"} 1715040000.5\n');
    // prom-client's default metrics are in OpenMetrics too, counting from process start.
    expect(text).toMatch(/# TYPE process_cpu_seconds counter\n# UNIT process_cpu_seconds seconds\n# HELP process_cpu_seconds [^\n]+\nprocess_cpu_seconds_total \S+\nprocess_cpu_seconds_created \S+\n/);
  });

  it("is accepted by Debian's python3-prometheus-client OpenMetrics parser, every family with its type and unit", async () => {
    const m = metricsWithTraffic();
    const families = [...m.families(), new GaugeFamily('zero_plane_p99_drift_tolerance_ratio', 'Configured drift tolerance.', [])];
    const text = await buildRegistry(families, 'test').metrics('openmetrics');
    const parsed = pythonOpenMetrics(text);
    if (!parsed.ok) throw new Error(parsed.error);
    const byName = new Map(parsed.families.map((f) => [f.name, f]));
    expect(byName.get('zero_plane_requests')).toMatchObject({ type: 'counter', samples: 2 });
    expect(byName.get('zero_plane_request_duration_seconds')).toMatchObject({ type: 'histogram', unit: 'seconds' });
    expect(byName.get('zero_plane_exporter_label_overflow')).toMatchObject({ type: 'counter' });
    expect(byName.get('zero_plane_exporter_skipped_bytes')).toMatchObject({ type: 'counter', unit: 'bytes', samples: 0 });
    expect(byName.get('zero_plane_p99_drift_tolerance_ratio')).toMatchObject({ type: 'gauge', unit: 'ratio' });
    expect(byName.get('process_resident_memory_bytes')).toMatchObject({ type: 'gauge', unit: 'bytes' });
    expect(byName.get('zero_plane_exporter_build_info')).toMatchObject({ type: 'gauge', samples: 1 });
    // Every family the registry holds came through.
    expect(parsed.families.length).toBe((text.match(/^# TYPE /gm) ?? []).length);
  });

  it('leaves every _created out with web.openMetricsCreated: false, the samples otherwise the same', async () => {
    const m = metricsWithTraffic();
    const withCreated = await buildRegistry(m.families(), 'test').metrics('openmetrics');
    const without = await buildRegistry(m.families(), 'test', { created: false }).metrics('openmetrics');
    expect(withCreated).toMatch(/_created[{ ]/);
    expect(without).not.toMatch(/_created[{ ]/);
    // Apart from the _created lines (and prom-client's process figures, which move between scrapes), the same.
    const stable = (t: string) => t.split('\n').filter((l) => !/_created[{ ]/.test(l) && !/^(process|nodejs)_/.test(l));
    expect(stable(without)).toEqual(stable(withCreated));
    expect(without.endsWith('\n# EOF\n')).toBe(true);
    const parsed = pythonOpenMetrics(without);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(defaultConfig().web.openMetricsCreated).toBe(true);
  });

  it('gives no _created to a series restored from a checkpoint: it continues a count begun before this process', async () => {
    const c = new CounterFamily('x_total', 'x', ['k']);
    c.restore([[['restored'], 41]]);
    c.inc(['restored']);
    c.inc(['fresh']);
    const text = [...c.openMetricsChunks()].join('');
    expect(text).toContain('x_total{k="restored"} 42');
    expect(text).not.toContain('x_created{k="restored"}');
    expect(text).toMatch(/x_created\{k="fresh"\} \d/);
    expect(text).toContain('# HELP x x');
  });

  it('escapes quotes in HELP as OpenMetrics requires (the text format leaves them)', () => {
    const g = new GaugeFamily('g', 'say "hi" \\ now', []);
    expect([...g.openMetricsChunks()].join('')).toContain('# HELP g say \\"hi\\" \\\\ now');
    expect(g.text()).toContain('# HELP g say "hi" \\\\ now');
  });

  it('keeps the text format byte for byte when OpenMetrics is not asked for', async () => {
    const m = metricsWithTraffic();
    const registry = buildRegistry(m.families(), 'test');
    const text = await registry.metrics();
    expect(text).not.toContain('_created');
    expect(text).not.toContain('# EOF');
    expect(text).toContain('le="10"}');
    expect(registry.contentTypeOf('text')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(registry.contentTypeOf('openmetrics')).toBe(OPENMETRICS_CONTENT_TYPE);
  });
});

describe('content negotiation', () => {
  it("answers OpenMetrics to Prometheus' own Accept header and to a plain request for it", () => {
    expect(prefersOpenMetrics(PROMETHEUS_ACCEPT)).toBe(true);
    expect(prefersOpenMetrics('application/openmetrics-text')).toBe(true);
    expect(prefersOpenMetrics('application/openmetrics-text; version=1.0.0; charset=utf-8')).toBe(true);
  });

  it('answers the text format otherwise: no header, text/plain, */*, an OpenMetrics version it does not write, or text preferred', () => {
    expect(prefersOpenMetrics(undefined)).toBe(false);
    expect(prefersOpenMetrics('text/plain;version=0.0.4')).toBe(false);
    expect(prefersOpenMetrics('*/*')).toBe(false);
    expect(prefersOpenMetrics('application/openmetrics-text;version=2.0.0')).toBe(false);
    expect(prefersOpenMetrics('text/plain;q=0.9,application/openmetrics-text;q=0.5')).toBe(false);
    expect(prefersOpenMetrics('application/openmetrics-text;q=0')).toBe(false);
  });
});
