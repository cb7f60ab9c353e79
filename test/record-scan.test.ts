// The byte-level reader (record/scan-record.ts) is a shortcut, never a second opinion: whenever
// RecordParser.parseBytes answers, its answer is exactly parse() of the decoded line; when it cannot be sure
// it declines. Checked on arbitrary text, bytes and record-shaped JSON, on valid lines with byte edits, and
// on lines embedded in a larger buffer; and it must actually answer for the lines gateways commonly write.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecordParser } from '../src/record/parse-record.js';
import { mappingFor } from '../src/record/presets.js';
import { RecordScanner, scannable } from '../src/record/scan-record.js';
import { anyLine, configs, mutated, parserFor, VALID } from './helpers/record-lines.js';

const RUNS = 2000;

/** Bytes that steer a JSON reader: structure, escapes, controls, non-ASCII lead and continuation bytes. */
const TRICKY_BYTES = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x09, 0x0d, 0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc3, 0xe2, 0xff, 0x2d, 0x2e, 0x30, 0x31, 0x65, 0x45, 0x2b, 0x75, 0x6e, 0x74, 0x66, 0x5a];

/** A line's bytes with a few bytes replaced, inserted or deleted. */
function byteEdited(lines: string[]): fc.Arbitrary<Buffer> {
  const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('replace', 'insert', 'delete'), byte: fc.oneof(fc.constantFrom(...TRICKY_BYTES), fc.integer({ min: 0, max: 255 })) });
  return fc.tuple(fc.constantFrom(...lines), fc.array(edit, { minLength: 1, maxLength: 4 })).map(([line, edits]) => {
    const bytes = [...Buffer.from(line, 'utf8')];
    for (const e of edits) {
      const at = e.at % (bytes.length + 1);
      if (e.kind === 'insert') bytes.splice(at, 0, e.byte);
      else if (e.kind === 'replace' && at < bytes.length) bytes[at] = e.byte;
      else bytes.splice(at, 1);
    }
    return Buffer.from(bytes);
  });
}

/** parseBytes either declines or agrees exactly with parse() of the decoded line; returns whether it answered. */
function agrees(parser: RecordParser, line: Buffer, before: Buffer = Buffer.alloc(0), after: Buffer = Buffer.alloc(0)): boolean {
  const buf = Buffer.concat([before, line, after]);
  const fast = parser.parseBytes(buf, before.length, before.length + line.length);
  if (fast !== undefined) expect(fast).toStrictEqual(parser.parse(line.toString('utf8')));
  return fast !== undefined;
}

describe.each(Object.keys(configs))('parseBytes = parse(decoded), preset %s', (name) => {
  const { parser } = parserFor(configs[name]!);

  it('on arbitrary text, bytes, JSON and record-shaped objects', () => {
    fc.assert(fc.property(anyLine, (line) => void agrees(parser, Buffer.from(line, 'utf8'))), { numRuns: RUNS });
  });

  it('on valid lines with text edits and with byte edits (invalid UTF-8 included)', () => {
    fc.assert(fc.property(mutated(VALID[name]!), (line) => void agrees(parser, Buffer.from(line, 'utf8'))), { numRuns: RUNS });
    fc.assert(fc.property(byteEdited(VALID[name]!), (line) => void agrees(parser, line)), { numRuns: RUNS });
  });

  it('reads only its own range of a larger buffer', () => {
    const around = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b));
    fc.assert(fc.property(byteEdited(VALID[name]!), around, around, (line, before, after) => void agrees(parser, line, before, after)), { numRuns: RUNS });
  });
});

describe('parseBytes answers for the lines gateways write', () => {
  it('every valid line of every preset with flat fields, without a header array or an escape', () => {
    for (const name of Object.keys(configs)) {
      const config = configs[name]!;
      const m = mappingFor(config.input, config.input.preset === 'auto' ? 'default' : config.input.preset);
      // Nested paths (Caddy's and Kong's request.headers…), header arrays and escapes are the JSON.parse path's.
      const nested = [m.time, m.status, m.model, m.route, m.cohort, ...m.latency, m.responseHeaders.path ?? '', m.requestHeaders.path ?? ''].some((p) => p.includes('.'));
      const { parser } = parserFor(config);
      for (const text of VALID[name]!) expect(agrees(parser, Buffer.from(text, 'utf8')), `${name}: ${text}`).toBe(!nested && !/[[\\]/.test(text));
    }
  });

  const { parser } = parserFor(configs.default!);
  const line = (text: string): Buffer => Buffer.from(text, 'utf8');
  const base = '"latency_ms":180.25,"status":200,"model":"m","route":"/r","cohort":"c"';

  it.each([
    ['keys in another order, whitespace between tokens', `{ "cohort" : "c" ,\t"route":"/r", "model":"m","status":200 ,"latency_ms":180.25,"ts":"2026-11-29T12:00:05.250Z" }`],
    ['a key given twice: the last one wins', `{${base},"model":"first","model":"second"}`],
    ['a header object given twice: the last one wins', `{${base},"response_headers":{"x-anthropic-layer-id":"a"},"response_headers":{"x-anthropic-cached":"true"}}`],
    ['header names in any case, numbers and booleans as header values', `{${base},"response_headers":{"X-Anthropic-Layer-ID":"zero-plane-v1","x-anthropic-cached":true,"x-anthropic-delay-profile":1e2}}`],
    ['skipped values of any kind, escapes and non-ASCII included', `{${base},"extra":{"a":[1,{"b":"\\u00e9\\n"}],"c":"é"},"n":-0.5e-3,"t":true,"f":false,"z":null}`],
    ['numbers at the edges of the exact path', `{"latency_ms":123456789012345,"status":200.0}`],
    ['sixteen digits, exponents, minus zero', `{"latency_ms":1234567890.123456,"status":-0,"ts":1.7145648e9}`],
    ['objects where labels are', `{${base},"model":{"x":1},"route":[1]}`],
    ['a timestamp in a new minute, then in the same minute', `{${base},"ts":"2030-01-01T00:00:59Z"}`],
  ])('%s', (_, text) => {
    agrees(parser, line(text));
  });

  it('declines what only JSON.parse can settle, and parse() then gives the answer', () => {
    for (const text of [
      `{${base},"model":"caf\\u00e9"}`, // escape in a kept value
      `{${base},"model":"café"}`, // non-ASCII in a kept value
      `{${base},"mod\\u0065l":"x"}`, // an escaped key that spells a kept one
      `{${base},"response_headers":{"x-anthropic-layer-id":"a","X-ANTHROPIC-LAYER-ID":"b"}}`, // combined
      `{${base},"response_headers":{"x-anthropic-layer-id":["a","b"]}}`, // joined
      `[${base}]`, // not an object
      `{${base}`, // truncated
      `{${base}}}`, // trailing garbage
    ]) {
      expect(parser.parseBytes(line(text), 0, line(text).length), text).toBeUndefined();
    }
  });

  it('answers for the common shape (so the shortcut cannot silently switch off)', () => {
    const common = line(
      '{"ts":"2026-11-01T00:00:00.001Z","request_id":"1eed3cc356fb","latency_ms":138.659,"status":200,"model":"claude-haiku-4","route":"/v1/messages","cohort":"stable","response_headers":{"x-anthropic-layer-id":"zero-plane-v1","x-anthropic-delay-profile":"warmup=hit, degraded=?0, mode=balanced"},"request_headers":{"x-anthropic-experimental":"zero-plane-2024"}}',
    );
    for (const name of Object.keys(configs).filter((n) => n.startsWith('default'))) {
      expect(agrees(parserFor(configs[name]!).parser, common), name).toBe(true);
    }
  });
});

describe('scan layouts', () => {
  it('refuses keys that cannot be matched byte for byte', () => {
    expect(scannable({ fields: ['ts', 'latency_ms'], headerObjects: [{ key: 'h', names: ['x-a'] }] })).toBe(true);
    expect(scannable({ fields: ['constructor'], headerObjects: [] })).toBe(false); // inherited: `in` sees it
    expect(scannable({ fields: ['modèle'], headerObjects: [] })).toBe(false);
    expect(scannable({ fields: ['h'], headerObjects: [{ key: 'h', names: [] }] })).toBe(false);
    expect(scannable({ fields: [], headerObjects: [{ key: 'h', names: ['X-A'] }] })).toBe(false);
    expect(() => new RecordScanner({ fields: ['__proto__'], headerObjects: [] })).toThrow();
  });

  it('a nested field path (a.b) keeps the JSON.parse path for every line', () => {
    const { parser } = parserFor({ ...configs.default!, input: { ...configs.default!.input, fields: { ...configs.default!.input.fields, latency: ['upstream.latency_ms'] } } });
    const text = Buffer.from('{"upstream":{"latency_ms":5},"status":200}');
    expect(parser.parseBytes(text, 0, text.length)).toBeUndefined();
    expect(parser.parse(text.toString()).ok).toBe(true);
  });
});
