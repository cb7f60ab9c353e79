import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { recordParserFor } from '../../../src/pipeline.js';
import { SignalClassifier } from '../../../src/signals/classify.js';
import type { ParseResult } from '../../../src/record/parse-record.js';

function parserFor(yaml = '') {
  const config = yaml ? parseConfig(yaml, 'test.yml') : defaultConfig();
  return recordParserFor(config, new SignalClassifier(config.headers));
}

function record(result: ParseResult) {
  if (!result.ok) throw new Error(`parse failed: ${result.reason}`);
  return result.record;
}

const reason = (r: ParseResult) => (r.ok ? 'ok' : r.reason);

describe('record parsing (default preset)', () => {
  const p = parserFor();

  it('reads the default mapping, latency in ms', () => {
    const r = record(
      p.parse('{"ts":"2026-11-29T10:00:00.250Z","latency_ms":183,"status":200,"model":"m1","route":"/v1/messages","cohort":"canary","response_headers":{"x-anthropic-layer-id":"zero-plane-v1"}}'),
    );
    expect(r.timeMs).toBe(Date.UTC(2026, 10, 29, 10, 0, 0, 250));
    expect(r.latencySeconds).toBeCloseTo(0.183, 12);
    expect(r.status).toBe(200);
    expect([r.model, r.route, r.cohort]).toEqual(['m1', '/v1/messages', 'canary']);
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': 'zero-plane-v1' });
    expect(r.requestHeaders).toBeUndefined();
  });

  it('matches header names in any case and keeps values exactly', () => {
    const r = record(p.parse('{"latency_ms":1,"response_headers":{"X-Anthropic-LAYER-id":" zero-plane-v1","Other":"x"},"request_headers":{"X-ANTHROPIC-EXPERIMENTAL":"zero-plane-2024"}}'));
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': ' zero-plane-v1' });
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024' });
  });

  it('reads "" and "-" in a header object as no header (nginx and HAProxy write them for one), joins repeated headers', () => {
    const r = record(
      p.parse(
        '{"latency_ms":1,"response_headers":{"x-anthropic-layer-id":"-","x-anthropic-delay-profile":["warmup=hit","","degraded"],"x-anthropic-cached":[]},"request_headers":{"x-anthropic-experimental":""}}',
      ),
    );
    expect(r.responseHeaders).toEqual({ 'x-anthropic-delay-profile': 'warmup=hit, degraded' });
    // The log carries request headers (the object is there), and the opt-in is not among them.
    expect(r.requestHeaders).toEqual({});
  });

  it('reads all three timestamp forms', () => {
    const at = Date.UTC(2026, 10, 29, 10, 0, 0);
    expect(record(p.parse(`{"ts":"2026-11-29T11:00:00+01:00","latency_ms":1}`)).timeMs).toBe(at);
    expect(record(p.parse(`{"ts":${at / 1000},"latency_ms":1}`)).timeMs).toBe(at);
    expect(record(p.parse(`{"ts":"${at / 1000}.5","latency_ms":1}`)).timeMs).toBe(at + 500);
    expect(record(p.parse(`{"ts":${at},"latency_ms":1}`)).timeMs).toBe(at);
    expect(record(p.parse(`{"latency_ms":1}`)).timeMs).toBeUndefined();
  });

  it('accepts numeric strings and retry lists for latency', () => {
    expect(record(p.parse('{"latency_ms":"183.5"}')).latencySeconds).toBeCloseTo(0.1835, 12);
    expect(record(p.parse('{"latency_ms":"50, 183"}')).latencySeconds).toBeCloseTo(0.183, 12);
    expect(record(p.parse('{"latency_ms":"50 : 183"}')).latencySeconds).toBeCloseTo(0.183, 12);
    expect(record(p.parse('{"latency_ms":0}')).latencySeconds).toBe(0);
  });

  it('rejects lists with garbage in them; an unreached last attempt ("-") has no latency', () => {
    expect(reason(p.parse('{"latency_ms":"abc, 185"}'))).toBe('bad_latency');
    expect(reason(p.parse('{"latency_ms":"Infinity, 185"}'))).toBe('bad_latency');
    expect(reason(p.parse('{"latency_ms":"183,"}'))).toBe('bad_latency');
    expect(reason(p.parse('{"latency_ms":"183, -"}'))).toBe('missing_latency');
    expect(record(p.parse('{"latency_ms":"-, 183"}')).latencySeconds).toBeCloseTo(0.183, 12);
  });

  it('names the reason of every unusable line', () => {
    expect(reason(p.parse('not json'))).toBe('invalid_json');
    expect(reason(p.parse('{"latency_ms":1'))).toBe('invalid_json');
    expect(reason(p.parse('[1,2]'))).toBe('not_object');
    expect(reason(p.parse('"text"'))).toBe('not_object');
    expect(reason(p.parse('null'))).toBe('not_object');
    expect(reason(p.parse('{"status":200}'))).toBe('missing_latency');
    expect(reason(p.parse('{"latency_ms":null}'))).toBe('missing_latency');
    expect(reason(p.parse('{"latency_ms":"-"}'))).toBe('missing_latency');
    expect(reason(p.parse('{"latency_ms":"abc"}'))).toBe('bad_latency');
    expect(reason(p.parse('{"latency_ms":"Infinity"}'))).toBe('bad_latency');
    expect(reason(p.parse('{"latency_ms":1e400}'))).toBe('bad_latency');
    expect(reason(p.parse('{"latency_ms":{"v":1}}'))).toBe('bad_latency');
    expect(reason(p.parse('{"latency_ms":-1}'))).toBe('negative_latency');
    expect(reason(p.parse('{"latency_ms":"-0.5"}'))).toBe('negative_latency');
    expect(reason(p.parse('{"latency_ms":1,"ts":"yesterday"}'))).toBe('bad_timestamp');
    expect(reason(p.parse('{"latency_ms":1,"ts":"2026-11-29T10:00:00"}'))).toBe('bad_timestamp');
    expect(reason(p.parse('{"latency_ms":1,"ts":-5}'))).toBe('bad_timestamp');
  });

  it('never lets a hostile value become a huge label', () => {
    const r = record(p.parse('{"latency_ms":1,"model":{"a":1},"route":42,"cohort":null}'));
    expect([r.model, r.route, r.cohort]).toEqual(['', '42', '']);
  });
});

describe('record parsing (presets and overrides)', () => {
  it('nginx-json: request_time in seconds, flat upstream_http_* headers, empty = absent', () => {
    const p = parserFor('input:\n  preset: nginx-json\n');
    const r = record(
      p.parse(
        '{"time_iso8601":"2026-11-29T10:00:00+00:00","request_time":"0.050, 0.183","status":"200","uri":"/v1/messages","http_x_model":"m","upstream_http_x_anthropic_layer_id":"zero-plane-v1","upstream_http_x_anthropic_delay_profile":"","http_x_anthropic_experimental":""}',
      ),
    );
    expect(r.latencySeconds).toBeCloseTo(0.183, 12);
    expect(r.status).toBe(200);
    expect(r.route).toBe('/v1/messages');
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': 'zero-plane-v1' });
    expect(r.requestHeaders).toEqual({});
  });

  it('nginx-json with latencyList: sum adds the attempts', () => {
    const p = parserFor('input:\n  preset: nginx-json\n  latencyList: sum\n');
    expect(record(p.parse('{"request_time":"0.050, 0.183"}')).latencySeconds).toBeCloseTo(0.233, 12);
  });

  it('envoy-json: duration in ms, resp_/req_ fields, "-" = absent', () => {
    const p = parserFor('input:\n  preset: envoy-json\n');
    const r = record(
      p.parse('{"start_time":"2026-11-29T10:00:00.000Z","duration":183,"response_code":503,"route_name":"messages","resp_x_anthropic_layer_id":"-","req_x_anthropic_experimental":"zero-plane-2024"}'),
    );
    expect(r.latencySeconds).toBeCloseTo(0.183, 12);
    expect(r.status).toBe(503);
    expect(r.responseHeaders).toEqual({});
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024' });
  });

  it('dotted paths and units are configurable', () => {
    const p = parserFor('input:\n  fields:\n    latency: timing.total\n    model: req.model\n  latencyUnit: us\n');
    const r = record(p.parse('{"timing":{"total":"183000"},"req":{"model":"m2"}}'));
    expect(r.latencySeconds).toBeCloseTo(0.183, 12);
    expect(r.model).toBe('m2');
  });
});
