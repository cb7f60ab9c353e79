// Whatever a gateway writes, the parsers never throw and always classify: the record parser under every
// preset, the header readers (delay profile, opt-in, the whole signal classifier), the line splitter
// (checked against a model on arbitrary chunkings of arbitrary bytes), and the whole pipeline.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { Pipeline } from '../../../src/pipeline.js';
import { PARSE_ERROR_REASONS, type GatewayRecord } from '../../../src/record/parse-record.js';
import { SignalClassifier, type Signals } from '../../../src/signals/classify.js';
import { DelayProfileReader } from '../../../src/signals/delay-profile.js';
import { OPT_IN_DEFECTS, classifyOptIn } from '../../../src/signals/opt-in.js';
import { LineSplitter } from '../../../src/source/line-splitter.js';
import { anyLine, configs, HEADER_NAMES, mutated, parserFor, VALID } from '../../helpers/record-lines.js';

// ZP_FUZZ_RUNS: cases per property (npm run test:unit samples fewer; npm test runs these).
const RUNS = Number(process.env.ZP_FUZZ_RUNS ?? 1000);

function expectWellFormedRecord(r: GatewayRecord): void {
  expect(Number.isFinite(r.latencySeconds) && r.latencySeconds >= 0).toBe(true);
  // Finite is the goal; +Infinity gets through today (see the known-bug case below).
  if (r.timeMs !== undefined) expect(typeof r.timeMs === 'number' && !Number.isNaN(r.timeMs) && r.timeMs > 0).toBe(true);
  if (r.status !== undefined) expect(Number.isInteger(r.status)).toBe(true);
  for (const label of [r.model, r.route, r.cohort]) expect(typeof label).toBe('string');
  for (const v of Object.values(r.responseHeaders)) expect(typeof v).toBe('string');
  if (r.requestHeaders !== undefined) for (const v of Object.values(r.requestHeaders)) expect(typeof v).toBe('string');
}

function expectWellFormedSignals(s: Signals): void {
  expect(typeof s.hit).toBe('boolean');
  expect(typeof s.degraded).toBe('boolean');
  expect([undefined, 'hit', 'miss']).toContain(s.warmup);
  if (!s.hit) expect(s.warmup).toBeUndefined();
  expect([undefined, 'strict', 'balanced', 'adaptive']).toContain(s.mode);
  expect(typeof s.cached).toBe('boolean');
  expect(typeof s.delayProfileInvalid).toBe('boolean');
  if (s.optIn !== undefined) expectWellFormedOptIn(s.optIn);
}

function expectWellFormedOptIn(o: { state: string; defect: string | undefined }): void {
  expect(['valid', 'missing', 'malformed']).toContain(o.state);
  if (o.state === 'malformed') expect(OPT_IN_DEFECTS).toContain(o.defect);
  else expect(o.defect).toBeUndefined();
}

describe.each(Object.keys(configs))('record parser and classifier, preset %s', (name) => {
  const { parser, classifier } = parserFor(configs[name]!);
  const check = (line: string): void => {
    const r = parser.parse(line);
    if (r.ok) {
      expectWellFormedRecord(r.record);
      expectWellFormedSignals(classifier.classify(r.record));
    } else {
      expect(PARSE_ERROR_REASONS).toContain(r.reason);
    }
  };

  it('never throws and always classifies, on arbitrary text, bytes, JSON and record-shaped objects', () => {
    fc.assert(fc.property(anyLine, check), { numRuns: RUNS });
  });

  it('never throws and always classifies, on mutated valid lines', () => {
    fc.assert(fc.property(mutated(VALID[name]!), check), { numRuns: RUNS });
  });

  it('the unmutated valid lines parse', () => {
    for (const line of VALID[name]!) expect(parser.parse(line).ok, line).toBe(true);
  });
});

describe('found by fuzzing', () => {
  // A numeric-string timestamp that overflows a double ("1e400") once became timeMs = Infinity and pinned
  // zero_plane_exporter_last_record_timestamp_seconds at +Inf (the stalled-source alert could never fire).
  it('a timestamp that overflows to Infinity is a bad_timestamp, not a record at +Inf', () => {
    const { parser } = parserFor(configs.default!);
    expect(parser.parse('{"ts":"1e400","latency_ms":0}')).toEqual({ ok: false, reason: 'bad_timestamp' });
  });
});

describe('header readers', () => {
  const members = { degradedMember: 'degraded', warmupMember: 'warmup', modeMember: 'mode' };
  const member = fc.tuple(
    fc.constantFrom('warmup', 'degraded', 'mode', 'q', 'Mode', '*x', ''),
    fc.constantFrom('', '=?1', '=?0', '=hit', '=miss', '=strict', '=balanced', '=adaptive', '="hit"', '=1.5', '=(a b)', '=:aGk=:', ';p=1', '=@1', '=%"x"'),
  );
  const dictionaryLike = fc.tuple(fc.array(member, { maxLength: 5 }), fc.constantFrom(', ', ',', ' ,  ', ';', ' ')).map(([ms, sep]) => ms.map(([k, v]) => k + v).join(sep));

  it('the delay profile reader returns a profile or null (unparseable), never throws', () => {
    const reader = new DelayProfileReader(members);
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), dictionaryLike), (value) => {
        const p = reader.read(value);
        if (p !== null) {
          expect(typeof p.degraded).toBe('boolean');
          expect([undefined, 'hit', 'miss']).toContain(p.warmup);
          expect([undefined, 'strict', 'balanced', 'adaptive']).toContain(p.mode);
        }
        expect(reader.read(value)).toEqual(p); // cached answers are the same answers
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('the opt-in classifier always gives a state, and a defect exactly when malformed', () => {
    const expected = 'zero-plane-2024';
    fc.assert(
      fc.property(fc.option(fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom(expected, expected.toUpperCase(), ` ${expected}`))), (value) => {
        const o = classifyOptIn(value ?? undefined, expected);
        expectWellFormedOptIn(o);
        if (value === null) expect(o.state).toBe('missing');
        if (value === expected) expect(o.state).toBe('valid');
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('an invisible character anywhere in the valid value is an invisible_char defect', () => {
    const expected = 'zero-plane-2024';
    fc.assert(
      fc.property(fc.nat({ max: expected.length }), fc.constantFrom('\u200b', '\ufeff', '\u2060', '\u00ad', '\u200e'), (at, ch) => {
        expect(classifyOptIn(expected.slice(0, at) + ch + expected.slice(at), expected)).toEqual({ state: 'malformed', defect: 'invisible_char' });
      }),
      { numRuns: 100 },
    );
  });

  it('the signal classifier classifies any header set, with or without request headers', () => {
    const classifier = new SignalClassifier(configs.default!.headers);
    const headers = fc.dictionary(fc.constantFrom(...HEADER_NAMES.map((h) => h.toLowerCase())), fc.string({ unit: 'binary', maxLength: 40 }), { maxKeys: 6 });
    fc.assert(
      fc.property(headers, fc.option(headers), (res, req) => {
        const record: GatewayRecord = {
          timeMs: undefined,
          latencySeconds: 0.1,
          status: 200,
          model: '',
          route: '',
          cohort: '',
          responseHeaders: res,
          requestHeaders: req ?? undefined,
        };
        const s = classifier.classify(record);
        expectWellFormedSignals(s);
        expect(s.hit).toBe(/^zero-plane-v[0-9]+$/.test(res['x-anthropic-layer-id'] ?? ''));
        expect(s.optIn === undefined).toBe(req === null);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('line splitter, against a model', () => {
  /**
   * The lines a byte stream holds: split on \n, NULs at a line's start dropped (a truncation's hole), one
   * trailing \r dropped, empty lines skipped, too long ones counted.
   */
  function model(bytes: Uint8Array, max: number): { lines: string[]; oversize: number } {
    const lines: string[] = [];
    let oversize = 0;
    let start = 0;
    const take = (end: number): void => {
      let stop = end;
      let from = start;
      while (from < stop && bytes[from] === 0x00) from++;
      if (stop > from && bytes[stop - 1] === 0x0d) stop--;
      if (stop - from > max) oversize++;
      else if (stop > from) lines.push(Buffer.from(bytes.subarray(from, stop)).toString('utf8'));
    };
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] === 0x0a) {
        take(i);
        start = i + 1;
      }
    }
    if (start < bytes.length) take(bytes.length);
    return { lines, oversize };
  }

  /** Bytes rich in what matters: newlines, carriage returns, multibyte UTF-8 and its fragments. */
  const bytes = fc
    .array(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(0x0a, 0x0d, 0x7b, 0x61, 0x00) },
        { weight: 2, arbitrary: fc.constantFrom(...Buffer.from('é日😀')) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }) },
      ),
      { maxLength: 400 },
    )
    .map((a) => Uint8Array.from(a));

  it('reconstructs exactly the lines of arbitrary bytes under arbitrary chunkings, holding at most the limit', () => {
    fc.assert(
      fc.property(bytes, fc.array(fc.nat({ max: 400 }), { maxLength: 20 }), fc.integer({ min: 1, max: 40 }), (data, cuts, max) => {
        const got: string[] = [];
        let oversize = 0;
        const splitter = new LineSplitter(max, { line: (t) => void got.push(t), oversize: () => void oversize++ }, 'fuzz');
        const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const at of [...points, data.length]) {
          splitter.push(Buffer.from(data.subarray(from, at)));
          expect(splitter.pendingBytes).toBeLessThanOrEqual(max + 1);
          from = at;
        }
        splitter.flush();
        expect(splitter.pendingBytes).toBe(0);
        expect({ lines: got, oversize }).toEqual(model(data, max));
      }),
      { numRuns: RUNS * 3 },
    );
  });
});

describe('the whole pipeline', () => {
  // One test per config: each has the time budget of one (they were one test, which grew with every config).
  it.each(Object.keys(configs))('never throws on arbitrary lines; each one is counted once, as a record or a parse error (%s)', (name) => {
    {
      const pipeline = new Pipeline(configs[name]!, { clock: () => 1_714_564_800_000 });
      const total = (family: { sum(): number }): number => family.sum();
      let n = 0;
      fc.assert(
        fc.property(fc.oneof(anyLine, mutated(VALID[name]!)), (line) => {
          pipeline.line(line, 'fuzz');
          n++;
          expect(total(pipeline.metrics.lines)).toBe(n);
          expect(total(pipeline.metrics.requests) + total(pipeline.metrics.parseErrors)).toBe(n);
        }),
        { numRuns: RUNS },
      );
      pipeline.oversize('fuzz');
      expect(total(pipeline.metrics.lines)).toBe(n + 1);
    }
  });

  it('with input.preset: auto, each line is counted once (lines held while the format is open, at the end)', () => {
    const total = (family: { sum(): number }): number => family.sum();
    const anyPresetLine = fc.oneof(anyLine, ...Object.values(VALID).map((lines) => mutated(lines)), fc.constantFrom(...Object.values(VALID).flat()));
    fc.assert(
      fc.property(fc.array(anyPresetLine, { maxLength: 80 }), (lines) => {
        const pipeline = new Pipeline(parseConfig('input:\n  preset: auto\n', 'fuzz.yml'), { clock: () => 1_714_564_800_000 });
        for (const line of lines) {
          pipeline.line(line, 'fuzz');
          // Never more than the lines given so far: nothing is counted twice.
          expect(total(pipeline.metrics.lines)).toBeLessThanOrEqual(lines.length);
        }
        pipeline.finish();
        expect(total(pipeline.metrics.lines)).toBe(lines.length);
        expect(total(pipeline.metrics.requests) + total(pipeline.metrics.parseErrors)).toBe(lines.length);
      }),
      { numRuns: RUNS / 4 },
    );
  });
});
