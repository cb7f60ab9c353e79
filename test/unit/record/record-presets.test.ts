// Each preset reads its gateway's shape: where the fields are, in which unit, how a missing value looks
// there. The configured absent values mean "absent" wherever they sit (a flat field, a header object, a
// header array, a label, a latency), latency paths are tried in order, and a label path holding an array
// takes its first element. Both the JSON.parse path and the byte reader are checked on every line.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { recordParserFor } from '../../../src/pipeline.js';
import type { GatewayRecord, ParseResult } from '../../../src/record/parse-record.js';
import { canonicalHeaderName, PRESET_NAMES, type PresetName } from '../../../src/record/presets.js';
import { SignalClassifier } from '../../../src/signals/classify.js';
import { ConfigError } from '../../../src/config/config-error.js';

function parserFor(preset: PresetName, extra = '') {
  const config = parseConfig(`input:\n  preset: ${preset}\n${extra}`, 'test.yml');
  return recordParserFor(config, new SignalClassifier(config.headers));
}

/** The record of a line, read both ways (the byte reader must agree whenever it answers). */
function record(preset: PresetName, line: object | string, extra = ''): GatewayRecord {
  const p = parserFor(preset, extra);
  const text = typeof line === 'string' ? line : JSON.stringify(line);
  const r = p.parse(text);
  const bytes = Buffer.from(text, 'utf8');
  const fast = p.parseBytes(bytes, 0, bytes.length);
  if (fast !== undefined) expect(fast).toStrictEqual(r);
  if (!r.ok) throw new Error(`${preset}: ${r.reason}`);
  return r.record;
}

const reason = (preset: PresetName, line: object, extra = ''): string => {
  const r: ParseResult = parserFor(preset, extra).parse(JSON.stringify(line));
  return r.ok ? 'ok' : r.reason;
};

const HIT = { layer: 'zero-plane-v1', profile: 'warmup=hit, degraded=?0, mode=balanced' };

describe('nginx-json', () => {
  const line = (o: Record<string, string>) => ({
    time_iso8601: '2026-11-29T12:00:00+00:00',
    request_time: '0.190',
    upstream_response_time: '0.183',
    status: '200',
    uri: '/v1/messages',
    http_x_model: 'claude-sonnet',
    http_x_cohort: '',
    upstream_http_x_anthropic_layer_id: HIT.layer,
    upstream_http_x_anthropic_delay_profile: HIT.profile,
    upstream_http_x_anthropic_cached: '',
    upstream_http_x_anthropic_downgrade_reason: '',
    http_x_anthropic_experimental: 'zero-plane-2024',
    ...o,
  });

  it('takes the upstream time, seconds, flat upstream_http_* / http_* headers, "" as absent', () => {
    const r = record('nginx-json', line({}));
    expect(r.latencySeconds).toBeCloseTo(0.183, 12);
    expect([r.timeMs, r.status, r.model, r.route, r.cohort]).toEqual([Date.UTC(2026, 10, 29, 12), 200, 'claude-sonnet', '/v1/messages', '']);
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': HIT.layer, 'x-anthropic-delay-profile': HIT.profile });
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024' });
  });

  it('a request nginx answered itself (no upstream time) still counts, with its request time', () => {
    const r = record('nginx-json', line({ upstream_response_time: '', request_time: '0.000', status: '429', upstream_http_x_anthropic_layer_id: '' }));
    expect([r.latencySeconds, r.status, r.responseHeaders]).toEqual([0, 429, { 'x-anthropic-delay-profile': HIT.profile }]);
  });

  it('an upstream never reached ("-" as the last attempt) falls back to the request time too', () => {
    expect(record('nginx-json', line({ upstream_response_time: '0.050, -', request_time: '3.001' })).latencySeconds).toBeCloseTo(3.001, 12);
    expect(record('nginx-json', line({ upstream_response_time: '0.050 : 0.170' })).latencySeconds).toBeCloseTo(0.17, 12);
    // A value that is there but wrong does not fall back: it is a bad line.
    expect(reason('nginx-json', line({ upstream_response_time: 'abc' }))).toBe('bad_latency');
  });

  it('the old format with request_time only still reads', () => {
    const { upstream_response_time: _, ...old } = line({});
    expect(record('nginx-json', old).latencySeconds).toBeCloseTo(0.19, 12);
  });

  it('a missing opt-in header ("") is missing, not a malformed value', () => {
    expect(record('nginx-json', line({ http_x_anthropic_experimental: '' })).requestHeaders).toEqual({});
  });
});

describe('envoy-json', () => {
  const base = { start_time: '2026-11-29T12:00:00.250Z', duration: 183, response_code: 200, route_name: 'messages', model: 'claude-sonnet', cohort: null, resp_x_anthropic_layer_id: HIT.layer };

  it('a missing header is null (Envoy ≥ 1.32 JSON formatter) or "-" (older): both absent, everywhere', () => {
    for (const missing of [null, '-']) {
      const r = record('envoy-json', { ...base, cohort: missing, resp_x_anthropic_cached: missing, resp_x_anthropic_downgrade_reason: missing, req_x_anthropic_experimental: missing });
      expect([r.latencySeconds, r.status, r.route, r.cohort]).toEqual([0.183, 200, 'messages', '']);
      expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': HIT.layer });
      expect(r.requestHeaders).toEqual({});
    }
  });

  it('numbers as strings (the legacy string formatter) read the same', () => {
    expect(record('envoy-json', { ...base, duration: '183', response_code: '503' })).toMatchObject({ latencySeconds: 0.183, status: 503 });
  });
});

describe('caddy-json', () => {
  const line = (req: Record<string, string[]>, res: Record<string, string[]>) => ({
    level: 'info',
    ts: 1796117671.546249,
    logger: 'http.log.access.log0',
    msg: 'handled request',
    request: { remote_ip: '127.0.0.1', proto: 'HTTP/1.1', method: 'POST', host: 'llm.example', uri: '/v1/messages', headers: { 'Content-Type': ['application/json'], ...req } },
    user_id: '',
    duration: 0.127842061,
    size: 271,
    status: 200,
    resp_headers: { Server: ['Caddy'], ...res },
  });

  it('epoch-seconds ts, duration in seconds, header arrays joined, labels from the first element', () => {
    const r = record(
      'caddy-json',
      line(
        { 'X-Model': ['claude-sonnet', 'ignored'], 'X-Cohort': ['canary'], 'X-Anthropic-Experimental': ['zero-plane-2024'] },
        { 'X-Anthropic-Layer-Id': [HIT.layer], 'X-Anthropic-Delay-Profile': ['warmup=hit', 'degraded=?1'] },
      ),
    );
    expect([r.timeMs, r.latencySeconds, r.status, r.model, r.route, r.cohort]).toEqual([1796117671546.249, 0.127842061, 200, 'claude-sonnet', '/v1/messages', 'canary']);
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': HIT.layer, 'x-anthropic-delay-profile': 'warmup=hit, degraded=?1' });
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024' });
  });

  it('an empty array, or absent items in one, is no header; a request without the header is missing it', () => {
    const r = record('caddy-json', line({ 'X-Model': [] }, { 'X-Anthropic-Layer-Id': [], 'X-Anthropic-Cached': ['', '-'], 'X-Anthropic-Downgrade-Reason': ['-', 'context_too_long'] }));
    expect(r.responseHeaders).toEqual({ 'x-anthropic-downgrade-reason': 'context_too_long' });
    expect(r.requestHeaders).toEqual({});
    expect(r.model).toBe('');
  });
});

describe('haproxy-json', () => {
  const line = (o: Record<string, string>) => ({
    accept_ts: '1796117687.044',
    ta_ms: '123',
    status: '200',
    path: '/v1/messages',
    capture_req_x_anthropic_experimental: 'zero-plane-2024',
    capture_req_x_model: 'claude-haiku',
    capture_req_x_cohort: '-',
    capture_res_x_anthropic_layer_id: HIT.layer,
    capture_res_x_anthropic_delay_profile: HIT.profile,
    capture_res_x_anthropic_cached: '-',
    capture_res_x_anthropic_downgrade_reason: '-',
    ...o,
  });

  it('%Ts.%ms epoch seconds, %Ta ms, captured headers as capture_req_* / capture_res_*, "-" as absent', () => {
    const r = record('haproxy-json', line({}));
    expect([r.timeMs, r.latencySeconds, r.status, r.model, r.route, r.cohort]).toEqual([1796117687044, 0.123, 200, 'claude-haiku', '/v1/messages', '']);
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': HIT.layer, 'x-anthropic-delay-profile': HIT.profile });
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024' });
  });

  it('the json converter escapes non-ASCII: the value is read decoded', () => {
    const r = record(
      'haproxy-json',
      '{"accept_ts":"1796117687.044","ta_ms":"0","status":"429","path":"/v1/local","capture_req_x_anthropic_experimental":"zero-plane-2024\\u00a0","capture_res_x_anthropic_layer_id":"-"}',
    );
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024\u00a0' });
    expect(r.responseHeaders).toEqual({});
  });
});

describe('kong-json', () => {
  const line = (res: Record<string, unknown>, req: Record<string, unknown>, latencies = { kong: 1, proxy: 171, request: 173 }) => ({
    response: { size: 9982, headers: { 'content-type': 'application/json', via: '1.1 kong/3.8.0.0-enterprise-edition', ...res }, status: 200 },
    route: { name: 'anthropic-messages', paths: ['/v1/messages'] },
    request: { headers: { host: 'llm.example', ...req }, uri: '/v1/messages', method: 'POST' },
    started_at: 1726783839538,
    source: 'upstream',
    latencies,
  });

  it('started_at epoch ms, latencies.request ms, response.status, route.name, lower-case header objects', () => {
    const r = record('kong-json', line({ 'x-anthropic-layer-id': HIT.layer }, { 'x-model': 'claude-sonnet', 'x-cohort': 'canary', 'x-anthropic-experimental': 'zero-plane-2024' }));
    expect(r.latencySeconds).toBeCloseTo(0.173, 12);
    expect([r.timeMs, r.status, r.model, r.route, r.cohort]).toEqual([1726783839538, 200, 'claude-sonnet', 'anthropic-messages', 'canary']);
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': HIT.layer });
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024' });
  });

  it('a request Kong answered itself (latencies.proxy -1) counts; a repeated header is an array, joined', () => {
    const r = record('kong-json', line({}, { 'x-anthropic-experimental': ['zero-plane-2024', 'zero-plane-2024'], 'x-model': ['claude-haiku', 'x'] }, { kong: 0, proxy: -1, request: 1 }));
    expect([r.latencySeconds, r.model]).toEqual([0.001, 'claude-haiku']);
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024, zero-plane-2024' });
  });

  it('absent values inside the nested header objects are absent', () => {
    const r = record('kong-json', line({ 'x-anthropic-layer-id': '', 'x-anthropic-cached': '-' }, { 'x-anthropic-experimental': '', 'x-model': '-' }));
    expect([r.responseHeaders, r.requestHeaders, r.model]).toEqual([{}, {}, '']);
  });
});

describe('traefik-json', () => {
  const line = (o: Record<string, unknown>) => ({
    DownstreamStatus: 200,
    Duration: 183_412_775,
    OriginStatus: 200,
    RequestPath: '/v1/messages',
    RouterName: 'llm@file',
    StartUTC: '2026-04-17T06:40:19.888831613Z',
    'downstream_X-Anthropic-Layer-Id': HIT.layer,
    'downstream_Content-Type': 'application/json',
    level: 'info',
    msg: '',
    ...o,
  });

  it('Duration in ns, StartUTC with nanoseconds, kept headers in canonical form', () => {
    const r = record(
      'traefik-json',
      line({
        'request_X-Model': 'claude-sonnet',
        'request_X-Cohort': 'canary',
        'request_X-Anthropic-Experimental': 'zero-plane-2024',
        'downstream_X-Anthropic-Delay-Profile': 'warmup=hit,degraded=?1',
      }),
    );
    expect([r.timeMs, r.latencySeconds, r.status, r.model, r.route, r.cohort]).toEqual([Date.UTC(2026, 3, 17, 6, 40, 19, 888), 0.183412775, 200, 'claude-sonnet', 'llm@file', 'canary']);
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': HIT.layer, 'x-anthropic-delay-profile': 'warmup=hit,degraded=?1' });
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024' });
  });

  it('Traefik writes no key for a header that was not sent: the opt-in is then missing (omitsMissing), not unlogged', () => {
    expect(record('traefik-json', line({})).requestHeaders).toEqual({});
    // The same flat fields without omitsMissing: a line without any of them carries no request headers.
    const plain = record('traefik-json', line({}), '  requestHeaders: { prefix: request_, nameStyle: canonical }\n');
    expect(plain.requestHeaders).toBeUndefined();
  });

  it('canonical names are Go’s: first letter and each letter after a dash upper case, the rest lower', () => {
    expect(['x-anthropic-layer-id', 'X-ANTHROPIC-DELAY-PROFILE', 'x-model', 'te', 'x--y'].map(canonicalHeaderName)).toEqual([
      'X-Anthropic-Layer-Id',
      'X-Anthropic-Delay-Profile',
      'X-Model',
      'Te',
      'X--Y',
    ]);
  });
});

describe('absent values, latency fallbacks and label arrays in any mapping', () => {
  it('configured absent spellings apply in header objects, arrays and labels of the default shape too', () => {
    const extra = '  absentValues: ["", "-", "n/a"]\n';
    const r = record(
      'default',
      { latency_ms: 1, model: 'n/a', response_headers: { 'x-anthropic-layer-id': 'n/a', 'x-anthropic-cached': ['n/a', 'true'] }, request_headers: { 'x-anthropic-experimental': 'n/a' } },
      extra,
    );
    expect([r.model, r.responseHeaders, r.requestHeaders]).toEqual(['', { 'x-anthropic-cached': 'true' }, {}]);
  });

  it('fields.latency as a list: the first path holding a latency wins, absent ones are passed over', () => {
    const extra = '  fields:\n    latency: [timing.upstream, timing.total]\n';
    expect(record('default', { timing: { upstream: 120, total: 150 } }, extra).latencySeconds).toBeCloseTo(0.12, 12);
    expect(record('default', { timing: { upstream: '-', total: 150 } }, extra).latencySeconds).toBeCloseTo(0.15, 12);
    expect(record('default', { timing: { upstream: null, total: 150 } }, extra).latencySeconds).toBeCloseTo(0.15, 12);
    expect(reason('default', { timing: {} }, extra)).toBe('missing_latency');
    expect(reason('default', { timing: { upstream: -1, total: 150 } }, extra)).toBe('negative_latency');
  });

  it('a label path holding an array takes its first element; nested arrays and objects give no label', () => {
    const extra = '  fields:\n    model: m\n';
    expect(record('default', { latency_ms: 1, m: ['claude-sonnet', 'x'] }, extra).model).toBe('claude-sonnet');
    expect(record('default', { latency_ms: 1, m: [42] }, extra).model).toBe('42');
    expect(record('default', { latency_ms: 1, m: [['a']] }, extra).model).toBe('');
    expect(record('default', { latency_ms: 1, m: [{ a: 1 }] }, extra).model).toBe('');
    expect(record('default', { latency_ms: 1, m: [] }, extra).model).toBe('');
    expect(record('default', { latency_ms: 1, m: ['-'] }, extra).model).toBe('');
  });

  it('nanoseconds and the preset unit override', () => {
    expect(record('default', { latency_ms: 183_000_000 }, '  latencyUnit: ns\n').latencySeconds).toBeCloseTo(0.183, 12);
    expect(record('traefik-json', { Duration: 183, DownstreamStatus: 200 }, '  latencyUnit: ms\n').latencySeconds).toBeCloseTo(0.183, 12);
  });

  it('every preset parses its own shape and only its own (no preset reads another preset’s line)', () => {
    // The header each preset keeps first, where it keeps it, with a latency: only that preset reads the line.
    const own: Record<PresetName, object> = {
      default: { latency_ms: 1, response_headers: { 'x-anthropic-layer-id': 'x' } },
      'nginx-json': { request_time: '0.1', upstream_http_x_anthropic_layer_id: 'x' },
      'envoy-json': { duration: 1, resp_x_anthropic_layer_id: 'x' },
      'caddy-json': { duration: 0.1, resp_headers: { 'X-Anthropic-Layer-Id': ['x'] } },
      'haproxy-json': { ta_ms: '1', capture_res_x_anthropic_layer_id: 'x' },
      'kong-json': { latencies: { request: 1 }, response: { headers: { 'x-anthropic-layer-id': 'x' } } },
      'traefik-json': { Duration: 1, 'downstream_X-Anthropic-Layer-Id': 'x' },
      'apache-json': { duration_us: 1, headers_out: { 'x-anthropic-layer-id': 'x' } },
    };
    for (const a of PRESET_NAMES) {
      for (const b of PRESET_NAMES) {
        const p = parserFor(b);
        const obj = JSON.parse(JSON.stringify(own[a])) as unknown;
        const reads = p.parseValue(obj).ok && p.carriesHeaders(obj);
        expect(reads, `${b} reading a ${a} line`).toBe(a === b);
      }
    }
  });
});

describe('config', () => {
  it('nameStyle and omitsMissing are for flat fields; a header source is a path or a prefix', () => {
    const bad = (yaml: string) => expect(() => parseConfig(`input:\n${yaml}`, 'zp.yml')).toThrow(ConfigError);
    bad('  responseHeaders: { path: h, nameStyle: canonical }\n');
    bad('  requestHeaders: { path: h, omitsMissing: true }\n');
    bad('  requestHeaders: { path: h, prefix: p_ }\n');
    bad('  requestHeaders: { nameStyle: canonical }\n');
    bad('  latencyUnit: minutes\n');
    bad('  fields: { latency: [] }\n');
    expect(parseConfig('input:\n  fields: { latency: [a, b] }\n', 'zp.yml').input.fields.latency).toEqual(['a', 'b']);
    expect(parseConfig('input:\n  fields: { latency: a }\n', 'zp.yml').input.fields.latency).toEqual(['a']);
    expect(parseConfig('', 'zp.yml').input).toMatchObject({ preset: 'auto', latencyUnit: 'preset', responseHeaders: {}, requestHeaders: {} });
  });
});
