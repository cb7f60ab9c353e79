// One request and one health probe per gateway, as each logs them in the formats of docs/gateways.md: a probe is
// kube-probe's GET of the health path (no Zero-Plane header either way), a request went through a
// Zero-Plane layer. For the detection tests.
import type { PresetName } from '../../src/record/presets.js';

export const NOW = Date.UTC(2026, 11, 2, 10);
const LAYER = 'zero-plane-v1';
const PROFILE = 'warmup=hit, degraded=?0, mode=balanced';
const OPT_IN = 'zero-plane-2024';

/**
 * Per gateway, a health probe as it logs one (GET /healthz from kube-probe: no Zero-Plane header on
 * either side) and a request through a Zero-Plane layer, in the log formats of docs/gateways.md.
 */
export const PROBE: Record<PresetName, (i: number) => object> = {
  default: (i) => ({ ts: new Date(NOW + i).toISOString(), latency_ms: 1, status: 200, route: '/healthz', response_headers: {}, request_headers: { 'user-agent': 'kube-probe/1.29' } }),
  'nginx-json': () => ({
    time_iso8601: '2026-12-02T10:00:00+00:00',
    request_time: '0.001',
    upstream_response_time: '0.001',
    status: '200',
    uri: '/healthz',
    http_x_model: '',
    http_x_cohort: '',
    upstream_http_x_anthropic_layer_id: '',
    upstream_http_x_anthropic_delay_profile: '',
    upstream_http_x_anthropic_cached: '',
    upstream_http_x_anthropic_downgrade_reason: '',
    http_x_anthropic_experimental: '',
  }),
  'envoy-json': () => ({
    start_time: '2026-12-02T10:00:00.000Z',
    duration: 1,
    response_code: 200,
    route_name: 'health',
    model: null,
    cohort: null,
    resp_x_anthropic_layer_id: null,
    resp_x_anthropic_delay_profile: null,
    resp_x_anthropic_cached: null,
    resp_x_anthropic_downgrade_reason: null,
    req_x_anthropic_experimental: null,
  }),
  'caddy-json': (i) => ({
    level: 'info',
    ts: (NOW + i) / 1000,
    logger: 'http.log.access.log0',
    msg: 'handled request',
    request: { remote_ip: '10.0.0.1', method: 'GET', host: 'gw', uri: '/healthz', headers: { 'User-Agent': ['kube-probe/1.29'], Accept: ['*/*'] } },
    bytes_read: 0,
    user_id: '',
    duration: 0.000412,
    size: 2,
    status: 200,
    resp_headers: { 'Content-Type': ['text/plain'], Server: ['Caddy'] },
  }),
  'haproxy-json': () => ({
    accept_ts: `${NOW / 1000}.000`,
    ta_ms: '1',
    status: '200',
    path: '/healthz',
    capture_req_x_anthropic_experimental: '-',
    capture_req_x_model: '-',
    capture_req_x_cohort: '-',
    capture_res_x_anthropic_layer_id: '-',
    capture_res_x_anthropic_delay_profile: '-',
    capture_res_x_anthropic_cached: '-',
    capture_res_x_anthropic_downgrade_reason: '-',
  }),
  'kong-json': (i) => ({
    started_at: NOW + i,
    latencies: { request: 1, proxy: 0, kong: 1 },
    request: { uri: '/healthz', headers: { 'user-agent': 'kube-probe/1.29' } },
    response: { status: 200, headers: { 'content-type': 'text/plain' } },
    route: { name: 'health' },
  }),
  'traefik-json': () => ({ StartUTC: '2026-12-02T10:00:00.000000001Z', Duration: 1_000_000, DownstreamStatus: 200, RouterName: 'health@file', 'request_User-Agent': 'kube-probe/1.29' }),
  'apache-json': (i) => ({
    time_msec: NOW + i,
    duration_us: 412,
    status: 200,
    method: 'GET',
    url_path: '/healthz',
    headers_in: { 'x-model': '-', 'x-cohort': '-', 'x-anthropic-experimental': '-' },
    headers_out: { 'x-anthropic-layer-id': '-', 'x-anthropic-delay-profile': '-', 'x-anthropic-cached': '-', 'x-anthropic-downgrade-reason': '-' },
  }),
};

export const REQUEST: Record<PresetName, (i: number, ms: number) => object> = {
  default: (i, ms) => ({
    ts: new Date(NOW + i).toISOString(),
    latency_ms: ms,
    status: 200,
    route: '/v1/messages',
    response_headers: { 'x-anthropic-layer-id': LAYER, 'x-anthropic-delay-profile': PROFILE },
    request_headers: { 'x-anthropic-experimental': OPT_IN },
  }),
  'nginx-json': (_i, ms) => ({
    ...PROBE['nginx-json'](0),
    request_time: String(ms / 1000),
    upstream_response_time: String(ms / 1000),
    uri: '/v1/messages',
    upstream_http_x_anthropic_layer_id: LAYER,
    upstream_http_x_anthropic_delay_profile: PROFILE,
    http_x_anthropic_experimental: OPT_IN,
  }),
  'envoy-json': (_i, ms) => ({
    ...PROBE['envoy-json'](0),
    duration: ms,
    route_name: 'llm',
    resp_x_anthropic_layer_id: LAYER,
    resp_x_anthropic_delay_profile: PROFILE,
    req_x_anthropic_experimental: OPT_IN,
  }),
  'caddy-json': (i, ms) => ({
    level: 'info',
    ts: (NOW + i) / 1000,
    logger: 'http.log.access.log0',
    msg: 'handled request',
    request: { method: 'POST', uri: '/v1/messages', headers: { 'X-Anthropic-Experimental': [OPT_IN] } },
    duration: ms / 1000,
    status: 200,
    resp_headers: { 'X-Anthropic-Layer-Id': [LAYER], 'X-Anthropic-Delay-Profile': [PROFILE] },
  }),
  'haproxy-json': (_i, ms) => ({
    ...PROBE['haproxy-json'](0),
    ta_ms: String(ms),
    path: '/v1/messages',
    capture_req_x_anthropic_experimental: OPT_IN,
    capture_res_x_anthropic_layer_id: LAYER,
    capture_res_x_anthropic_delay_profile: PROFILE,
  }),
  'kong-json': (i, ms) => ({
    started_at: NOW + i,
    latencies: { request: ms, proxy: ms - 1, kong: 1 },
    request: { uri: '/v1/messages', headers: { 'x-anthropic-experimental': OPT_IN } },
    response: { status: 200, headers: { 'x-anthropic-layer-id': LAYER, 'x-anthropic-delay-profile': PROFILE } },
    route: { name: 'llm' },
  }),
  'traefik-json': (_i, ms) => ({
    StartUTC: '2026-12-02T10:00:00.000000001Z',
    Duration: ms * 1_000_000,
    DownstreamStatus: 200,
    RouterName: 'llm@file',
    'downstream_X-Anthropic-Layer-Id': LAYER,
    'downstream_X-Anthropic-Delay-Profile': PROFILE,
    'request_X-Anthropic-Experimental': OPT_IN,
  }),
  'apache-json': (i, ms) => ({
    ...PROBE['apache-json'](i),
    duration_us: ms * 1000,
    method: 'POST',
    url_path: '/v1/messages',
    headers_in: { 'x-model': '-', 'x-cohort': '-', 'x-anthropic-experimental': OPT_IN },
    headers_out: { 'x-anthropic-layer-id': LAYER, 'x-anthropic-delay-profile': PROFILE, 'x-anthropic-cached': '-', 'x-anthropic-downgrade-reason': '-' },
  }),
};

/** Gateways whose probe lines carry no header field at all (the others log every field, empty or "-"). */
export const PROBES_WITHOUT_EVIDENCE: PresetName[] = ['default', 'caddy-json', 'kong-json', 'traefik-json'];

export function log(preset: PresetName, probes: number, requests: number): string[] {
  return [...Array.from({ length: probes }, (_, i) => JSON.stringify(PROBE[preset](i))), ...Array.from({ length: requests }, (_, i) => JSON.stringify(REQUEST[preset](probes + i, 150 + i)))];
}
