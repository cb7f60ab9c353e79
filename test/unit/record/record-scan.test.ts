// The byte-level reader (record/scan-record.ts) is a shortcut, never a second opinion: whenever
// RecordParser.parseBytes answers (a record, or a line that is not JSON or not an object), its answer is
// exactly parse() of the decoded line; when it cannot be sure it declines. Checked on arbitrary text, bytes
// and record-shaped JSON, on valid lines with byte edits, and on lines embedded in a larger buffer; and it
// must actually answer for the lines gateways write: every preset's, the bench's shapes, the real logs.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecordParser } from '../../../src/record/parse-record.js';
import { RecordScanner, scannable } from '../../../src/record/scan-record.js';
import { chunkStops } from '../../../src/source/chunk-stops.js';
import { anyLine, configs, mutated, parserFor, VALID } from '../../helpers/record-lines.js';

const RUNS = Number(process.env.ZP_FUZZ_RUNS ?? 2000);

/** Bytes that steer a JSON reader: structure, escapes, controls, non-ASCII lead and continuation bytes. */
const TRICKY_BYTES = [
  0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x09, 0x0d, 0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc3, 0xe2, 0xff, 0x2d, 0x2e, 0x30, 0x31, 0x65, 0x45, 0x2b, 0x75, 0x6e, 0x74, 0x66, 0x5a,
];

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

/**
 * parseBytes either declines or agrees exactly with parse() of the decoded line; returns whether it
 * answered. Asked twice: with the buffer as a chunk being read (strings' ends from its map, chunk-stops.ts)
 * and as any other buffer (found word by word); both answers must be the same.
 */
function agrees(parser: RecordParser, line: Buffer, before: Buffer = Buffer.alloc(0), after: Buffer = Buffer.alloc(0)): boolean {
  const buf = Buffer.concat([before, line, after]);
  const offered = chunkStops.offer(buf);
  let mapped: ReturnType<RecordParser['parseBytes']>;
  try {
    mapped = parser.parseBytes(buf, before.length, before.length + line.length);
    expect(chunkStops.buf).toBe(buf);
  } finally {
    chunkStops.withdraw(offered);
  }
  const fast = parser.parseBytes(buf, before.length, before.length + line.length);
  expect(mapped).toStrictEqual(fast);
  if (fast !== undefined) expect(fast).toStrictEqual(parser.parse(line.toString('utf8')));
  return fast !== undefined;
}

describe.each(Object.keys(configs))('parseBytes = parse(decoded), preset %s', (name) => {
  const { parser } = parserFor(configs[name]!);

  it('on arbitrary text, bytes, JSON and record-shaped objects', () => {
    fc.assert(
      fc.property(anyLine, (line) => void agrees(parser, Buffer.from(line, 'utf8'))),
      { numRuns: RUNS },
    );
  });

  it('on valid lines with text edits and with byte edits (invalid UTF-8 included)', () => {
    fc.assert(
      fc.property(mutated(VALID[name]!), (line) => void agrees(parser, Buffer.from(line, 'utf8'))),
      { numRuns: RUNS },
    );
    fc.assert(
      fc.property(byteEdited(VALID[name]!), (line) => void agrees(parser, line)),
      { numRuns: RUNS },
    );
  });

  it('reads only its own range of a larger buffer', () => {
    const around = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b));
    fc.assert(
      fc.property(byteEdited(VALID[name]!), around, around, (line, before, after) => void agrees(parser, line, before, after)),
      { numRuns: RUNS },
    );
  });
});

/** Golden inputs and the preset each is read with (the rest are the default preset's). */
const GOLDEN_PRESETS: Record<string, string> = {
  'real-caddy': 'caddy-json',
  'real-haproxy': 'haproxy-json',
  'real-nginx': 'nginx-json',
  'preset-kong-json': 'kong-json',
  'preset-traefik-json': 'traefik-json',
  'preset-envoy-json': 'envoy-json',
  'preset-nginx-json': 'nginx-json',
};

/** A header or label given as a list of more than one item: joined by the JSON.parse path. */
const MULTI_ITEM_LIST = /":\[("[^"]*"|[^\][{},"]+)(,("[^"]*"|[^\][{},"]+))+\]/;
/** Apache's \xhh or \v (not JSON as written): the JSON.parse path decodes them (apache-escapes.ts). */
const APACHE_ESCAPE = /(?<!\\)(?:\\\\)*\\[xv]/;

describe('parseBytes answers for the lines gateways write (the shortcut cannot silently switch off)', () => {
  it('every valid line of every preset, nested paths, escapes, non-ASCII text and one-item lists included', () => {
    for (const name of Object.keys(configs)) {
      const { parser } = parserFor(configs[name]!);
      // Only a header value or label given as a list of several items, and a line with Apache's escapes, is left to JSON.parse.
      for (const text of VALID[name]!) expect(agrees(parser, Buffer.from(text, 'utf8')), `${name}: ${text}`).toBe(!MULTI_ITEM_LIST.test(text) && !(parser.hexEscapes && APACHE_ESCAPE.test(text)));
    }
  });

  it('every line of the real gateway logs and preset fixtures under test/golden, but lists of several items', () => {
    const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'golden');
    let lines = 0;
    const declined: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ndjson'))) {
      const name = file.replace(/\.ndjson$/, '');
      const preset = GOLDEN_PRESETS[name] ?? 'default';
      const { parser } = parserFor(configs[preset]!);
      readFileSync(join(dir, file), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .forEach((text, i) => {
          lines++;
          if (!agrees(parser, Buffer.from(text, 'utf8'))) declined.push(`${name}:${i}`);
        });
    }
    expect(lines).toBeGreaterThan(300);
    // Kong logs a repeated header as a list: lines 4 and 9 of its fixture.
    expect(declined).toEqual(['preset-kong-json:4', 'preset-kong-json:9']);
  });

  const { parser } = parserFor(configs.default!);
  const line = (text: string): Buffer => Buffer.from(text, 'utf8');
  const base = '"latency_ms":180.25,"status":200,"model":"m","route":"/r","cohort":"c"';

  it.each([
    ['keys in another order, whitespace between tokens', `{ "cohort" : "c" ,\t"route":"/r", "model":"m","status":200 ,"latency_ms":180.25,"ts":"2026-11-29T12:00:05.250Z" }`],
    ['a key given twice: the last one wins', `{${base},"model":"first","model":"second"}`],
    ['a header object given twice: the last one wins', `{${base},"response_headers":{"x-anthropic-layer-id":"a"},"response_headers":{"x-anthropic-cached":"true"}}`],
    ['a header object, then something else under its key', `{${base},"response_headers":{"x-anthropic-layer-id":"a"},"response_headers":[1]}`],
    [
      'header names in any case, numbers and booleans as header values',
      `{${base},"response_headers":{"X-Anthropic-Layer-ID":"zero-plane-v1","x-anthropic-cached":true,"x-anthropic-delay-profile":1e2}}`,
    ],
    ['skipped values of any kind, escapes and non-ASCII included', `{${base},"extra":{"a":[1,{"b":"\\u00e9\\n"}],"c":"é"},"n":-0.5e-3,"t":true,"f":false,"z":null}`],
    ['numbers at the edges of the exact path', `{"latency_ms":123456789012345,"status":200.0}`],
    ['sixteen digits, exponents, minus zero', `{"latency_ms":1234567890.123456,"status":-0,"ts":1.7145648e9}`],
    ['objects where labels are', `{${base},"model":{"x":1},"route":[1]}`],
    ['a timestamp in a new minute, then in the same minute', `{${base},"ts":"2030-01-01T00:00:59Z"}`],
    ['non-ASCII and escaped text in kept values', `{${base},"model":"caf\\u00e9","route":"/v1/消息","cohort":"\\ud800"}`],
    ['one-item and empty lists where labels and headers are', `{${base},"model":["m"],"route":[],"response_headers":{"x-anthropic-layer-id":["zero-plane-v1"],"x-anthropic-cached":[]}}`],
    ['numbers written as strings', `{"latency_ms":"180.25","status":"007","ts":"1714564800.123"}`],
  ])('%s', (_, text) => {
    expect(agrees(parser, line(text)), text).toBe(true);
  });

  it('answers lines that are not JSON, or not an object, without decoding them (as parse() would)', () => {
    for (const [text, reason] of [
      ['', 'invalid_json'],
      ['   ', 'invalid_json'],
      ['2026/11/01 00:00:00 [error] upstream timed out', 'invalid_json'],
      [`{${base}`, 'invalid_json'], // truncated
      [`{${base}}}`, 'invalid_json'], // trailing garbage
      [`{${base}}{${base}}`, 'invalid_json'], // two objects
      [`{${base},}`, 'invalid_json'], // trailing comma
      [`{${base},"model":"a\u0001b"}`, 'invalid_json'], // a control byte in a string
      [`{${base},"model":"\\x"}`, 'invalid_json'], // an escape JSON does not have
      [`{${base},"x":01}`, 'invalid_json'],
      [`[${base}]`, 'invalid_json'],
      [`[{${base}}]`, 'not_object'],
      ['"abc"', 'not_object'],
      ['null', 'not_object'],
      ['12.5', 'not_object'],
    ] as const) {
      const buf = Buffer.from(text, 'utf8');
      expect(parser.parseBytes(buf, 0, buf.length), text).toStrictEqual({ ok: false, reason });
      expect(parser.parse(text), text).toStrictEqual({ ok: false, reason });
    }
    const binary = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x80, 0x7d]);
    expect(parser.parseBytes(binary, 0, binary.length)).toStrictEqual({ ok: false, reason: 'invalid_json' });
  });

  it('declines what only JSON.parse can settle, and parse() then gives the answer', () => {
    for (const text of [
      `{${base},"mod\\u0065l":"x"}`, // an escaped key that spells a kept one
      `{${base},"response_headers":{"x-anthropic-layer-id":"a","X-ANTHROPIC-LAYER-ID":"b"}}`, // combined
      `{${base},"response_headers":{"x-anthropic-layer-id":["a","b"]}}`, // joined
      `{${base},"response_headers":{"x-anthropic-layer-id":[["a"]]}}`, // a list in a list
      `{${base},"response_headers":{"\u212a-anthropic-cached":"true"}}`, // a non-ASCII name (the Kelvin sign lower-cases to k)
      `{"latency_ms":[180],"status":200}`, // a list where a latency is
      `{${base},"deep":${'['.repeat(40)}${']'.repeat(40)}}`, // nested deeper than the reader goes
    ]) {
      expect(parser.parseBytes(line(text), 0, line(text).length), text).toBeUndefined();
      expect(parser.parse(text).ok, text).toBe(!text.startsWith('{"latency_ms":['));
    }
  });

  it('answers for the common shape of every default-preset config', () => {
    const common = line(
      '{"ts":"2026-11-01T00:00:00.001Z","request_id":"1eed3cc356fb","latency_ms":138.659,"status":200,"model":"claude-haiku-4","route":"/v1/messages","cohort":"stable","response_headers":{"x-anthropic-layer-id":"zero-plane-v1","x-anthropic-delay-profile":"warmup=hit, degraded=?0, mode=balanced"},"request_headers":{"x-anthropic-experimental":"zero-plane-2024"}}',
    );
    for (const name of Object.keys(configs).filter((n) => n.startsWith('default'))) {
      expect(agrees(parserFor(configs[name]!).parser, common), name).toBe(true);
    }
  });
});

describe('numbers read from their bytes equal Number() of their text', () => {
  const scanner = new RecordScanner({ fields: ['n', 's'], headerObjects: [] });
  /** The number value n of `{"n":text}` and the decimal of `{"s":"text"}` (NaN: left to Number()). */
  const read = (text: string): { value: unknown; decimal: number } => {
    expect(scanner.scan(Buffer.from(`{"n":${text},"s":"${text}"}`), 0, Buffer.byteLength(`{"n":${text},"s":"${text}"}`))).toBe(0);
    return { value: scanner.values[0], decimal: scanner.decimal(1) };
  };
  const check = (text: string) => {
    const { value, decimal } = read(text);
    expect(Object.is(value, Number(text)), `${text}: ${String(value)} vs ${Number(text)}`).toBe(true);
    if (!Number.isNaN(decimal)) expect(Object.is(decimal, Number(text)), `decimal ${text}`).toBe(true);
    return !Number.isNaN(decimal);
  };

  it('around 2^53, at 15 to 17 digits, and as Caddy writes its times', () => {
    const texts = [
      '9007199254740991',
      '9007199254740992',
      '9007199254740993',
      '9007199254740994',
      '900719925474099.3',
      '900719925474099.5',
      '90071992547409.95',
      '1796119596.782066',
      '1796119597.1334946',
      '1796119597.390097',
      '0.1234567890123456',
      '0.12345678901234567',
      '123456789012345.6',
      '1234567890123456.7',
      '0.0000000000000000000001',
      '0.00000000000000000000001',
      '1.0000000000000002',
      '-0.0',
      '-1796119596.782066',
      '4503599627370497.5',
    ];
    for (const t of texts) check(t);
    // The 16-digit ones are read from their bytes now (they were sent to Number() at 15).
    expect(check('1796119596.782066')).toBe(true);
    expect(check('1796119597.1334946')).toBe(false);
  });

  it('for any digits with a decimal point anywhere', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^(0|[1-9][0-9]{0,18})$/), fc.stringMatching(/^[0-9]{0,24}$/), fc.boolean(), (int, frac, negative) => {
        check(`${negative ? '-' : ''}${int}${frac === '' ? '' : `.${frac}`}`);
      }),
      { numRuns: RUNS * 5 },
    );
  });
});

describe('scan layouts', () => {
  it('refuses keys that cannot be matched byte for byte', () => {
    expect(scannable({ fields: ['ts', 'latency_ms'], headerObjects: [{ path: 'h', names: ['x-a'] }] })).toBe(true);
    expect(scannable({ fields: ['request.uri', 'request.headers.X-Model'], headerObjects: [{ path: 'request.headers', names: ['x-a'] }] })).toBe(true);
    expect(scannable({ fields: ['constructor'], headerObjects: [] })).toBe(false); // inherited: `in` sees it
    expect(scannable({ fields: ['a.length'], headerObjects: [] })).toBe(false); // an array at a has a length
    expect(scannable({ fields: ['a.0'], headerObjects: [] })).toBe(false); // and members 0, 1, …
    expect(scannable({ fields: ['modèle'], headerObjects: [] })).toBe(false);
    expect(scannable({ fields: ['h'], headerObjects: [{ path: 'h', names: [] }] })).toBe(false); // a value and an object
    expect(scannable({ fields: ['a', 'a.b'], headerObjects: [] })).toBe(false);
    expect(scannable({ fields: ['a.b', 'a.b'], headerObjects: [] })).toBe(false);
    expect(
      scannable({
        fields: [],
        headerObjects: [
          { path: 'h', names: ['x-a'] },
          { path: 'h', names: ['x-b'] },
        ],
      }),
    ).toBe(false); // both sides at one path
    expect(scannable({ fields: ['h.X-A'], headerObjects: [{ path: 'h', names: ['x-a'] }] })).toBe(false); // a member that is also a name
    expect(scannable({ fields: [], headerObjects: [{ path: 'h', names: ['X-A'] }] })).toBe(false);
    expect(
      scannable({
        fields: [],
        headerObjects: [
          { path: 'h', names: ['x-a'] },
          { path: 'h.x', names: ['x-b'] },
        ],
      }),
    ).toBe(false); // an object in a header object
    expect(() => new RecordScanner({ fields: ['__proto__'], headerObjects: [] })).toThrow();
  });

  it('a nested field path reads on the fast path, as a property read would', () => {
    const { parser } = parserFor({ ...configs.default!, input: { ...configs.default!.input, fields: { ...configs.default!.input.fields, latency: ['upstream.latency_ms'] } } });
    for (const text of ['{"upstream":{"latency_ms":5},"status":200}', '{"upstream":[5],"status":200}', '{"upstream":"5","status":200}', '{"upstream":{"latency_ms":5},"upstream":{},"status":200}']) {
      expect(agrees(parser, Buffer.from(text)), text).toBe(true);
    }
  });
});

describe('kept strings read again from the ring of recent ones', () => {
  it('match only the same bytes then the closing quote: never a prefix, a longer string or another escape', () => {
    const { parser } = parserFor(configs.default!);
    // Each line after the first meets strings the ring holds: as a prefix, extended, escaped, non-ASCII.
    const models = ['claude', 'claude-sonnet', 'claude', 'clau\\"de', 'clau\\"de', 'clau\\"de\\\\', 'claude\\u0041', 'claudeA', 'cläude', 'cläude', 'claude"x', 'claude'];
    for (const model of models) {
      for (const route of ['/v1', '/v1/messages', '/v1']) {
        const text = `{"latency_ms":5,"status":200,"model":"${model}","route":"${route}","response_headers":{"x-anthropic-layer-id":"zero-plane-v1"}}`;
        // 'claude"x' ends the string early: not JSON either way.
        expect(parser.parseBytes(Buffer.from(text), 0, Buffer.byteLength(text)), text).toStrictEqual(parser.parse(text));
      }
    }
  });
});
