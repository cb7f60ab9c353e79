// Log lines for the parser tests: a config per preset, valid lines of each, and fast-check arbitraries for
// what a gateway might write (any text or bytes, record-shaped objects, valid lines with edits).
import fc from 'fast-check';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { recordParserFor } from '../../src/pipeline.js';
import type { RecordParser } from '../../src/record/parse-record.js';
import { canonicalHeaderName, PRESET_NAMES } from '../../src/record/presets.js';
import { SignalClassifier } from '../../src/signals/classify.js';

export const PRESETS = PRESET_NAMES;
/** A config per preset, named explicitly (input.preset: auto is the pipeline's business, not the parser's). */
export const configs: Record<string, Config> = {
  ...Object.fromEntries(PRESETS.map((p) => [p, parseConfig(`input:\n  preset: ${p}\n`, 'fuzz.yml')])),
  'default, latency lists summed, unit s': parseConfig('input:\n  preset: default\n  latencyList: sum\n  latencyUnit: s\n', 'fuzz.yml'),
  // Headers at the top level (an empty prefix), two of them at paths of their own, one inside an object.
  'flat at the top level, per-header paths': parseConfig(
    'input:\n  preset: default\n  responseHeaders: { prefix: "" }\n  requestHeaders: { prefix: "" }\n  headers:\n    response: { x-anthropic-layer-id: layer, X-Anthropic-Delay-Profile: profile.value }\n    request: { x-anthropic-experimental: request_headers.opt_in }\n',
    'fuzz.yml',
  ),
  'header object with a per-header path': parseConfig('input:\n  preset: default\n  headers:\n    response: { x-anthropic-cached: response_headers.cache_state }\n', 'fuzz.yml'),
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
    // The bench's shapes (bench/shapes.mjs): keys in another order; Chinese text in kept and skipped fields
    // with a +08:00 time; an escape and a raw U+00A0 in the opt-in header; a one-item list of a header.
    '{"request_headers":{"x-anthropic-experimental":"zero-plane-2024"},"response_headers":{"x-anthropic-delay-profile":"warmup=hit, degraded=?0, mode=balanced","x-anthropic-layer-id":"zero-plane-v1"},"cohort":"stable","route":"/v1/complete","model":"claude-opus-4","status":200,"latency_ms":147.642,"request_id":"9d9f6348bc2f","ts":"2026-11-01T00:00:00.011Z"}',
    '{"ts":"2026-11-01T08:00:00.011+08:00","request_id":"9d9f6348bc2f","latency_ms":147.642,"status":200,"model":"claude-opus-4","route":"/v1/对话/补全","cohort":"金丝雀","note":"请求完成","response_headers":{"x-anthropic-layer-id":"standard-v3","x-anthropic-downgrade-reason":"上下文过长"},"request_headers":{"x-anthropic-experimental":"zero-plane-2024\\u200b"}}',
    '{"ts":"2026-11-01T00:00:00.5-05:30","latency_ms":150,"model":"m\\"x\\"","route":"/v1/\\u6d88\\u606f","response_headers":{"x-anthropic-layer-id":["zero-plane-v1"],"x-anthropic-cached":[]},"request_headers":{"x-anthropic-experimental":"zero-plane-2024\u00a0"}}',
  ],
  'nginx-json': [
    '{"time_iso8601":"2024-05-01T12:00:01+00:00","request_time":"0.180","status":"200","uri":"/v1/messages","http_x_model":"claude-3","upstream_http_x_anthropic_layer_id":"zero-plane-v1","upstream_http_x_anthropic_delay_profile":"warmup=hit, degraded=?0, mode=balanced","upstream_http_x_anthropic_cached":"","upstream_http_x_anthropic_downgrade_reason":"","http_x_anthropic_experimental":"zero-plane-2024"}',
    '{"time_iso8601":"-","request_time":"0.050 : 0.183","status":"499","uri":"/","upstream_http_x_anthropic_layer_id":"-","http_x_anthropic_experimental":"zero-plane-2024\\u200b"}',
    '{"time_iso8601":"2026-11-01T00:00:00+00:00","remote_addr":"10.0.0.3","request_method":"POST","request_time":"0.154","upstream_response_time":"0.154","status":"200","body_bytes_sent":"1412","uri":"/v1/complete","http_user_agent":"Mozilla/5.0 (compatible; \\"bot\\")","http_x_model":"claude-sonnet-4","http_x_cohort":"canary","upstream_http_x_anthropic_layer_id":"zero-plane-v1","upstream_http_x_anthropic_delay_profile":"warmup=miss, degraded=?0, mode=balanced","upstream_http_x_anthropic_cached":"","upstream_http_x_anthropic_downgrade_reason":"","http_x_anthropic_experimental":"zero-plane-2024","request_id":"480a8fddda82"}',
  ],
  'envoy-json': [
    '{"start_time":"2024-05-01T12:00:01.123Z","method":"POST","path":"/v1/messages","duration":180,"response_code":200,"route_name":"messages","model":"claude-3","resp_x_anthropic_layer_id":"zero-plane-v1","resp_x_anthropic_delay_profile":"warmup=hit, mode=adaptive","resp_x_anthropic_cached":"-","resp_x_anthropic_downgrade_reason":"-","req_x_anthropic_experimental":" zero-plane-2024"}',
    '{"start_time":"2026-11-01T00:00:00.011Z","method":"POST","path":"/v1/complete","protocol":"HTTP/1.1","response_code":200,"response_flags":"-","bytes_received":412,"bytes_sent":1114,"duration":148,"upstream_service_time":"147","x_forwarded_for":null,"user_agent":"anthropic-sdk-python/0.40.0","request_id":"9d9f6348bc2f","authority":"llm.example","upstream_host":"10.0.0.7:8443","route_name":"complete","model":"claude-opus-4","cohort":"stable","resp_x_anthropic_layer_id":"zero-plane-v1","resp_x_anthropic_delay_profile":"warmup=hit, degraded=?0, mode=balanced","resp_x_anthropic_cached":null,"resp_x_anthropic_downgrade_reason":null,"req_x_anthropic_experimental":"zero-plane-2024"}',
    '{"start_time":"2024-05-01T12:00:02.000Z","duration":612,"response_code":429,"route_name":"messages","model":null,"resp_x_anthropic_layer_id":null,"resp_x_anthropic_delay_profile":"mode=strict","resp_x_anthropic_cached":null,"resp_x_anthropic_downgrade_reason":"context_too_long","req_x_anthropic_experimental":null}',
  ],
  'caddy-json': [
    '{"level":"info","ts":1714564801.123456,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"41342","proto":"HTTP/1.1","method":"POST","host":"llm.example","uri":"/v1/messages","headers":{"X-Model":["claude-3"],"X-Cohort":["canary"],"X-Anthropic-Experimental":["zero-plane-2024"],"Content-Type":["application/json"]}},"user_id":"","duration":0.180123,"size":271,"status":200,"resp_headers":{"X-Anthropic-Layer-Id":["zero-plane-v1"],"X-Anthropic-Delay-Profile":["warmup=hit, degraded=?0, mode=balanced"],"Server":["Caddy"],"Content-Type":[]}}',
    '{"level":"error","ts":1714564802.5,"msg":"handled request","request":{"uri":"/v1/local","headers":{"User-Agent":["curl/8"]}},"duration":0.000015,"status":429,"resp_headers":{"Server":["Caddy"]}}',
    '{"level":"info","ts":1793491200.011000,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"10.0.0.11","remote_port":"54731","client_ip":"10.0.0.11","proto":"HTTP/1.1","method":"POST","host":"llm.example","uri":"/v1/complete","headers":{"X-Cohort":["stable"],"Content-Type":["application/json"],"Content-Length":["412"],"User-Agent":["anthropic-sdk-python/0.40.0"],"X-Anthropic-Experimental":["zero-plane-2024"],"X-Model":["claude-opus-4"]}},"bytes_read":412,"user_id":"","duration":0.147642000,"size":1114,"status":200,"resp_headers":{"X-Anthropic-Layer-Id":["zero-plane-v1"],"X-Anthropic-Delay-Profile":["warmup=hit, degraded=?0, mode=balanced"],"Content-Type":["application/json; charset=utf-8"],"Date":["Sun, 01 Nov 2026 00:00:00 GMT"],"Server":["Caddy"],"Request-Id":["req_9d9f6348bc2f"]}}',
  ],
  'haproxy-json': [
    '{"accept_ts":"1714564801.123","ta_ms":"180","status":"200","path":"/v1/messages","capture_req_x_model":"claude-3","capture_req_x_cohort":"-","capture_req_x_anthropic_experimental":"zero-plane-2024","capture_res_x_anthropic_layer_id":"zero-plane-v1","capture_res_x_anthropic_delay_profile":"warmup=miss, degraded=?1, mode=strict","capture_res_x_anthropic_cached":"-","capture_res_x_anthropic_downgrade_reason":"-"}',
    '{"accept_ts":"1793491200.011","ta_ms":"148","status":"200","path":"/v1/对话","capture_req_x_anthropic_experimental":"zero-plane-2024","capture_req_x_model":"claude-opus-4","capture_req_x_cohort":"稳定","capture_res_x_anthropic_layer_id":"zero-plane-v1","capture_res_x_anthropic_delay_profile":"warmup=hit, degraded=?0, mode=balanced","capture_res_x_anthropic_cached":"-","capture_res_x_anthropic_downgrade_reason":"-"}',
    '{"accept_ts":"1714564802.044","ta_ms":"0","status":"429","path":"/v1/local","capture_req_x_model":"-","capture_req_x_cohort":"-","capture_req_x_anthropic_experimental":"zero-plane-2024\\u200b","capture_res_x_anthropic_layer_id":"-","capture_res_x_anthropic_delay_profile":"-","capture_res_x_anthropic_cached":"-","capture_res_x_anthropic_downgrade_reason":"-"}',
  ],
  'kong-json': [
    '{"response":{"size":271,"headers":{"content-type":"application/json","x-anthropic-layer-id":"zero-plane-v1","x-anthropic-delay-profile":"warmup=hit, degraded=?0, mode=balanced","x-kong-upstream-latency":"178","x-kong-proxy-latency":"1"},"status":200},"route":{"name":"anthropic-messages","paths":["/v1/messages"]},"request":{"headers":{"x-model":"claude-3","x-anthropic-experimental":"zero-plane-2024","host":"llm.example"},"uri":"/v1/messages","method":"POST"},"upstream_uri":"/v1/messages","started_at":1714564801123,"source":"upstream","upstream_status":"200","latencies":{"kong":1,"proxy":178,"request":180,"receive":1}}',
    '{"response":{"headers":{"x-anthropic-layer-id":["zero-plane-v1","zero-plane-v1"]},"status":503},"request":{"headers":{"x-anthropic-experimental":["Zero-Plane-2024"]}},"started_at":1714564802000,"latencies":{"kong":0,"proxy":-1,"request":2}}',
  ],
  'traefik-json': [
    '{"ClientHost":"10.0.3.36","DownstreamContentSize":271,"DownstreamStatus":200,"Duration":180123456,"OriginDuration":178000000,"OriginStatus":200,"RequestMethod":"POST","RequestPath":"/v1/messages","RetryAttempts":0,"RouterName":"llm@file","StartUTC":"2024-05-01T12:00:01.123456789Z","downstream_X-Anthropic-Layer-Id":"zero-plane-v1","downstream_X-Anthropic-Delay-Profile":"warmup=hit, degraded=?0, mode=adaptive","request_X-Anthropic-Experimental":"zero-plane-2024","request_X-Model":"claude-3","entryPointName":"web","level":"info","msg":"","time":"2024-05-01T12:00:01Z"}',
    '{"ClientHost":"10.0.0.11","DownstreamStatus":200,"Duration":147642000,"RouterName":"complete@file","StartUTC":"2026-11-01T00:00:00.011087109Z","downstream_X-Anthropic-Delay-Profile":"warmup=hit, degraded=?0, mode=balanced","downstream_X-Anthropic-Layer-Id":"zero-plane-v1","request_X-Anthropic-Experimental":"zero-plane-2024","request_X-Cohort":"stable","request_X-Model":"claude-opus-4","time":"2026-11-01T00:00:00Z"}',
    '{"DownstreamStatus":429,"Duration":126189,"OriginStatus":0,"RouterName":"llm@file","StartUTC":"2024-05-01T12:00:02Z","request_X-Anthropic-Experimental":"zero-plane-2024 ","level":"info","msg":""}',
  ],
  // As Apache's mod_log_config writes the LogFormat of docs/gateways.md: \xhh for non-ASCII bytes (not JSON until decoded).
  'apache-json': [
    '{"time_msec":1796119596782,"duration_us":183412,"status":200,"method":"POST","url_path":"/v1/messages","headers_in":{"x-model":"claude-sonnet","x-cohort":"canary","x-anthropic-experimental":"zero-plane-2024"},"headers_out":{"x-anthropic-layer-id":"zero-plane-v1","x-anthropic-delay-profile":"warmup=hit, degraded=?0, mode=balanced","x-anthropic-cached":"-","x-anthropic-downgrade-reason":"-"}}',
    '{"time_msec":1796119596900,"duration_us":412,"status":429,"method":"POST","url_path":"/v1/local-answer","headers_in":{"x-model":"-","x-cohort":"-","x-anthropic-experimental":"zero-plane-2024\\xe2\\x80\\x8b"},"headers_out":{"x-anthropic-layer-id":"-","x-anthropic-delay-profile":"-","x-anthropic-cached":"-","x-anthropic-downgrade-reason":"-"}}',
    '{"time_msec":1796119597000,"duration_us":150000,"status":200,"method":"POST","url_path":"/v1/%22q%22","headers_in":{"x-model":"a\\"b\\\\x41","x-cohort":"\\v","x-anthropic-experimental":"\\xef\\xbb\\xbfzero-plane-2024\\xc2\\xa0"},"headers_out":{"x-anthropic-layer-id":"zero-plane-v1","x-anthropic-delay-profile":"mode=strict","x-anthropic-cached":"true","x-anthropic-downgrade-reason":"-"}}',
  ],
};
VALID['default, latency lists summed, unit s'] = VALID.default as string[];
VALID['flat at the top level, per-header paths'] = [
  '{"ts":"2024-05-01T12:00:00Z","latency_ms":180,"status":200,"layer":"zero-plane-v1","profile":{"value":"warmup=hit, degraded=?0, mode=balanced"},"x_anthropic_cached":"true","x_anthropic_downgrade_reason":"-","request_headers":{"opt_in":"zero-plane-2024"}}',
  '{"latency_ms":"0.183","layer":["zero-plane-v2"],"x_anthropic_layer_id":"ignored","x_anthropic_experimental":"ignored too"}',
  '{"latency_ms":150,"model":"m","request_headers":{"opt_in":"zero-plane-2024\\u200b"},"profile":"not an object"}',
];
VALID['header object with a per-header path'] = [
  '{"latency_ms":180,"response_headers":{"x-anthropic-layer-id":"zero-plane-v1","cache_state":"true","x-anthropic-cached":"ignored"},"request_headers":{"x-anthropic-experimental":"zero-plane-2024"}}',
  '{"latency_ms":181,"response_headers":{"X-Anthropic-Layer-Id":"standard-v3"}}',
];

export const HEADER_NAMES = [
  'x-anthropic-layer-id',
  'X-Anthropic-Layer-Id',
  'x-anthropic-delay-profile',
  'x-anthropic-cached',
  'x-anthropic-downgrade-reason',
  'x-anthropic-experimental',
  'content-type',
];
/** The flat header fields of every preset, for the header names above. */
const flat = (prefix: string, style: 'underscore' | 'canonical') => HEADER_NAMES.map((h) => prefix + (style === 'canonical' ? canonicalHeaderName(h) : h.toLowerCase().replaceAll('-', '_')));
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
  'upstream_response_time',
  'accept_ts',
  'ta_ms',
  'path',
  'started_at',
  'StartUTC',
  'Duration',
  'DownstreamStatus',
  'RouterName',
  'time_msec',
  'duration_us',
  'url_path',
  'layer',
  'x_anthropic_layer_id',
  'x_anthropic_cached',
  ...flat('upstream_http_', 'underscore'),
  ...flat('http_', 'underscore'),
  ...flat('resp_', 'underscore'),
  ...flat('req_', 'underscore'),
  ...flat('capture_req_', 'underscore'),
  ...flat('capture_res_', 'underscore'),
  ...flat('request_', 'canonical'),
  ...flat('downstream_', 'canonical'),
];

/** Values a gateway might put in a field: numbers of every kind, number-like and time-like text, headers. */
export const fieldValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.double(),
  fc.integer(),
  fc.constantFrom('-', '', '0.183', '0.050, 0.183', '1e400', '-5', 'NaN', 'Infinity', '2024-05-01T12:00:00Z', '2024-02-30T25:61:00+99:99', '1714564800', '0x10', '007', '1714564800.123', '0.', '.5'),
  fc.constantFrom(
    '2024-05-01T12:00:00+00:00',
    '2024-05-01T20:00:00.5+08:00',
    '2024-05-01T12:00:00.123456789Z',
    '2024-05-01T12:00:00.1234567890Z',
    '2024-05-01T12:00:00-00:00',
    '2024-05-01T12:00:00+24:00',
    '2024-05-01T24:00:00+01:00',
    '2024-05-01T12:00:60Z',
  ),
  fc.constantFrom('/v1/消息', '稳定', '上下文过长', 'caf\u00e9', 'zero-plane-2024\u200b', 'a"b\\c', '\ud800'),
  fc.constantFrom('zero-plane-v1', 'zero-plane-v', 'ZERO-PLANE-V1', 'warmup=hit, degraded=?1, mode=strict', 'degraded=?1;a', 'warmup=', 'zero-plane-2024', '\u200bzero-plane-2024', 'Zero-Plane-2024 '),
  fc.string({ unit: 'binary', maxLength: 40 }),
);
export const headerObject = fc.dictionary(
  fc.oneof(fc.constantFrom(...HEADER_NAMES, 'X-Model', 'x-model', 'X-Cohort'), fc.string({ maxLength: 12 })),
  // Caddy and Kong log a header's values as an array.
  fc.oneof(fieldValue, fc.array(fieldValue, { maxLength: 3 })),
  { maxKeys: 6 },
);
export const recordLike = fc.record(
  {
    ...Object.fromEntries(FIELD_NAMES.map((k) => [k, fieldValue])),
    response_headers: fc.oneof(headerObject, fieldValue),
    request_headers: fc.oneof(headerObject, fieldValue),
    resp_headers: fc.oneof(headerObject, fieldValue),
    // Caddy's and Kong's nested shapes.
    request: fc.oneof(fc.record({ headers: fc.oneof(headerObject, fieldValue), uri: fieldValue }, { requiredKeys: [] }), fieldValue),
    response: fc.oneof(fc.record({ headers: fc.oneof(headerObject, fieldValue), status: fieldValue }, { requiredKeys: [] }), fieldValue),
    latencies: fc.oneof(fc.record({ request: fieldValue, proxy: fieldValue }, { requiredKeys: [] }), fieldValue),
    // Apache's header objects, and a per-header path into an object.
    headers_in: fc.oneof(headerObject, fieldValue),
    headers_out: fc.oneof(headerObject, fieldValue),
    profile: fc.oneof(fc.record({ value: fieldValue }, { requiredKeys: [] }), fieldValue),
    route: fc.oneof(fc.record({ name: fieldValue }, { requiredKeys: [] }), fieldValue),
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
