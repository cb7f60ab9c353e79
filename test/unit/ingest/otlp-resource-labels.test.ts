// Resource attributes → target labels: which labels apply (only aggregation labels), the label set of a
// resource, the cap on sets (__other__, counted), the config's validation, and the exposition that writes
// each set's series with its labels under the one block of each family.
import { describe, expect, it } from 'vitest';
import { configSchema, EXPORTER_SERIES_LABELS } from '../../../src/config/schema.js';
import { DEFAULT_RESOURCE_LABELS, OtlpResourceLabels, resourceLabelsApplied } from '../../../src/ingest/otlp-resource-labels.js';
import { WindowGauges } from '../../../src/metrics/window-gauges.js';
import { withLabelledSets, withLabels } from '../../../src/metrics/labelled-families.js';
import { buildRegistry } from '../../../src/metrics/registry.js';
import { Pipeline, recordParserFor } from '../../../src/pipeline.js';
import { SignalClassifier } from '../../../src/signals/classify.js';
import type { ParseResult } from '../../../src/record/parse-record.js';
import { parseSamples, sumOf } from '../../helpers/exposition.js';

const K8S = (cluster: string, namespace: string) => ({ 'service.name': 'envoy', 'k8s.cluster.name': cluster, 'k8s.namespace.name': namespace });

function labels(maxSets = 32, applied: Record<string, string> = DEFAULT_RESOURCE_LABELS) {
  const created: string[] = [];
  let overflowed = 0;
  const map = new OtlpResourceLabels<string>({
    labels: applied,
    maxSets,
    maxValueBytes: 32,
    create: (names, values) => {
      const id = names.map((n, i) => `${n}=${values[i] as string}`).join(',');
      created.push(id);
      return id;
    },
    overflowed: (n) => (overflowed += n),
  });
  return { map, created, overflowed: () => overflowed };
}

describe('OTLP resource labels', () => {
  it('applies only the labels that are aggregation labels, the Kubernetes ones by default', () => {
    expect(resourceLabelsApplied(undefined, ['job'])).toEqual({});
    expect(resourceLabelsApplied(undefined, ['job', 'namespace'])).toEqual({ namespace: 'k8s.namespace.name' });
    expect(resourceLabelsApplied(undefined, ['cluster', 'namespace', 'job'])).toEqual({ cluster: 'k8s.cluster.name', namespace: 'k8s.namespace.name' });
    expect(resourceLabelsApplied({ job: 'service.name' }, ['job', 'cluster'])).toEqual({ job: 'service.name' });
    expect(new OtlpResourceLabels({ labels: {}, maxSets: 1, maxValueBytes: 32, create: () => 0, overflowed: () => {} }).active).toBe(false);
  });

  it('gives each label set one sink, leaves out a label whose attribute is absent, and none without any', () => {
    const { map, created } = labels();
    expect(map.sinkFor(K8S('eu-1', 'llm'), 3)).toBe('cluster=eu-1,namespace=llm');
    expect(map.sinkFor({ 'k8s.namespace.name': 'llm', 'k8s.cluster.name': 'eu-1', 'service.name': 'other' }, 1)).toBe('cluster=eu-1,namespace=llm');
    expect(map.sinkFor(K8S('us-1', 'llm'), 1)).toBe('cluster=us-1,namespace=llm');
    expect(map.sinkFor({ 'k8s.namespace.name': 'llm' }, 1)).toBe('namespace=llm');
    expect(map.sinkFor({ 'k8s.namespace.name': 'llm', 'k8s.cluster.name': '' }, 1)).toBe('namespace=llm');
    expect(map.sinkFor({ 'service.name': 'envoy' }, 1)).toBeUndefined();
    expect(created).toEqual(['cluster=eu-1,namespace=llm', 'cluster=us-1,namespace=llm', 'namespace=llm']);
    // A long value is cut as any label value is.
    expect(map.sinkFor(K8S('eu-1', 'n'.repeat(100)), 1)).toBe(`cluster=eu-1,namespace=${'n'.repeat(29)}…`);
  });

  it('past maxSets, a new set counts under __other__ with its records counted as overflow; known sets keep theirs', () => {
    const { map, created, overflowed } = labels(2);
    map.sinkFor(K8S('a', 'x'), 1);
    map.sinkFor(K8S('b', 'x'), 1);
    expect(map.sinkFor(K8S('c', 'x'), 5)).toBe('cluster=__other__,namespace=__other__');
    expect(map.sinkFor({ 'k8s.namespace.name': 'y' }, 2)).toBe('cluster=__other__,namespace=__other__');
    expect(map.sinkFor(K8S('a', 'x'), 4)).toBe('cluster=a,namespace=x');
    expect(overflowed()).toBe(7);
    expect(created).toHaveLength(3);
    expect([...map.all()].map((s) => s.values.join('/'))).toEqual(['a/x', 'b/x', '__other__/__other__']);
  });

  it('the config refuses a resource label that is no aggregation label, or is a label of the exporter’s series', () => {
    expect(() => configSchema.parse({ ingest: { otlp: { resourceLabels: { cluster: 'k8s.cluster.name' } } } })).toThrow(/not one of pack.aggregationLabels/);
    expect(() => configSchema.parse({ pack: { aggregationLabels: ['job', 'model'] }, ingest: { otlp: { resourceLabels: { model: 'service.name' } } } })).toThrow(/exporter's own series/);
    expect(() => configSchema.parse({ ingest: { otlp: { resourceLabels: { 'bad-name': 'x' } } } })).toThrow(/label name/);
    expect(() => configSchema.parse({ ingest: { otlp: { maxResourceLabelSets: 0 } } })).toThrow();
    const ok = configSchema.parse({ pack: { aggregationLabels: ['job', 'cluster'] }, ingest: { otlp: { resourceLabels: { cluster: 'k8s.cluster.name', job: 'service.name' } } } });
    expect(ok.ingest.otlp.maxResourceLabelSets).toBe(32);
    // The default leaves the labels to the aggregation labels, so it is valid with any of them.
    expect(configSchema.parse({}).ingest.otlp.resourceLabels).toBeUndefined();
  });

  it('EXPORTER_SERIES_LABELS holds every label of the families a pipeline writes', () => {
    const config = configSchema.parse({});
    const p = new Pipeline(config);
    const families = [...p.metrics.families(), p.inputInfo, p.inputDecisions, p.headersUnseen, p.inputEnvelope, ...new WindowGauges(p.window, config.signals).families()];
    const names = new Set(families.flatMap((f) => ('labelNames' in f ? [...f.labelNames] : [])));
    expect(names.size).toBeGreaterThan(10);
    for (const n of names) expect(EXPORTER_SERIES_LABELS as readonly string[]).toContain(n);
  });
});

describe('labelled families in one exposition', () => {
  it('puts the labels first in every sample line, with or without labels of its own', () => {
    expect(withLabels('# HELP x h\n# TYPE x counter\nx 1\nx{a="b c{"} 2', 'cluster="eu"')).toBe('\nx{cluster="eu"} 1\nx{cluster="eu",a="b c{"} 2');
  });

  it('writes each family once, the labelled sets’ series after the base’s, in both formats, and Pipeline.countRecord decides no format', async () => {
    const config = configSchema.parse({});
    const record: ParseResult = recordParserFor(config, new SignalClassifier(config.headers)).parse(
      JSON.stringify({ ts: new Date().toISOString(), latency_ms: 200, status: 200, model: 'm', route: 'r', response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } }),
    );
    expect(record.ok).toBe(true);
    const base = new Pipeline(config);
    const eu = new Pipeline(config);
    const us = new Pipeline(config);
    base.countRecord(record, 'otlp');
    eu.countRecord(record, 'otlp');
    eu.countRecord(record, 'otlp');
    us.countRecord(record, 'otlp');
    const sets = [
      { names: ['cluster', 'namespace'], values: ['eu-1', 'llm'], families: new Map(eu.metrics.families().map((f) => [f.name, f])) },
      { names: ['cluster'], values: ['us "1"'], families: new Map(us.metrics.families().map((f) => [f.name, f])) },
    ];
    const registry = buildRegistry(
      withLabelledSets([...base.metrics.families(), base.inputDecisions], () => sets),
      'test',
    );
    const text = await registry.metrics('text');
    expect(text.match(/^# TYPE zero_plane_requests_total /gm)).toHaveLength(1);
    const s = parseSamples(text);
    expect(sumOf(s, 'zero_plane_requests_total')).toBe(4);
    expect(sumOf(s, 'zero_plane_requests_total', { cluster: 'eu-1', namespace: 'llm' })).toBe(2);
    expect(sumOf(s, 'zero_plane_requests_total', { cluster: 'us "1"' })).toBe(1);
    expect(sumOf(s, 'zero_plane_request_duration_seconds_count', { cluster: 'eu-1' })).toBe(2);
    expect(s.filter((x) => x.name === 'zero_plane_requests_total' && x.labels.cluster === undefined).map((x) => x.value)).toEqual([1]);
    // Records read elsewhere are no "configured" (or any) format decision of the pipeline's.
    expect(s.filter((x) => x.name === 'zero_plane_exporter_input_decisions_total')).toEqual([]);
    expect(sumOf(s, 'zero_plane_exporter_lines_total', { source: 'otlp' })).toBe(4);
    const om = await registry.metrics('openmetrics');
    expect(om.match(/^# TYPE zero_plane_requests counter/gm)).toHaveLength(1);
    expect(om).toMatch(/^zero_plane_requests_total\{cluster="eu-1",namespace="llm",hit="true",.*\} 2$/m);
    expect(om).toMatch(/^zero_plane_requests_created\{cluster="eu-1",namespace="llm",hit="true",/m);
  });
});
