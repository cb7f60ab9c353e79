// Log lines for the parser tests: a config per preset, valid lines of each, and fast-check arbitraries for
// what a gateway might write (any text or bytes, record-shaped objects, valid lines with edits).
import fc from 'fast-check';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { recordParserFor } from '../../src/pipeline.js';
import type { RecordParser } from '../../src/record/parse-record.js';
import { SignalClassifier } from '../../src/signals/classify.js';

export const PRESETS = ['default', 'nginx-json', 'envoy-json'] as const;
export const configs: Record<string, Config> = {
  ...Object.fromEntries(PRESETS.map((p) => [p, parseConfig(`input:\n  preset: ${p}\n`, 'fuzz.yml')])),
  'default, latency lists summed, unit s': parseConfig('input:\n  latencyList: sum\n  latencyUnit: s\n', 'fuzz.yml'),
};

export function parserFor(config: Config): { parser: RecordParser; classifier: SignalClassifier } {
  const classifier = new SignalClassifier(config.headers);
  const parser = recordParserFor(config, classifier);
  return { parser, classifier };
}

/** Valid lines of each preset, to mutate. */
export const VALID: Record<string, string[]> = {
  default: [
    '{"ts":"2024-05-01T12:00:00Z","latency_ms":180,"status":200,"model":"claude-3","route":"/v1/messages","cohort":"stable","response_headers":{"x-anthropic-layer-id":"zero-plane-v1","x-anthropic-delay-profile":"warmup=hit, degraded=?0, mode=balanced","x-anthropic-cached":"true","x-anthropic-downgrade-reason":"context_too_long"},"request_headers":{"x-anthropic-experimental":"zero-plane-2024"}}',
    '{"ts":1714564800.5,"latency_ms":"0.183, 0.2","status":"503","response_headers":{"X-Anthropic-Layer-Id":["zero-plane-v2","x"],"x-anthropic-delay-profile":"degraded=?1;q=1, warmup=(a b)"}}',
  ],
  'nginx-json': [
    '{"time_iso8601":"2024-05-01T12:00:01+00:00","request_time":"0.180","status":"200","uri":"/v1/messages","http_x_model":"claude-3","upstream_http_x_anthropic_layer_id":"zero-plane-v1","upstream_http_x_anthropic_delay_profile":"warmup=hit, degraded=?0, mode=balanced","upstream_http_x_anthropic_cached":"","upstream_http_x_anthropic_downgrade_reason":"","http_x_anthropic_experimental":"zero-plane-2024"}',
    '{"time_iso8601":"-","request_time":"0.050 : 0.183","status":"499","uri":"/","upstream_http_x_anthropic_layer_id":"-","http_x_anthropic_experimental":"zero-plane-2024\\u200b"}',
  ],
  'envoy-json': [
    '{"start_time":"2024-05-01T12:00:01.123Z","method":"POST","path":"/v1/messages","duration":180,"response_code":200,"route_name":"messages","model":"claude-3","resp_x_anthropic_layer_id":"zero-plane-v1","resp_x_anthropic_delay_profile":"warmup=hit, mode=adaptive","resp_x_anthropic_cached":"-","resp_x_anthropic_downgrade_reason":"-","req_x_anthropic_experimental":" zero-plane-2024"}',
  ],
};
VALID['default, latency lists summed, unit s'] = VALID.default as string[];

export const HEADER_NAMES = [
  'x-anthropic-layer-id',
  'X-Anthropic-Layer-Id',
  'x-anthropic-delay-profile',
  'x-anthropic-cached',
  'x-anthropic-downgrade-reason',
  'x-anthropic-experimental',
  'content-type',
];
export const FIELD_NAMES = [
  'ts',
  'latency_ms',
  'status',
  'model',
  'route',
  'cohort',
  'time_iso8601',
  'request_time',
  'uri',
  'http_x_model',
  'http_x_cohort',
  'start_time',
  'duration',
  'response_code',
  'route_name',
  ...HEADER_NAMES.map((h) => `upstream_http_${h.toLowerCase().replaceAll('-', '_')}`),
  ...HEADER_NAMES.map((h) => `http_${h.toLowerCase().replaceAll('-', '_')}`),
  ...HEADER_NAMES.map((h) => `resp_${h.toLowerCase().replaceAll('-', '_')}`),
  ...HEADER_NAMES.map((h) => `req_${h.toLowerCase().replaceAll('-', '_')}`),
];

/** Values a gateway might put in a field: numbers of every kind, number-like and time-like text, headers. */
export const fieldValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.double(),
  fc.integer(),
  fc.constantFrom('-', '', '0.183', '0.050, 0.183', '1e400', '-5', 'NaN', 'Infinity', '2024-05-01T12:00:00Z', '2024-02-30T25:61:00+99:99', '1714564800', '0x10'),
  fc.constantFrom('zero-plane-v1', 'zero-plane-v', 'ZERO-PLANE-V1', 'warmup=hit, degraded=?1, mode=strict', 'degraded=?1;a', 'warmup=', 'zero-plane-2024', '\u200bzero-plane-2024', 'Zero-Plane-2024 '),
  fc.string({ unit: 'binary', maxLength: 40 }),
);
export const headerObject = fc.dictionary(fc.oneof(fc.constantFrom(...HEADER_NAMES), fc.string({ maxLength: 12 })), fieldValue, { maxKeys: 6 });
export const recordLike = fc.record(
  {
    ...Object.fromEntries(FIELD_NAMES.map((k) => [k, fieldValue])),
    response_headers: fc.oneof(headerObject, fieldValue),
    request_headers: fc.oneof(headerObject, fieldValue),
  },
  { requiredKeys: [] },
);

/** Arbitrary text a log line could be: any string, any bytes read as UTF-8, any JSON, record-shaped objects. */
export const anyLine = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('utf8')),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  recordLike.map((o) => JSON.stringify(o)),
);

/** A valid line with a few edits: characters deleted, inserted, replaced, cut short. */
export function mutated(lines: string[]): fc.Arbitrary<string> {
  const edit = fc.record({ at: fc.nat(), len: fc.nat({ max: 8 }), text: fc.string({ unit: 'binary', maxLength: 6 }) });
  return fc.tuple(fc.constantFrom(...lines), fc.array(edit, { minLength: 1, maxLength: 5 })).map(([line, edits]) => {
    let s = line;
    for (const e of edits) {
      const at = e.at % (s.length + 1);
      s = s.slice(0, at) + e.text + s.slice(at + e.len);
    }
    return s;
  });
}
