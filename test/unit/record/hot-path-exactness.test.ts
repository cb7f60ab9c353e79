// The per-line shortcuts (bench/RESULTS.md) must give exactly what the plain code gives: the cached
// minute of canonical timestamps, the header-name cache, the absent-value length guard, the header objects
// kept for recent combinations of values, the last-value caches of the classifier, and the pre-resolved
// metric series of the pipeline.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { Pipeline, recordParserFor } from '../../../src/pipeline.js';
import type { GatewayRecord, ParseResult } from '../../../src/record/parse-record.js';
import { SignalClassifier } from '../../../src/signals/classify.js';

function parserFor(yaml = '') {
  const config = yaml ? parseConfig(yaml, 'test.yml') : defaultConfig();
  return recordParserFor(config, new SignalClassifier(config.headers));
}

const timeOf = (r: ParseResult) => (r.ok ? r.record.timeMs : r.reason);
const line = (ts: string) => `{"ts":${JSON.stringify(ts)},"latency_ms":1}`;
/**
 * What a timestamp must read as: Date.parse, except a day or hour that is not on the calendar (Date.parse
 * rolls 2026-02-30 over to March 2nd, T24:00 to the next day), checked here by a round trip through Date.UTC.
 */
function strictTime(v: string): number | 'bad_timestamp' {
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) return 'bad_timestamp';
  const [y, mo, d, h] = [v.slice(0, 4), v.slice(5, 7), v.slice(8, 10), v.slice(11, 13)].map(Number) as [number, number, number, number];
  const day = new Date(Date.UTC(y, mo - 1, d));
  return h <= 23 && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d ? ms : 'bad_timestamp';
}

describe('canonical timestamps read through the cached minute equal Date.parse', () => {
  it('across seconds, minutes, hours, days, a leap day and years, in and out of order', () => {
    const p = parserFor();
    const starts = [Date.UTC(2026, 10, 29, 23, 58, 30), Date.UTC(2024, 1, 28, 23, 59, 0), Date.UTC(1999, 11, 31, 23, 59, 59), Date.UTC(1970, 0, 1, 0, 0, 1)];
    const times: number[] = [];
    for (const start of starts) for (let i = 0; i < 400; i++) times.push(start + i * 379);
    // Jump back and forth between minutes, so the cache is replaced often.
    for (let i = 0; i < 200; i++) times.push(starts[i % starts.length] as number);
    for (const ms of times) {
      const iso = new Date(ms).toISOString();
      expect(timeOf(p.parse(line(iso))), iso).toBe(ms);
      expect(timeOf(p.parse(line(iso.replace(/\.\d{3}Z$/, 'Z')))), iso).toBe(Math.floor(ms / 1000) * 1000);
    }
  });

  it('canonical-looking values Date.parse rejects or reads oddly go the slow way and read the same', () => {
    const p = parserFor();
    const odd = [
      '2026-11-01T23:60:00Z',
      '2026-11-01T23:59:60Z',
      '2026-11-01T24:00:00Z',
      '2026-11-01T24:00:30Z',
      '2026-02-30T00:00:05Z',
      '2026-02-29T10:00:00Z',
      '2024-02-29T10:00:00Z',
      '2100-02-29T10:00:00Z',
      '2000-02-29T10:00:00Z',
      '2026-04-31T10:00:00+02:00',
      '2026-01-01T25:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-11-01t00:00:00Z',
      '2026-11-01 00:00:00Z',
      '2026-11-01T00:00:00z',
      '2026-11-01T00:00:00.1Z',
      '2026-11-01T00:00:00.1234Z',
      '2026-11-01T00:00:0xZ',
      '2026-11-01T00:00:00.00xZ',
      '2026-11-01T00:00:00+00:00',
      '0000-01-01T00:00:00.000Z',
    ];
    for (const v of odd) {
      // Prime the cache with the same minute first, where there is a valid one.
      p.parse(line('2026-11-01T00:00:00.000Z'));
      const expected = strictTime(v);
      expect(timeOf(p.parse(line(v))), v).toBe(expected);
      expect(timeOf(parserFor().parse(line(v))), `${v} (fresh parser)`).toBe(expected);
      const bytes = Buffer.from(line(v));
      expect(timeOf(p.parseBytes(bytes, 0, bytes.length) ?? p.parse(line(v))), `${v} (bytes)`).toBe(expected);
      expect(timeOf(parserFor().parseBytes(bytes, 0, bytes.length) ?? p.parse(line(v))), `${v} (bytes, fresh parser)`).toBe(expected);
    }
  });
});

describe('timestamps with an offset or a long fraction read on the fast path equal Date.parse', () => {
  const ZONES = ['Z', '+00:00', '-00:00', '+08:00', '-05:30', '+14:00', '-12:00', '+23:59', '+24:00', '+00:60', '+0800', 'z'];
  const form = fc.record({
    ms: fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) }),
    fraction: fc.stringMatching(/^\d{0,11}$/),
    dot: fc.boolean(),
    zone: fc.constantFrom(...ZONES),
  });
  const text = (f: { ms: number; fraction: string; dot: boolean; zone: string }) => `${new Date(f.ms).toISOString().slice(0, 19)}${f.dot ? `.${f.fraction}` : ''}${f.zone}`;
  const expected = strictTime;

  it('from text and from bytes, with the minute cached by one parser across values (nginx +00:00, Traefik nanoseconds)', () => {
    const p = parserFor();
    fc.assert(
      fc.property(fc.array(form, { minLength: 1, maxLength: 8 }), (forms) => {
        for (const f of forms) {
          // The same minute at another second first, so the cached minute is the one read.
          for (const v of [text({ ...f, ms: f.ms - (f.ms % 60_000) }), text(f)]) {
            const bytes = Buffer.from(line(v));
            expect(timeOf(p.parse(line(v))), v).toBe(expected(v));
            expect(timeOf(p.parseBytes(bytes, 0, bytes.length) ?? p.parse(line(v))), `${v} (bytes)`).toBe(expected(v));
          }
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('header names and absent values', () => {
  it('the header-name cache keeps matching in any case after it fills and is cleared', () => {
    const p = parserFor();
    for (let i = 0; i < 3000; i++) {
      const r = p.parse(`{"latency_ms":1,"response_headers":{"x-noise-${i}":"a","X-Anthropic-Layer-ID":"zero-plane-v${i}"}}`);
      expect(r.ok && r.record.responseHeaders).toEqual({ 'x-anthropic-layer-id': `zero-plane-v${i}` });
    }
  });

  it('absent spellings of any length are still absent; longer values are not', () => {
    const p = parserFor('input:\n  absentValues: ["", "-", "not-logged"]\n');
    const r = p.parse('{"latency_ms":1,"model":"not-logged","route":"-","cohort":"not-logged-x","ts":"not-logged"}');
    expect(r.ok && [r.record.model, r.record.route, r.record.cohort, r.record.timeMs]).toEqual(['', '', 'not-logged-x', undefined]);
    expect(parserFor('input:\n  absentValues: []\n').parse('{"latency_ms":1,"model":"-"}')).toMatchObject({ ok: true, record: { model: '-' } });
  });
});

describe('header objects reused for recent combinations of values', () => {
  it('more combinations than are kept, in and out of order, absent and "-" values: each line reads as JSON.parse reads it', () => {
    const p = parserFor('input:\n  absentValues: ["", "-"]\n');
    const layers = ['zero-plane-v1', 'standard', '-', undefined];
    const profiles = ['warmup=hit, degraded=?0', 'warmup=miss, degraded=?1', ''];
    const cached = ['true', undefined];
    const combos: string[] = [];
    for (const l of layers)
      for (const d of profiles)
        for (const c of cached) {
          const h: Record<string, string> = {};
          if (l !== undefined) h['x-anthropic-layer-id'] = l;
          h['x-anthropic-delay-profile'] = d;
          if (c !== undefined) h['X-Anthropic-Cached'] = c;
          combos.push(JSON.stringify(h));
        }
    expect(combos.length).toBeGreaterThan(16);
    // Runs of one combination, cycles through all of them, and a walk back and forth.
    const order = [0, 0, 0, 1, 0, 1, ...combos.map((_, i) => i), ...combos.map((_, i) => combos.length - 1 - i), 5, 5, 23, 0, 23];
    const lastAt = new Map<number, { n: number; headers: unknown }>();
    for (const [n, i] of order.entries()) {
      const text = `{"latency_ms":1,"response_headers":${combos[i] as string},"request_headers":{"x-anthropic-experimental":"zero-plane-2024"}}`;
      const fast = p.parseBytes(Buffer.from(text), 0, Buffer.byteLength(text));
      const slow = parserFor('input:\n  absentValues: ["", "-"]\n').parse(text);
      expect(fast, text).toEqual(slow);
      const headers = fast?.ok ? fast.record.responseHeaders : undefined;
      expect(Object.isFrozen(headers), text).toBe(true);
      // A combination met again within three lines is certainly still kept: it is handed out again.
      const before = lastAt.get(i);
      if (before !== undefined && n - before.n <= 3) expect(headers === before.headers, `line ${n}: combination ${i} again`).toBe(true);
      lastAt.set(i, { n, headers });
    }
  });
});

describe('classifier last-value caches', () => {
  it('alternating layer ids and delay profiles classify as they would one at a time', () => {
    const classifier = new SignalClassifier(defaultConfig().headers);
    const record = (res: Record<string, string>): GatewayRecord => ({
      timeMs: undefined,
      latencySeconds: 0.1,
      status: 200,
      model: '',
      route: '',
      cohort: '',
      responseHeaders: res,
      requestHeaders: undefined,
    });
    const cases = [
      [
        { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit' },
        { hit: true, warmup: 'hit', degraded: false },
      ],
      [
        { 'x-anthropic-layer-id': 'standard-v3', 'x-anthropic-delay-profile': 'degraded' },
        { hit: false, warmup: undefined, degraded: true },
      ],
      [
        { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=miss' },
        { hit: true, warmup: 'miss', degraded: false },
      ],
      [
        { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=miss' },
        { hit: true, warmup: 'miss', degraded: false },
      ],
      [{ 'x-anthropic-delay-profile': 'warmup=hit,,' }, { hit: false, warmup: undefined, degraded: false, delayProfileInvalid: true }],
    ] as const;
    for (let round = 0; round < 3; round++) {
      for (const [res, expected] of cases) expect(classifier.classify(record({ ...res }))).toMatchObject(expected);
    }
  });
});

describe('pipeline series handles', () => {
  it('feed the same series, at the same values, as per-event label lookups would', () => {
    const p = new Pipeline(defaultConfig(), { clock: () => Date.UTC(2026, 10, 29, 12, 0, 0) });
    const hit = '"response_headers":{"x-anthropic-layer-id":"zero-plane-v1","x-anthropic-delay-profile":"warmup=hit, degraded=?1"}';
    const miss = '"response_headers":{"x-anthropic-layer-id":"standard-v3","x-anthropic-cached":"true"}';
    const lines = [
      `{"latency_ms":150,"status":200,"model":"a","route":"/r","cohort":"c",${hit}}`,
      `{"latency_ms":150,"status":200,"model":"a","route":"/r","cohort":"c",${hit}}`,
      `{"latency_ms":400,"status":503,"model":"a","route":"/r","cohort":"c",${miss}}`,
      `{"latency_ms":400,"model":"b","route":"/r",${miss},"request_headers":{"x-anthropic-experimental":"zero-plane-2024"}}`,
      `{"latency_ms":400,"status":600,"model":"b","route":"/r",${miss},"request_headers":{}}`,
      'not json',
    ];
    for (const l of lines) p.line(l, 'src');
    p.oversize('src');
    const m = p.metrics;
    const entries = (f: { entries(): [readonly string[], number][] }) => Object.fromEntries(f.entries().map(([labels, v]) => [labels.join('|'), v]));
    expect(entries(m.requests)).toEqual({ 'true|2xx|a|/r|c': 2, 'false|5xx|a|/r|c': 1, 'false|unknown|b|/r|': 2 });
    expect(entries(m.degraded)).toEqual({ 'a|/r|c': 2, 'b|/r|': 0 });
    expect(entries(m.cached)).toEqual({ 'a|/r': 1, 'b|/r': 2 });
    // Warm-up series exist (at 0 for misses) only for models that had a hit.
    expect(entries(m.warmup)).toEqual({ 'hit|a': 2, 'miss|a': 0 });
    expect(m.duration.cumulative(0.185)).toEqual({ below: 2, count: 5 });
    expect(m.optIn.sum({ state: 'valid' })).toBe(1);
    expect(m.optIn.sum({ state: 'missing' })).toBe(1);
    expect(entries(m.lines)).toEqual({ src: 7 });
    expect(m.parseErrors.sum()).toBe(2);
    // No ts in these lines: the arrival time (the clock) is the newest record time.
    expect(m.lastRecord.get(['src'])).toBe(Date.UTC(2026, 10, 29, 12, 0, 0) / 1000);
  });

  it('the last-record gauge is absent until a source yields a record', () => {
    const p = new Pipeline(defaultConfig());
    p.line('not json', 'src');
    p.oversize('src');
    expect(p.metrics.lastRecord.entries()).toEqual([]);
  });
});
