// The client's options are checked by hand (client/options.ts), not with zod, so importing the client
// stays light. The `config` sections it reads must be accepted and read exactly as the exporter's schema
// does (same rules, defaults, caps): compared here on random input, each section against its zod schema.
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { READ_SECTIONS, readClientConfig, UNREAD_SECTIONS } from '../../../src/client/client-config.js';
import { gateAnswer } from '../../../src/client/gate-client.js';
import { ClientOptionsError, gateClient, type ConfigInput } from '../../../src/client/index.js';
import { parseInstrumentOptions } from '../../../src/client/instrument-options.js';
import { OptionReader } from '../../../src/client/options.js';
import { configSchema, headersSchema, metricsSchema, signalsSchema, windowSchema } from '../../../src/config/schema.js';

const RUNS = Number(process.env.ZP_FUZZ_RUNS ?? 1000);
const SCHEMAS = { headers: headersSchema, signals: signalsSchema, window: windowSchema, metrics: metricsSchema } as const;

/** Values near every rule's edges, and of every wrong kind. */
const scalar = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, true) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 1 }) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 0.006 }) },
  { weight: 1, arbitrary: fc.integer({ min: -3, max: 5000 }) },
  { weight: 4, arbitrary: fc.constantFrom(0, -0, 1, 1.5, 16, 15, 4096, 4097, 99, 100, 1_000_000, 1_000_001, 2 ** 53, Number.NaN, Infinity, 0.005, 0.0051) },
  { weight: 4, arbitrary: fc.constantFrom('5m', '10s', '1h', '0s', '7s', '1h30m', '250ms', 'soon', '', 'x-zp-layer', 'a b', '^zero(', '^v[0-9]+$', 'zero-plane-2024') },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const list = fc.oneof(
  fc.array(scalar, { maxLength: 4 }),
  fc.array(fc.double({ min: 0.001, max: 10 }), { maxLength: 4 }),
  fc.constant(Array.from({ length: 65 }, () => 'a')),
  fc.constant(Array.from({ length: 64 }, (_, i) => i + 1)),
);
const value = fc.oneof({ weight: 4, arbitrary: scalar }, { weight: 1, arbitrary: list });
/**
 * An object setting one to three of `keys` (the others default, so the outcome turns on the values set),
 * sometimes a key the schema does not know, sometimes not an object at all.
 */
const section = (keys: readonly string[], item: fc.Arbitrary<unknown> = value): fc.Arbitrary<unknown> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .uniqueArray(fc.constantFrom(...keys), { minLength: 1, maxLength: 3 })
        .chain((set) => fc.tuple(...set.map(() => item)).map((values) => Object.fromEntries(set.map((k, i) => [k, values[i]])))),
    },
    { weight: 1, arbitrary: fc.constant({ bogus: 1 }) },
    { weight: 1, arbitrary: scalar },
  );
const INPUTS = {
  headers: section(
    ['layerId', 'delayProfile', 'cached', 'downgradeReason', 'optIn'],
    section(['name', 'match', 'value', 'degradedMember', 'warmupMember', 'modeMember'], fc.oneof(scalar, fc.constantFrom('x-zp-layer', 'x-anthropic-cached', '^zero-plane-v[0-9]+$'))),
  ),
  signals: section(['baselineSeconds', 'tolerance', 'fastTargetSeconds', 'hitRateTarget', 'warmupEfficiencyTarget', 'warmupEfficiencyBaseline', 'parseErrorRatioMax', 'stableCohorts']),
  window: section(['duration', 'slot', 'quantileRelativeAccuracy'], fc.oneof(scalar, fc.constantFrom('5m', '10s', '1m', '7s', '1h', '3s'))),
  metrics: section(['histogramBuckets', 'labelValueLimit', 'downgradeReasonLimit', 'labelValueMaxBytes', 'maxSeriesPerFamily']),
};

function light(name: keyof typeof SCHEMAS, input: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  const r = new OptionReader('test');
  const read = readClientConfig(r, { [name]: input });
  try {
    r.done();
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
  return { ok: true, value: read?.[name] };
}

describe('the config sections the client reads', () => {
  for (const name of READ_SECTIONS) {
    it(`${name}: accepted exactly when the exporter's schema accepts it, and read to the same value`, () => {
      fc.assert(
        fc.property(INPUTS[name], (input) => {
          const full = (SCHEMAS[name] as z.ZodType).safeParse(input === undefined ? {} : input);
          const mine = light(name, input);
          expect(mine.ok, `${JSON.stringify(input)}: ${mine.ok ? 'accepted' : mine.message}; the schema ${full.success ? 'accepts it' : `says ${full.error.message}`}`).toBe(full.success);
          if (mine.ok && full.success) expect(mine.value).toEqual(full.data);
          if (!mine.ok) expect(mine.message).toMatch(new RegExp(`^test: config\\.${name}`));
        }),
        { numRuns: RUNS },
      );
    });
  }

  it('defaults to the exporter defaults, and knows every top-level key of the exporter config', () => {
    const r = new OptionReader('test');
    const defaults = configSchema.parse({});
    expect(readClientConfig(r, undefined)).toEqual({ headers: defaults.headers, signals: defaults.signals, window: defaults.window, metrics: defaults.metrics });
    expect([...READ_SECTIONS, ...UNREAD_SECTIONS].sort()).toEqual(Object.keys(configSchema.shape).sort());
    // A parsed zero-plane.yml can be given as it is: the sections the client does not read are not looked at.
    expect(parseInstrumentOptions({ config: { pack: { anything: true }, web: 1, signals: { tolerance: 0.1 } } }).config.signals.tolerance).toBe(0.1);
    expect(() => parseInstrumentOptions({ config: { bogus: {} } as ConfigInput })).toThrow(/^instrumentFetch: config: unknown key "bogus" \(known: headers, signals, window, metrics, input/);
  });

  it('declares the same input shape as the schema for the sections it reads', () => {
    expectTypeOf<NonNullable<ConfigInput['signals']>>().toEqualTypeOf<z.input<typeof signalsSchema>>();
    expectTypeOf<NonNullable<ConfigInput['metrics']>>().toEqualTypeOf<z.input<typeof metricsSchema>>();
    expectTypeOf<NonNullable<ConfigInput['window']>>().toEqualTypeOf<z.input<typeof windowSchema>>();
    expectTypeOf<NonNullable<ConfigInput['headers']>>().toEqualTypeOf<z.input<typeof headersSchema>>();
  });
});

describe("instrumentFetch()'s and gateClient()'s options", () => {
  it('fills every default', () => {
    const o = parseInstrumentOptions(undefined);
    expect({ ...o, config: undefined }).toEqual({
      optIn: 'report',
      genAi: { provider: 'anthropic', operations: { '/v1/messages': 'chat', '/v1/complete': 'text_completion' } },
      observeBodies: { maxJsonBytes: 1024 * 1024, maxWait: 600_000 },
      to: 'in-process',
      config: undefined,
      cohort: undefined,
      closeTimeout: 5_000,
      handleSignals: false,
      warn: undefined,
      promptHash: false,
    });
    expect(parseInstrumentOptions({ promptHash: { header: true } }).promptHash).toEqual({ header: true, key: undefined });
    expect(parseInstrumentOptions({ promptHash: { header: 'X-Hash', key: 'k' } }).promptHash).toEqual({ header: 'X-Hash', key: 'k' });
    expect(() => parseInstrumentOptions({ promptHash: { header: 'bad header' } })).toThrow(/promptHash\.header: "bad header" is not an HTTP header name/);
    expect(() => parseInstrumentOptions({ promptHash: { salt: 'x' } })).toThrow(/promptHash: unknown key "salt"/);
    // A list item that is undefined (or a hole) is an error, as the schema has it, not an absent value (found by the fuzz above).
    expect(() => parseInstrumentOptions({ config: { metrics: { histogramBuckets: [undefined] } } })).toThrow(/metrics\.histogramBuckets\.0: expected a value/);
    expect(() => parseInstrumentOptions({ config: { metrics: { histogramBuckets: [0.1, , 0.3] } } })).toThrow(/metrics\.histogramBuckets\.1: expected a value/);
    expect(parseInstrumentOptions({ to: { ingest: { url: 'http://127.0.0.1:9185', flushInterval: '250ms', timeout: 2000 } } }).to).toEqual({
      ingest: { url: 'http://127.0.0.1:9185', bearerToken: undefined, headers: undefined, batchRecords: 500, flushInterval: 250, maxPendingRecords: 10_000, maxAttempts: 5, timeout: 2000 },
    });
    expect(parseInstrumentOptions({ to: { logFile: 'calls.log' }, observeBodies: false, closeTimeout: '1m' })).toMatchObject({
      to: { logFile: 'calls.log', maxPendingRecords: 10_000 },
      observeBodies: false,
      closeTimeout: 60_000,
    });
  });

  it('names every wrong option, with its path, in one ClientOptionsError', () => {
    const bad = (options: unknown): string => {
      try {
        parseInstrumentOptions(options);
      } catch (err) {
        expect(err).toBeInstanceOf(ClientOptionsError);
        return (err as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(options)}`);
    };
    expect(bad({ optIn: 'fix' })).toBe('instrumentFetch: optIn: expected one of "report", "repair", "reject", got "fix"');
    expect(bad({ to: { ingest: { url: 'ftp://x' } } })).toBe('instrumentFetch: to.ingest.url: Invalid URL: "ftp://x" is not http(s)');
    expect(bad({ to: { ingest: {} } })).toBe('instrumentFetch: to.ingest.url: required: an http(s) URL');
    expect(bad({ to: { ingest: { url: 'http://x', batchRecords: 0, flushInterval: 'often' } } })).toBe(
      'instrumentFetch: to.ingest.batchRecords: must be at least 1, got 0; to.ingest.flushInterval: "often" is not a duration: milliseconds, or a string such as 250ms, 5s or 1m',
    );
    expect(bad({ to: 'nowhere' })).toBe('instrumentFetch: to: expected \'in-process\', { logFile } or { ingest: { url } }, got "nowhere"');
    expect(bad({ to: { logFile: '' } })).toBe('instrumentFetch: to.logFile: must not be empty');
    expect(bad({ closeTimeout: -1, handleSignals: 'yes' })).toBe(
      'instrumentFetch: closeTimeout: -1 is not a duration: milliseconds, or a string such as 250ms, 5s or 1m; handleSignals: expected true or false, got a string',
    );
    expect(bad({ observeBodies: true })).toMatch(/^instrumentFetch: observeBodies: expected false or \{ maxJsonBytes, maxWait \}/);
    expect(bad({ genAi: { provider: 'Anthropic', operations: { 'v1/x': 'chat', '/v1/y': 'Chat' } } })).toBe(
      'instrumentFetch: genAi.provider: "Anthropic" is not a gen_ai.provider.name such as anthropic or aws.bedrock; genAi.operations.v1/x: the key "v1/x" is not a route (starting with /); genAi.operations./v1/y: "Chat" is not a GenAI operation name such as chat or text_completion',
    );
    expect(bad({ optin: 'repair' })).toMatch(/^instrumentFetch: \(options\): unknown key "optin" \(known: optIn, /);
    expect(bad({ warn: 'console' })).toBe('instrumentFetch: warn: expected a function (message: string) => void, got a string');
    expect(bad({ config: { headers: { optIn: { name: 'x anthropic' } }, window: { duration: '5m', slot: '7s' } } })).toBe(
      'instrumentFetch: config.headers.optIn.name: "x anthropic" is not an HTTP header name; config.window: `duration` must be a whole multiple of `slot`, at most 3600 slots',
    );
    expect(() => gateClient({ url: 'http://127.0.0.1:9', pollInterval: 0, failOpen: 'no' as unknown as boolean })).toThrow(
      'gateClient: pollInterval: 0 is not a duration: milliseconds, or a string such as 250ms, 5s or 1m; failOpen: expected true or false, got a string',
    );
  });

  it('reads a gate answer as the exporter writes it, and nothing else', () => {
    expect(gateAnswer({ pauseNonCore: true, since: '2026-01-01T00:00:00Z', extra: 1 })).toEqual({ pauseNonCore: true, since: '2026-01-01T00:00:00Z', stale: false });
    expect(gateAnswer({ pauseNonCore: false })).toEqual({ pauseNonCore: false, since: null, stale: false });
    expect(gateAnswer({ pauseNonCore: false, since: null, stale: true })).toEqual({ pauseNonCore: false, since: null, stale: true });
    // A `stale` the exporter would never write is not a stale answer (as before: it was caught to undefined).
    expect(gateAnswer({ pauseNonCore: false, stale: 'yes' })?.stale).toBe(false);
    for (const notOne of [null, [], 'paused', { pauseNonCore: 'true' }, { pauseNonCore: true, since: 5 }]) expect(gateAnswer(notOne)).toBeUndefined();
  });
});
