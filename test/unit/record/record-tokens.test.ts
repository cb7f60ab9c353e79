// Token counts a gateway logs (input.fields.tokens*, and the default preset's `tokens` object the client
// writes): both parse paths read the same counts, a count is a non-negative whole number and anything else
// is no count, and the pipeline adds them to zero_plane_tokens_total{type,model}.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { Pipeline, recordParserFor } from '../../../src/pipeline.js';
import type { ParseResult } from '../../../src/record/parse-record.js';
import { SignalClassifier } from '../../../src/signals/classify.js';

const FLAT = 'input:\n  preset: default\n  fields: { tokensInput: usage_in, tokensOutput: usage.out, tokensCacheRead: cr }\n';

function parserFor(yaml = '') {
  const config = yaml ? parseConfig(yaml, 'test.yml') : defaultConfig();
  return recordParserFor(config, new SignalClassifier(config.headers));
}

const tokensOf = (r: ParseResult | undefined) => (r === undefined ? 'declined' : r.ok ? r.record.tokens : r.reason);
const bytesOrText = (p: ReturnType<typeof parserFor>, line: string) => {
  const b = Buffer.from(line);
  return p.parseBytes(b, 0, b.length) ?? p.parse(line);
};

/** What a value at a token path counts as: a non-negative whole number, or nothing. */
const expectedCount = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v + 0 : undefined);

const tokenValue = fc.oneof(
  fc.nat({ max: 2_000_000 }),
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(-0, 0.5, 1e21, 2 ** 53, null, true, '12', '', '-', [3], { n: 1 }),
  fc.double({ noNaN: true }),
  fc.string({ maxLength: 4 }),
);

describe('token counts', () => {
  it('the default preset reads the client line `tokens` object, on both paths', () => {
    const p = parserFor();
    const line = '{"ts":"2026-12-02T10:00:00Z","latency_ms":12,"model":"m","tokens":{"input":10,"output":20,"cache_read":0,"cache_creation":7}}';
    const want = { input: 10, output: 20, cache_read: 0, cache_creation: 7 };
    expect(tokensOf(p.parse(line))).toEqual(want);
    const b = Buffer.from(line);
    expect(tokensOf(p.parseBytes(b, 0, b.length))).toEqual(want);
    expect(tokensOf(p.parse('{"latency_ms":12}'))).toBeUndefined();
  });

  it.each([
    ['default preset, nested', '', (v: readonly unknown[]) => ({ latency_ms: 1, tokens: { input: v[0], output: v[1], cache_read: v[2], cache_creation: v[3] } })],
    ['input.fields mapping, flat and dotted', FLAT, (v: readonly unknown[]) => ({ latency_ms: 1, usage_in: v[0], usage: { out: v[1] }, cr: v[2], tokens: { cache_creation: v[3] } })],
  ])('bytes and JSON.parse agree, and read what the rule says (%s)', (_name, yaml, lineOf) => {
    const p = parserFor(yaml);
    const mapped = yaml === '' ? [0, 1, 2, 3] : [0, 1, 2];
    const types = ['input', 'output', 'cache_read', 'cache_creation'];
    fc.assert(
      fc.property(fc.array(fc.option(tokenValue, { nil: undefined }), { minLength: 4, maxLength: 4 }), (values) => {
        const line = JSON.stringify(lineOf(values));
        const text = tokensOf(p.parse(line));
        expect(tokensOf(bytesOrText(p, line)), line).toEqual(text);
        const want: Record<string, number> = {};
        for (const i of mapped) {
          const n = expectedCount(JSON.parse(JSON.stringify([values[i] ?? null]))[0]);
          if (n !== undefined) want[types[i] as string] = n;
        }
        expect(text, line).toEqual(Object.keys(want).length === 0 ? undefined : want);
      }),
      { numRuns: Number(process.env.ZP_FUZZ_RUNS ?? 1000) },
    );
  });

  it('a token path that is not a path is refused, naming the key', () => {
    expect(() => parseConfig('input:\n  fields:\n    tokensOutput: 7\n', 'bad.yml')).toThrow(ConfigError);
    expect(() => parseConfig('input:\n  fields:\n    tokensOutput: 7\n', 'bad.yml')).toThrow(/bad\.yml.*input\.fields\.tokensOutput/s);
    expect(() => parseConfig('input:\n  fields:\n    tokenInput: a\n', 'bad.yml')).toThrow(/tokenInput/);
  });

  it('the pipeline adds them to zero_plane_tokens_total by type and model', () => {
    const p = new Pipeline(parseConfig(FLAT, 'test.yml'), { clock: () => 1_764_669_600_000 });
    p.line('{"latency_ms":5,"model":"claude-a","usage_in":100,"usage":{"out":40}}', 'gw');
    p.line('{"latency_ms":5,"model":"claude-a","usage_in":1,"cr":9}', 'gw');
    p.line('{"latency_ms":5,"model":"claude-b","usage_in":-3,"usage":{"out":"2"}}', 'gw');
    const t = p.metrics.tokens;
    expect(t.get(['input', 'claude-a'])).toBe(101);
    expect(t.get(['output', 'claude-a'])).toBe(40);
    expect(t.get(['cache_read', 'claude-a'])).toBe(9);
    expect(t.has(['input', 'claude-b'])).toBe(false);
    expect(t.text()).toContain('zero_plane_tokens_total{type="input",model="claude-a"} 101');
  });
});
