// OTLP log records → records: the same record the gateway's log line gives (read by the same parser), the
// semantic-convention preset, the decision on evidence per resource, and the bounds on depth and length.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { OtlpMapper, type OtlpMapOptions } from '../../../src/ingest/otlp-map.js';
import type { OtlpAnyValue, OtlpKeyValue, OtlpLogRecord } from '../../../src/ingest/otlp-proto.js';
import { recordParserFor } from '../../../src/pipeline.js';
import { SignalClassifier } from '../../../src/signals/classify.js';
import { PROBE, REQUEST } from '../../helpers/gateway-lines.js';

const config = configSchema.parse({});
const classifier = new SignalClassifier(config.headers);
const OPTIONS: OtlpMapOptions = {
  generic: config.ingest.otlp.generic,
  maxValueDepth: config.ingest.otlp.maxValueDepth,
  maxLineBytes: 2048,
  latencyList: config.input.latencyList,
  maxLatencySeconds: config.input.maxLatency / 1000,
  absentValues: config.input.absentValues,
  responseHeaderNames: classifier.responseHeaderNames,
  requestHeaderNames: classifier.requestHeaderNames,
};
const mapper = new OtlpMapper(OPTIONS);

/** An AnyValue as the SDK writes one from a JS value. */
function any(v: unknown): OtlpAnyValue {
  if (v === null || v === undefined) return {};
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(any) } };
  return { kvlistValue: { values: kvs(v as Record<string, unknown>) } };
}
function kvs(o: Record<string, unknown>): OtlpKeyValue[] {
  return Object.entries(o).map(([key, value]) => ({ key, value: any(value) }));
}

const envoyLine = REQUEST['envoy-json'](0, 183) as Record<string, unknown>;
const envoyParser = recordParserFor(configSchema.parse({ input: { preset: 'envoy-json' } }), classifier);

describe('otlp-envoy', () => {
  it('a kvlist body, a JSON string body and attributes alone each give the record the envoy-json line gives', () => {
    const want = envoyParser.parse(JSON.stringify(envoyLine));
    expect(want.ok).toBe(true);
    const records: OtlpLogRecord[] = [{ body: any(envoyLine) }, { body: { stringValue: JSON.stringify(envoyLine) } }, { attributes: kvs(envoyLine) }];
    for (const r of records) expect(mapper.read(mapper.entry(r), 'otlp-envoy')).toEqual(want);
  });

  it('reads Envoy\'s strings and "-" like the file\'s numbers and nulls, and takes the record time without %START_TIME%', () => {
    const strings = Object.fromEntries(Object.entries(envoyLine).map(([k, v]) => [k, v === null ? '-' : String(v)]));
    expect(mapper.read(mapper.entry({ body: any(strings) }), 'otlp-envoy')).toEqual(envoyParser.parse(JSON.stringify(envoyLine)));
    const { start_time: _none, ...noTime } = envoyLine;
    const read = mapper.read(mapper.entry({ body: any(noTime), timeUnixNano: '1764669600123000000' }), 'otlp-envoy');
    expect(read.ok && read.record.timeMs).toBe(1764669600123);
  });

  it('a JSON string body with a "__proto__" key reads as the same line from a file does', () => {
    // A key the line lacks, under "__proto__": an own key of the line, not an inherited value of the view.
    const { cohort: _cohort, ...rest } = envoyLine;
    const line = `{"__proto__":{"cohort":"from-proto"},${JSON.stringify(rest).slice(1)}`;
    const got = mapper.read(mapper.entry({ body: { stringValue: line }, attributes: kvs({ 'http.route': 'messages' }) }), 'otlp-envoy');
    expect(got).toEqual(envoyParser.parse(line));
    expect(got.ok && got.record.cohort).not.toBe('from-proto');
  });

  it('a body string over the line limit is too_long; a text body is a record without latency', () => {
    expect(mapper.read(mapper.entry({ body: { stringValue: JSON.stringify({ ...envoyLine, pad: 'x'.repeat(3000) }) } }), 'otlp-envoy')).toEqual({ ok: false, reason: 'too_long' });
    expect(mapper.read(mapper.entry({ body: { stringValue: '[2026-12-02T10:00:00.000Z] "POST /v1/messages HTTP/1.1" 200' } }), 'otlp-envoy')).toEqual({ ok: false, reason: 'missing_latency' });
  });

  it('values deeper than maxValueDepth read as null, shallower ones are kept', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 50; i++) deep = { k: deep };
    const entry = mapper.entry({ body: any({ ...envoyLine, deep, shallow: { a: { b: 'kept' } } }) });
    expect((entry.body?.shallow as { a: { b: string } }).a.b).toBe('kept');
    let level: unknown = entry.body?.deep;
    let depth = 1;
    while (level !== null && typeof level === 'object') [level, depth] = [(level as { k: unknown }).k, depth + 1];
    expect(level).toBeNull();
    expect(depth).toBe(OPTIONS.maxValueDepth);
    expect(mapper.read(entry, 'otlp-envoy').ok).toBe(true);
  });
});

describe('otlp-generic', () => {
  const attributes = {
    'http.response.status_code': 429,
    'http.route': '/v1/messages',
    'gen_ai.request.model': 'claude-sonnet',
    duration: 212.5,
    'http.response.header.x-anthropic-layer-id': ['zero-plane-v1'],
    'http.response.header.x-anthropic-delay-profile': ['warmup=hit, degraded=?0, mode=balanced'],
    'http.request.header.x-anthropic-experimental': ['zero-plane-2024'],
    'gen_ai.usage.input_tokens': 1200,
    'gen_ai.usage.output_tokens': 80,
  };

  it('reads the HTTP and GenAI semantic conventions, headers as arrays of values, token usage', () => {
    const read = mapper.read(mapper.entry({ attributes: kvs(attributes), timeUnixNano: '1764669600000000000' }), 'otlp-generic');
    expect(read).toEqual({
      ok: true,
      record: {
        timeMs: 1764669600000,
        latencySeconds: 0.2125,
        status: 429,
        model: 'claude-sonnet',
        route: '/v1/messages',
        cohort: '',
        responseHeaders: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit, degraded=?0, mode=balanced' },
        requestHeaders: { 'x-anthropic-experimental': 'zero-plane-2024' },
        tokens: { input: 1200, output: 80 },
      },
    });
  });

  it('a record with no request header attribute carries no request headers (a missing opt-in is not counted)', () => {
    const { 'http.request.header.x-anthropic-experimental': _gone, ...rest } = attributes;
    const read = mapper.read(mapper.entry({ attributes: kvs(rest) }), 'otlp-generic');
    expect(read.ok && read.record.requestHeaders).toBeUndefined();
  });

  it('takes the attribute names of ingest.otlp.generic', () => {
    const custom = new OtlpMapper({ ...OPTIONS, generic: { ...OPTIONS.generic, latency: 'latency_s', latencyUnit: 's', status: 'code' } });
    const read = custom.read(custom.entry({ attributes: kvs({ latency_s: 0.5, code: 200 }) }), 'otlp-generic');
    expect(read.ok && [read.record.latencySeconds, read.record.status]).toEqual([0.5, 200]);
  });
});

describe('which preset reads a resource: evidence', () => {
  const envoy = mapper.entry({ body: any(envoyLine) });
  // Envoy's null header fields are evidence of its format; a record without the header keys is not.
  const envoyProbe = mapper.entry({ body: any(PROBE['envoy-json'](0)) });
  const envoyBare = mapper.entry({ body: any({ start_time: '2026-12-02T10:00:00.000Z', duration: '1', response_code: '200', route_name: 'health' }) });
  const generic = mapper.entry({
    attributes: kvs({ duration: 5, 'http.response.status_code': 200, 'http.route': '/v1/messages', 'http.response.header.x-anthropic-layer-id': 'zero-plane-v1' }),
  });

  it("a record with a preset's structure and a wanted header decides, whatever comes before it", () => {
    expect(mapper.decide([envoyBare, envoy], 'auto', undefined)).toEqual({ preset: 'otlp-envoy', basis: 'evidence' });
    expect(mapper.decide([envoyProbe], 'auto', undefined)).toEqual({ preset: 'otlp-envoy', basis: 'evidence' });
    expect(mapper.decide([generic], 'auto', 'otlp-envoy')).toEqual({ preset: 'otlp-generic', basis: 'evidence' });
  });

  it("without a header: the one structure seen; with nothing readable: the service's previous preset", () => {
    expect(mapper.decide([envoyBare], 'auto', undefined)).toEqual({ preset: 'otlp-envoy', basis: 'signature' });
    const text = mapper.entry({ body: { stringValue: 'not an access log' } });
    expect(mapper.decide([text], 'auto', 'otlp-generic')).toEqual({ preset: 'otlp-generic', basis: 'previous' });
  });

  it('a configured preset is used as it is', () => {
    expect(mapper.decide([envoy], 'otlp-generic', undefined)).toEqual({ preset: 'otlp-generic', basis: 'configured' });
  });
});
