// A parse worker hands its counts to the serving thread in deltas (pipeline-delta.ts): however the lines
// fall between the deltas, the serving thread's pipeline ends up with what one pipeline reading every line
// itself would hold. Series, their order, label admissions, the window and the input gauges alike.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { metricsState } from '../../../src/metrics/metrics-state.js';
import { mergeDelta, PipelineDeltas } from '../../../src/pipeline-delta.js';
import { Pipeline } from '../../../src/pipeline.js';
import { summarize } from '../../../src/windows/summarize.js';

const NOW = Date.parse('2026-11-01T00:10:00Z');
const clock = () => NOW;
// Few label values, so the limit and __other__ are reached.
const config = parseConfig('metrics:\n  labelValueLimit: 3\n', 'test.yml');

const record = fc.record({
  model: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
  route: fc.constantFrom('/v1/messages', '/v1/complete'),
  latency: fc.integer({ min: 50, max: 900 }),
  status: fc.constantFrom(200, 200, 200, 429, 500),
  hit: fc.boolean(),
  degraded: fc.boolean(),
  warmup: fc.constantFrom('hit', 'miss'),
  age: fc.integer({ min: 0, max: 400_000 }),
  prompt: fc.option(fc.constantFrom('p1', 'p2', 'p3'), { nil: undefined }),
  garbage: fc.boolean(),
});

type Rec = typeof record extends fc.Arbitrary<infer T> ? T : never;

function lineOf(r: Rec): string {
  if (r.garbage && r.latency % 5 === 0) return `not json ${r.latency}`;
  const headers: Record<string, string> = r.hit ? { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': `warmup=${r.warmup}, degraded=?${r.degraded ? 1 : 0}` } : {};
  return JSON.stringify({
    ...(r.prompt === undefined ? {} : { prompt_hash: r.prompt }),
    ts: new Date(NOW - r.age).toISOString(),
    latency_ms: r.latency,
    status: r.status,
    model: r.model,
    route: r.route,
    response_headers: headers,
  });
}

function feed(p: Pipeline, lines: readonly string[]): void {
  for (const text of lines) {
    const b = Buffer.from(text);
    p.lineBytes(b, 0, b.length, 'gw');
  }
  p.chunkEnd();
}

/** Sums of latencies add up in another order across deltas: equal to the last few bits, not bit for bit. */
function rounded(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(12));
  if (Array.isArray(value)) return value.map(rounded);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rounded(v)]));
  return value;
}

function view(p: Pipeline) {
  return rounded({
    metrics: metricsState(p.metrics),
    window: summarize(p.window.snapshot(), config.signals),
    repeats: p.repeats.summary(10),
    inputs: [p.inputInfo, p.inputDecisions, p.headersUnseen, p.inputEnvelope].map((f) => f.entries()),
  });
}

describe('deltas from a parse worker add up to one pass over the lines', () => {
  it('for any lines and any points the deltas are taken at', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 300 }), fc.array(fc.nat(), { maxLength: 8 }), (records, cuts) => {
        const lines = records.map(lineOf);
        const one = new Pipeline(config, { clock });
        feed(one, lines);
        one.settle();

        const worker = new Pipeline(config, { clock });
        const serving = new Pipeline(config, { clock });
        const deltas = new PipelineDeltas(worker);
        const at = [...new Set(cuts.map((c) => c % (lines.length + 1)))].sort((x, y) => x - y);
        let from = 0;
        for (const to of [...at, lines.length]) {
          feed(worker, lines.slice(from, to));
          const d = deltas.take();
          if (d !== undefined) mergeDelta(serving, structuredClone(d));
          from = to;
        }
        worker.settle();
        const last = deltas.take();
        if (last !== undefined) mergeDelta(serving, structuredClone(last));

        expect(view(serving)).toEqual(view(one));
        // Nothing is handed over twice.
        expect(deltas.take()).toBeUndefined();
      }),
      { numRuns: Number(process.env.ZP_FUZZ_RUNS ?? 100) },
    );
  });

  it('after a restore: the worker starts from the serving thread’s series, and only what it reads is added', () => {
    const lines = Array.from({ length: 200 }, (_, i) =>
      lineOf({
        model: (['a', 'b', 'c', 'd', 'e'] as const)[i % 5] ?? 'a',
        route: '/v1/messages',
        latency: 100 + i,
        status: 200,
        hit: i % 3 !== 0,
        degraded: i % 7 === 0,
        warmup: 'hit',
        age: i * 1000,
        prompt: undefined,
        garbage: false,
      }),
    );
    const before = new Pipeline(config, { clock });
    feed(before, lines.slice(0, 120));
    const saved = structuredClone(metricsState(before.metrics));

    // One pass: the restored counters, then the later lines.
    const one = new Pipeline(config, { clock });
    mergeDeltaState(one, saved);
    feed(one, lines.slice(120));

    const serving = new Pipeline(config, { clock });
    mergeDeltaState(serving, saved);
    const worker = new Pipeline(config, { clock });
    mergeDeltaState(worker, structuredClone(metricsState(serving.metrics)));
    const deltas = new PipelineDeltas(worker);
    deltas.baseline();
    feed(worker, lines.slice(120));
    const d = deltas.take();
    expect(d).toBeDefined();
    mergeDelta(serving, structuredClone(d as NonNullable<typeof d>));
    expect(rounded(metricsState(serving.metrics))).toEqual(rounded(metricsState(one.metrics)));
    expect(serving.metrics.lines.sum()).toBe(200);
  });
});

/** A checkpoint's counts given to a fresh pipeline, as serve restores them (and as a worker takes them for its limits). */
function mergeDeltaState(p: Pipeline, state: ReturnType<typeof metricsState>): void {
  mergeDelta(p, { metrics: state, slots: [], inputGauges: [], inputDecisions: [] });
}
