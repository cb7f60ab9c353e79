// Any layout a gateway can write is mappable: a header at a dotted path of its own (input.headers.response /
// .request, overriding the side's source for that header only), flat header fields at the top level
// (responseHeaders.prefix: ""), and Apache's mod_log_config escapes (\xhh, \v), which are not JSON and are
// decoded so that the opt-in header's real value (a U+200B, a non-breaking space) is classified. The byte
// reader and the JSON.parse path must give the same records for each; a bad mapping exits 2 naming it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { Pipeline, recordParserFor } from '../../../src/pipeline.js';
import { decodeApacheEscapes } from '../../../src/record/apache-escapes.js';
import type { GatewayRecord, RecordParser } from '../../../src/record/parse-record.js';
import { buildReport } from '../../../src/report/build-report.js';
import { SignalClassifier } from '../../../src/signals/classify.js';
import { runCli } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const NOW = Date.UTC(2026, 11, 2, 10);

function parserOf(yaml: string): RecordParser {
  const config = parseConfig(yaml, 'test.yml');
  return recordParserFor(config, new SignalClassifier(config.headers));
}

/** The record of a line read both ways; `bytes: true` requires the byte reader to answer (not decline). */
function read(p: RecordParser, line: object | string, opts: { bytes: boolean } = { bytes: true }): GatewayRecord {
  const text = typeof line === 'string' ? line : JSON.stringify(line);
  const slow = p.parse(text);
  const buf = Buffer.from(text, 'utf8');
  const fast = p.parseBytes(buf, 0, buf.length);
  if (opts.bytes) expect(fast, `the byte reader declined ${text}`).toBeDefined();
  if (fast !== undefined) expect(fast).toStrictEqual(slow);
  if (!slow.ok) throw new Error(`${slow.reason}: ${text}`);
  return slow.record;
}

const FLAT_TOP = 'input:\n  preset: default\n  responseHeaders: { prefix: "" }\n  requestHeaders: { prefix: "" }\n';
const PATHS =
  'input:\n  preset: default\n  headers:\n    response:\n      X-Anthropic-Layer-Id: layer\n      x-anthropic-delay-profile: meta.profile\n    request:\n      x-anthropic-experimental: client.opt_in\n';

describe('responseHeaders.prefix: "" — header fields at the top level', () => {
  it('reads x_anthropic_layer_id and its neighbours from the top level, both ways', () => {
    const p = parserOf(FLAT_TOP);
    const r = read(p, { latency_ms: 183, x_anthropic_layer_id: 'zero-plane-v1', x_anthropic_delay_profile: 'degraded=?1', x_anthropic_cached: '-', x_anthropic_experimental: 'zero-plane-2024\u200b' });
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'degraded=?1' });
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024\u200b' });
    // A line without any of the fields carries no headers (and no opt-in to count).
    const none = read(p, { latency_ms: 183, response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } });
    expect([none.responseHeaders, none.requestHeaders]).toEqual([{}, undefined]);
  });

  it('with nameStyle: canonical, the fields are X-Anthropic-Layer-Id at the top level', () => {
    const p = parserOf('input:\n  preset: default\n  responseHeaders: { prefix: "", nameStyle: canonical }\n');
    expect(read(p, { latency_ms: 1, 'X-Anthropic-Layer-Id': 'zero-plane-v2' }).responseHeaders).toEqual({ 'x-anthropic-layer-id': 'zero-plane-v2' });
  });
});

describe('input.headers: a dotted path per header', () => {
  it('each mapped header is read from its path, names in any case, both ways', () => {
    const p = parserOf(PATHS);
    const r = read(p, {
      latency_ms: 180,
      layer: 'zero-plane-v1',
      meta: { profile: 'warmup=hit, degraded=?0' },
      client: { opt_in: 'Zero-Plane-2024' },
      response_headers: { 'x-anthropic-cached': 'true', 'x-anthropic-layer-id': 'ignored: mapped elsewhere' },
    });
    // The unmapped ones still come from the preset's source (response_headers).
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit, degraded=?0', 'x-anthropic-cached': 'true' });
    expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': 'Zero-Plane-2024' });
  });

  it('a mapped path that is there carries its side even without the source; an absent value is no header', () => {
    const p = parserOf(PATHS);
    const r = read(p, { latency_ms: 180, layer: '-', client: { opt_in: '' } });
    expect([r.responseHeaders, r.requestHeaders]).toEqual([{}, {}]);
    // Every request header mapped away from request_headers: that object is not read at all.
    const gone = read(p, { latency_ms: 180, request_headers: { 'x-anthropic-experimental': 'zero-plane-2024' } });
    expect(gone.requestHeaders).toBeUndefined();
  });

  it('overrides a preset for one header only: nginx-json with the layer id under a key of its own', () => {
    const p = parserOf('input:\n  preset: nginx-json\n  headers:\n    response: { x-anthropic-layer-id: served_by }\n');
    const r = read(p, {
      request_time: '0.183',
      served_by: 'zero-plane-v3',
      upstream_http_x_anthropic_layer_id: 'standard-v3',
      upstream_http_x_anthropic_delay_profile: 'degraded=?1',
      http_x_anthropic_experimental: '',
    });
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': 'zero-plane-v3', 'x-anthropic-delay-profile': 'degraded=?1' });
    expect(r.requestHeaders).toEqual({});
  });

  it('maps into a header object and to a header list (Caddy-style arrays are joined)', () => {
    const p = parserOf('input:\n  preset: caddy-json\n  headers:\n    response: { x-anthropic-cached: resp_headers.X-Cache-State }\n');
    const r = read(p, { duration: 0.18, resp_headers: { 'X-Anthropic-Layer-Id': ['zero-plane-v1'], 'X-Cache-State': ['true'], 'X-Anthropic-Cached': ['ignored'] } });
    expect(r.responseHeaders).toEqual({ 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-cached': 'true' });
  });

  it('the byte reader and JSON.parse agree on any line of mapped and flat fields (fuzzed)', () => {
    const value = fc.oneof(
      fc.constantFrom('zero-plane-v1', '-', '', 'degraded=?1', 'zero-plane-2024\u00a0'),
      fc.integer(),
      fc.constant(null),
      fc.array(fc.constantFrom('a', '-', 'zero-plane-v1'), { maxLength: 2 }),
      fc.dictionary(fc.constantFrom('profile', 'opt_in', 'x'), fc.constantFrom('degraded=?1', 'v', '-')),
    );
    const line = fc.dictionary(
      fc.constantFrom('latency_ms', 'layer', 'meta', 'client', 'x_anthropic_layer_id', 'x_anthropic_cached', 'x_anthropic_experimental', 'response_headers', 'request_headers', 'model'),
      value,
    );
    for (const yaml of [PATHS, FLAT_TOP, `${FLAT_TOP}  headers:\n    response: { x-anthropic-cached: meta.x }\n`]) {
      const p = parserOf(yaml);
      let answered = 0;
      fc.assert(
        fc.property(line, fc.integer({ min: 0, max: 500 }), (o, ms) => {
          const text = JSON.stringify({ latency_ms: ms, ...o });
          const buf = Buffer.from(text, 'utf8');
          const fast = p.parseBytes(buf, 0, buf.length);
          // The "headers never seen" check reads mapped paths the same from bytes as from text.
          expect(p.carriesResponseHeadersBytes(buf, 0, buf.length)).toBe(p.carriesResponseHeadersText(text));
          if (fast !== undefined) {
            answered++;
            expect(fast).toStrictEqual(p.parse(text));
          }
        }),
        { numRuns: 1500 },
      );
      // Lists of two items are left to JSON.parse; the rest must be read from bytes.
      expect(answered).toBeGreaterThan(500);
    }
  });

  it('detection sees a mapped header as evidence, and report counts through it', () => {
    const config = parseConfig(`input:\n  headers:\n    response: { x-anthropic-layer-id: layer }\n`, 'test.yml');
    const p = new Pipeline(config, { keepTotals: true, clock: () => NOW });
    for (let i = 0; i < 10; i++) p.line(JSON.stringify({ ts: new Date(NOW + i).toISOString(), latency_ms: 180, status: 200, layer: i < 7 ? 'zero-plane-v1' : 'standard-v3' }), 'src');
    p.finish();
    const report = buildReport(p, config);
    expect(report.input).toEqual({ src: 'default' });
    expect([report.requests, report.hits]).toEqual([10, 7]);
  });
});

describe('bad mappings exit 2 naming the file, the line and the key', () => {
  const dir = tempDir('zp-mapping-');
  const log = join(dir, 'log.ndjson');
  writeFileSync(log, '{"latency_ms":1}\n');
  it.each([
    [
      'a header the exporter does not read',
      'input:\n  headers:\n    response:\n      x-anthropic-layer-idd: layer\n',
      4,
      'input.headers.response.x-anthropic-layer-idd',
      'not a header the exporter reads',
    ],
    [
      'a request header under response',
      'input:\n  headers:\n    response:\n      x-anthropic-experimental: opt_in\n',
      4,
      'input.headers.response.x-anthropic-experimental',
      'map it under input.headers.request',
    ],
    [
      'an empty step in the path',
      'input:\n  headers:\n    request:\n      x-anthropic-experimental: "client..opt_in"\n',
      4,
      'input.headers.request.x-anthropic-experimental',
      'not a dotted field path',
    ],
    ['an empty path', 'input:\n  headers:\n    request:\n      x-anthropic-experimental: ""\n', 4, 'input.headers.request.x-anthropic-experimental', 'not a dotted field path'],
    ['one header twice, in two cases', 'input:\n  headers:\n    response:\n      X-Anthropic-Cached: a\n      x-anthropic-cached: b\n', 5, 'input.headers.response.x-anthropic-cached', 'keep one'],
    ['a key that is no header name', 'input:\n  headers:\n    response:\n      "x anthropic": a\n', 4, 'input.headers.response.x anthropic', 'not an HTTP header name'],
    ['a misspelt side', 'input:\n  headers:\n    responses: {}\n', 3, 'input.headers', 'responses'],
    ['a prefix and a path at once, the prefix empty', 'input:\n  responseHeaders: { prefix: "", path: h }\n', 2, 'input.responseHeaders', 'exactly one of'],
  ])('%s', (_what, yaml, line, key, message) => {
    const file = join(dir, 'zp.yml');
    writeFileSync(file, yaml);
    const r = runCli(['report', '--config.file', file, log]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${file}:${line}: ${key}`);
    expect(r.stderr).toContain(message);
  });

  it('a good mapping with an empty prefix runs', () => {
    const file = join(dir, 'good.yml');
    writeFileSync(file, 'input:\n  responseHeaders: { prefix: "" }\n  headers:\n    request: { x-anthropic-experimental: opt_in }\n');
    writeFileSync(log, '{"latency_ms":180,"x_anthropic_layer_id":"zero-plane-v1","opt_in":"zero-plane-2024"}\n');
    const r = runCli(['report', '--config.file', file, '--format', 'json', log]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ requests: 1, hits: 1, optInHeader: { valid: 1 } });
  });
});

/** What Apache's ap_escape_logitem writes for a value's UTF-8 bytes (httpd server/util.c, T_ESCAPE_LOGITEM). */
function apacheEscaped(value: string): string {
  const C: Record<number, string> = { 0x08: '\\b', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x0b: '\\v', 0x22: '\\"', 0x5c: '\\\\' };
  let out = '';
  for (const b of Buffer.from(value, 'utf8')) out += C[b] ?? (b < 0x20 || b >= 0x7f ? `\\x${b.toString(16).padStart(2, '0')}` : String.fromCharCode(b));
  return out;
}

const apacheLine = (optIn: string, layer = 'zero-plane-v1', i = 0) =>
  `{"time_msec":${NOW + i},"duration_us":183000,"status":200,"method":"POST","url_path":"/v1/messages","headers_in":{"x-model":"claude-sonnet","x-cohort":"-","x-anthropic-experimental":"${optIn}"},"headers_out":{"x-anthropic-layer-id":"${layer}","x-anthropic-delay-profile":"warmup=hit, degraded=?0","x-anthropic-cached":"-","x-anthropic-downgrade-reason":"-"}}`;

describe("apache-json: mod_log_config's \\xhh escapes", () => {
  it('decodes runs of \\xhh as UTF-8 and \\v; leaves every other escape as it is', () => {
    expect(decodeApacheEscapes('"zero-plane-2024\\xe2\\x80\\x8b"')).toBe('"zero-plane-2024\u200b"');
    expect(decodeApacheEscapes('"\\xEF\\xBB\\xBFa\\xc2\\xa0"')).toBe('"\ufeffa\u00a0"');
    expect(decodeApacheEscapes('"a\\vb"')).toBe('"a\\u000bb"');
    // A control byte or a quote decoded stays escaped for JSON; an invalid sequence is U+FFFD, as UTF-8 decoding gives.
    expect(decodeApacheEscapes('"\\x01\\x7f\\xff"')).toBe('"\\u0001\u007f\ufffd"');
    // An escaped backslash followed by "x41" is not an escape of its own.
    expect(decodeApacheEscapes('"\\\\x41"')).toBeUndefined();
    expect(decodeApacheEscapes('"\\\\\\x41"')).toBe('"\\\\A"');
    expect(decodeApacheEscapes('"\\n\\t\\"\\\\"')).toBeUndefined();
    expect(decodeApacheEscapes('"\\xg1 \\x4"')).toBeUndefined();
  });

  it('any value Apache escapes is read back exactly, from the line it writes (fuzzed)', () => {
    const p = parserOf('input:\n  preset: apache-json\n');
    const value = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 24 }),
      fc.constantFrom('zero-plane-2024\u200b', '\ufeffzero-plane-2024', 'zero-plane-2024\u00a0', 'a"b\\c', '\\x41', 'tab\there', 'v\u000b'),
    );
    fc.assert(
      fc.property(
        value.filter((v) => !/\p{Cs}/u.test(v) && v !== '' && v !== '-'),
        (v) => {
          const line = apacheLine(apacheEscaped(v), `zero-plane-v1${apacheEscaped(v)}`);
          const r = read(p, line, { bytes: false });
          expect(r.requestHeaders).toEqual({ 'x-anthropic-experimental': v });
          // The response headers are seen in an escaped line too, from bytes as from text.
          const buf = Buffer.from(line, 'utf8');
          expect([p.carriesResponseHeadersBytes(buf, 0, buf.length), p.carriesResponseHeadersText(line)]).toEqual([true, true]);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('the opt-in defects of a log with invisible characters and non-breaking spaces are all counted, detected with no config', () => {
    const variants = ['zero-plane-2024', 'zero-plane-2024\u200b', '\ufeffzero-plane-2024', 'zero-plane-2024\u00a0', 'Zero-Plane-2024', '-'];
    // The first lines that carry headers are the escaped ones: detection must read them too.
    const lines = [...variants.slice(1), variants[0] as string].map((v, i) => apacheLine(apacheEscaped(v === '-' ? '-' : v), 'zero-plane-v1', i));
    for (const line of lines.slice(0, 3)) expect(() => JSON.parse(line), 'not JSON as Apache writes it').toThrow();
    for (const yaml of ['', 'input:\n  preset: apache-json\n']) {
      const config = parseConfig(yaml, 'test.yml');
      const p = new Pipeline(config, { keepTotals: true, clock: () => NOW });
      for (const l of lines) p.line(l, 'src');
      p.finish();
      const report = buildReport(p, config);
      expect(report.input).toEqual({ src: 'apache-json' });
      expect(Object.values(report.parseErrors).every((n) => n === 0)).toBe(true);
      expect(report.optInHeader).toMatchObject({ valid: 1, missing: 1, malformed: 4 });
      expect(report.optInDefects).toEqual({ invisible_char: 2, whitespace: 1, case: 1, value: 0 });
      expect([report.requests, report.hits]).toEqual([6, 6]);
    }
  });

  it('other presets do not decode: the same line is invalid_json for them', () => {
    const p = parserOf('input:\n  preset: default\n');
    expect(p.parse(`{"latency_ms":1,"response_headers":{"x-anthropic-layer-id":"a\\xe2\\x80\\x8b"}}`)).toEqual({ ok: false, reason: 'invalid_json' });
  });
});
