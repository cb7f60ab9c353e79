// The prompt hash a record carries (input.fields.promptHash, and the default preset's `prompt_hash` the
// client writes): both parse paths read the same hash by one rule (promptHashOf), a value that is not a
// hash (a prompt mapped by mistake, "-", a number) is none, and a gateway's logged request header is read
// where the mapping points, a one-item list (Caddy, Kong) as its item.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { recordParserFor } from '../../../src/pipeline.js';
import { promptHashOf, type ParseResult } from '../../../src/record/parse-record.js';
import { SignalClassifier } from '../../../src/signals/classify.js';

function parserFor(yaml = '') {
  const config = yaml ? parseConfig(yaml, 'test.yml') : defaultConfig();
  return recordParserFor(config, new SignalClassifier(config.headers));
}

const hashOf = (r: ParseResult | undefined) => (r === undefined ? 'declined' : r.ok ? r.record.promptHash : r.reason);
const both = (p: ReturnType<typeof parserFor>, line: string) => {
  const b = Buffer.from(line);
  return { text: hashOf(p.parse(line)), bytes: hashOf(p.parseBytes(b, 0, b.length) ?? p.parse(line)) };
};

const HASH = '3f8a9c0d1e2b4a5f6c7d8e9f0a1b2c3d';

describe('prompt hash field', () => {
  it('the default preset reads the client line `prompt_hash`, on both paths', () => {
    const p = parserFor();
    const line = `{"ts":"2026-12-02T10:00:00Z","latency_ms":12,"model":"m","prompt_hash":"${HASH}"}`;
    expect(both(p, line)).toEqual({ text: HASH, bytes: HASH });
    expect(both(p, '{"latency_ms":12}')).toEqual({ text: undefined, bytes: undefined });
  });

  it('input.fields.promptHash points at a gateway field: nginx logs the request header as http_x_prompt_hash', () => {
    const p = parserFor('input:\n  preset: nginx-json\n  fields: { promptHash: http_x_prompt_hash }\n');
    const line = `{"time_iso8601":"2026-12-02T10:00:00+00:00","request_time":"0.180","status":"200","http_x_prompt_hash":"${HASH}"}`;
    expect(both(p, line)).toEqual({ text: HASH, bytes: HASH });
    // nginx writes "" for a header that was not sent: no hash.
    expect(both(p, line.replace(HASH, ''))).toEqual({ text: undefined, bytes: undefined });
  });

  it('a header logged as a list of values (Caddy) reads as its one value', () => {
    const p = parserFor('input:\n  preset: caddy-json\n  fields: { promptHash: request.headers.X-Prompt-Hash }\n');
    const line = `{"ts":1764669600.5,"duration":0.18,"status":200,"request":{"uri":"/v1/messages","headers":{"X-Prompt-Hash":["${HASH}"]}},"resp_headers":{}}`;
    expect(both(p, line)).toEqual({ text: HASH, bytes: HASH });
    expect(both(p, line.replace(`["${HASH}"]`, `["${HASH}","${HASH}"]`))).toEqual({ text: undefined, bytes: undefined });
  });

  it('what is a hash: 8–128 characters of hex, base64 or a prefix; a prompt or a number is not', () => {
    expect(promptHashOf(HASH)).toBe(HASH);
    expect(promptHashOf('sha256:AbC+/9=_-.')).toBe('sha256:AbC+/9=_-.');
    expect(promptHashOf([HASH])).toBe(HASH);
    for (const no of ['-', '', 'short', 'What is the refund policy?', 'a'.repeat(129), 12345678901, null, true, { h: HASH }, [HASH, HASH]])
      expect(promptHashOf(no), JSON.stringify(no)).toBeUndefined();
  });

  it('bytes and JSON.parse agree on any value at the path', () => {
    const p = parserFor();
    const value = fc.oneof(
      fc.stringMatching(/^[0-9a-f]{4,40}$/),
      fc.string({ maxLength: 20 }),
      fc.constantFrom(null, true, 7, '-', '', [HASH], [], [HASH, 'x'], { a: 1 }, `${HASH}\\n`, 'abc\u00e9defgh'),
    );
    fc.assert(
      fc.property(fc.option(value, { nil: undefined }), (v) => {
        const line = JSON.stringify({ latency_ms: 1, model: 'm', prompt_hash: v });
        const r = both(p, line);
        expect(r.bytes, line).toEqual(r.text);
        expect(r.text, line).toEqual(promptHashOf(JSON.parse(line).prompt_hash));
      }),
      { numRuns: Number(process.env.ZP_FUZZ_RUNS ?? 1000) },
    );
  });

  it('a promptHash that is not a path is refused, naming the key', () => {
    expect(() => parseConfig('input:\n  fields:\n    promptHash: 7\n', 'bad.yml')).toThrow(ConfigError);
    expect(() => parseConfig('input:\n  fields:\n    promptHash: 7\n', 'bad.yml')).toThrow(/bad\.yml.*input\.fields\.promptHash/s);
  });
});
