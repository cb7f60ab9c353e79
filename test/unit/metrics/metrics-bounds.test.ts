// The bounds that keep /metrics finite whatever the lines say, unit by unit: label values cut at a UTF-8
// boundary and marked, each family's series capped with the excess in __other__ (sums stay exact),
// restored rows held to the same bounds, and the exposition handed out in pieces equal to the whole.
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import { ExporterMetrics } from '../../../src/metrics/exporter-metrics.js';
import { CounterFamily, GaugeFamily, HistogramFamily } from '../../../src/metrics/families.js';
import { CUT_MARK, cutToBytes, cutUtf8, LabelLimiter, OVERFLOW_VALUE } from '../../../src/metrics/label-limiter.js';
import { mergeMetricsState, mergesExactly, metricsState } from '../../../src/metrics/metrics-state.js';
import { EXPOSITION_CHUNK_CHARS } from '../../../src/metrics/exposition.js';
import { buildRegistry } from '../../../src/metrics/registry.js';
import { Pipeline } from '../../../src/pipeline.js';
import type { Config } from '../../../src/config/schema.js';

const bytes = (s: string) => Buffer.byteLength(s);

function configWith(metrics: Partial<Config['metrics']>): Config {
  const c = defaultConfig();
  return { ...c, metrics: { ...c.metrics, ...metrics } };
}

function line(model: string, route = '/v1/messages', cohort = 'stable', extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ latency_ms: 180, status: 200, model, route, cohort, response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' }, ...extra });
}

describe('label values longer than metrics.labelValueMaxBytes', () => {
  it('are cut at a UTF-8 boundary, marked, and never longer than the limit', () => {
    expect(cutUtf8('abc', 2)).toBe('ab');
    // é is 2 bytes, ✓ 3, 😀 4 (a surrogate pair): a cut never splits one.
    expect(cutUtf8('aé', 2)).toBe('a');
    expect(cutUtf8('a✓', 3)).toBe('a');
    expect(cutUtf8('a😀b', 4)).toBe('a');
    expect(cutUtf8('a😀b', 5)).toBe('a😀');
    for (const value of ['x'.repeat(500), 'é'.repeat(500), '✓'.repeat(500), '😀'.repeat(500), `a${'😀'.repeat(100)}`, `ab${'é'.repeat(100)}`]) {
      for (const max of [16, 17, 18, 19, 128]) {
        const cut = cutToBytes(value, max);
        expect(cut.endsWith(CUT_MARK), `${value.slice(0, 4)} ${max}`).toBe(true);
        expect(bytes(cut)).toBeLessThanOrEqual(max);
        // The longest such prefix: one more code point would not fit.
        const kept = cut.slice(0, -CUT_MARK.length);
        const next = String.fromCodePoint(value.codePointAt(kept.length) as number);
        expect(bytes(kept + next + CUT_MARK)).toBeGreaterThan(max);
        expect(value.startsWith(kept)).toBe(true);
        expect(Buffer.from(cut).toString('utf8')).toBe(cut); // valid UTF-8: decodes to itself
      }
    }
    expect(cutToBytes('x'.repeat(128), 128)).toBe('x'.repeat(128));
  });

  it('count too_long once per cut value, too_many_values once per replaced one, never both', () => {
    const m = new ExporterMetrics([0.1], { labelValueLimit: 2, downgradeReasonLimit: 20, labelValueMaxBytes: 16 });
    const long = (c: string) => c.repeat(330_000);
    expect(m.model.map('short')).toBe('short');
    const a = m.model.map(long('a'));
    expect(a).toBe(`${'a'.repeat(13)}${CUT_MARK}`);
    // Another long value with the same first bytes is the same cut value: no new series.
    expect(m.model.map(`${'a'.repeat(20)}b`)).toBe(a);
    expect(m.model.map(a)).toBe(a);
    // Past the value limit: replaced, counted as too_many_values only.
    expect(m.model.map(long('b'))).toBe(OVERFLOW_VALUE);
    expect(m.model.map('other')).toBe(OVERFLOW_VALUE);
    expect(m.labelOverflow.get(['model', 'too_long'])).toBe(2);
    expect(m.labelOverflow.get(['model', 'too_many_values'])).toBe(2);
    expect(m.model.values()).toEqual(['short', a]);
  });

  it('refuse a limit that leaves no room for the cut mark', () => {
    expect(() => new LabelLimiter(50, () => {}, 3)).toThrow(/more than 3 bytes/);
  });
});

describe('series per family past metrics.maxSeriesPerFamily', () => {
  it('go to the overflow series (bounded labels __other__, closed-set labels kept), counted; sums stay exact', () => {
    let overflowed = 0;
    const model = new LabelLimiter(1000);
    const route = new LabelLimiter(1000);
    const f = new CounterFamily('r_total', 'r', ['hit', 'model', 'route'], { maxSeries: 3, limiters: { model, route }, onOverflow: () => overflowed++ });
    f.inc(['true', 'a', '/1']);
    f.inc(['true', 'b', '/1']);
    f.inc(['false', 'a', '/1']);
    f.inc(['true', 'c', '/1'], 5);
    f.inc(['false', 'd', '/2'], 7);
    f.inc(['true', 'a', '/1']); // an existing series still counts as itself
    expect(f.entries()).toEqual([
      [['true', 'a', '/1'], 2],
      [['true', 'b', '/1'], 1],
      [['false', 'a', '/1'], 1],
      [['true', OVERFLOW_VALUE, OVERFLOW_VALUE], 5],
      [['false', OVERFLOW_VALUE, OVERFLOW_VALUE], 7],
    ]);
    expect(overflowed).toBe(2);
    expect(f.sum()).toBe(16);
    expect(f.admits(['true', 'a', '/1'])).toBe(true);
    expect(f.admits(['true', 'e', '/1'])).toBe(false);
    expect(f.admits(['true', OVERFLOW_VALUE, OVERFLOW_VALUE])).toBe(true);
  });

  it('a family without limiters folds every label; a histogram folds the same way', () => {
    const lines = new CounterFamily('l_total', 'l', ['source'], { maxSeries: 1 });
    lines.inc(['a']);
    lines.inc(['b']);
    expect(lines.entries()).toEqual([
      [['a'], 1],
      [[OVERFLOW_VALUE], 1],
    ]);
    const model = new LabelLimiter(1000);
    const h = new HistogramFamily('h', 'h', ['hit', 'model'], [0.1, 1], { maxSeries: 1, limiters: { model } });
    h.observe(['true', 'a'], 0.05);
    h.observe(['true', 'b'], 0.5);
    h.observe(['false', 'c'], 2);
    expect(h.entries()).toEqual([
      { labels: ['true', 'a'], counts: [1, 0], sum: 0.05, count: 1 },
      { labels: ['true', OVERFLOW_VALUE], counts: [0, 1], sum: 0.5, count: 1 },
      { labels: ['false', OVERFLOW_VALUE], counts: [0, 0], sum: 2, count: 1 },
    ]);
  });

  it('50 models × 50 routes × 50 cohorts through the pipeline: at most the cap plus a few __other__ series per family, every request counted', () => {
    const config = configWith({ maxSeriesPerFamily: 1000 });
    const p = new Pipeline(config, { clock: () => 1_714_564_800_000 });
    let n = 0;
    for (let a = 0; a < 50; a++) for (let b = 0; b < 50; b++) for (let c = 0; c < 50; c++, n++) p.line(line(`m${a}`, `/r${b}`, `c${c}`, { status: n % 3 === 0 ? 503 : 200 }), 'gw');
    const m = p.metrics;
    expect(m.requests.sum()).toBe(125_000);
    expect(m.degraded.sum()).toBe(0);
    for (const family of m.families()) expect(family.size, family.name).toBeLessThanOrEqual(1000 + 12);
    expect(m.duration.entries().reduce((t, r) => t + r.count, 0)).toBe(125_000);
    // The families a request feeds agree: its labels are its own in all of them, or __other__ in all.
    const own = m.requests.entries().filter(([l]) => l[2] !== OVERFLOW_VALUE);
    const ownDuration = m.duration.entries().filter((r) => r.labels[1] !== OVERFLOW_VALUE);
    expect(own.reduce((t, [, v]) => t + v, 0)).toBe(ownDuration.reduce((t, r) => t + r.count, 0));
    // Every line past the cap is counted once, on the family that was full.
    const folded = 125_000 - own.reduce((t, [, v]) => t + v, 0);
    expect(folded).toBeGreaterThan(100_000);
    expect(m.seriesOverflow.sum()).toBe(folded);
    // The index of resolved series is no bigger than the families: an overflowed combination is not kept.
    const index = (p as unknown as { seriesIndex: Map<string, Map<string, Map<string, unknown[]>>> }).seriesIndex;
    let rows = 0;
    for (const byRoute of index.values()) for (const byCohort of byRoute.values()) rows += byCohort.size;
    expect(rows).toBeLessThanOrEqual(1000 + 1);
  });
});

describe('restored checkpoint rows', () => {
  it('obey the bounds a line would: cut, limited, capped, and rows landing on one series add up', () => {
    // What a version without bounds saved: 330 KB values, and far more series than the cap.
    const unbounded = new ExporterMetrics([0.1], { labelValueLimit: 50, downgradeReasonLimit: 20 });
    const huge = (i: number) => `${i}-${'m'.repeat(330_000)}`;
    for (let i = 0; i < 20; i++) unbounded.requests.inc(['true', '2xx', huge(i), huge(i), huge(i)]);
    for (let a = 0; a < 50; a++) for (let b = 0; b < 50; b++) unbounded.requests.inc(['true', '2xx', `m${a}`, `/r${b}`, '']);
    for (let i = 0; i < 20; i++) unbounded.duration.observe(['true', huge(i), huge(i), huge(i)], 0.05);
    unbounded.lastRecord.set(['a'], 10);
    unbounded.lastRecord.set(['b'], 30);
    const saved = metricsState(unbounded);

    const m = new ExporterMetrics([0.1], { labelValueLimit: 50, downgradeReasonLimit: 20, labelValueMaxBytes: 128, maxSeriesPerFamily: 100 });
    const gauge = new GaugeFamily('g', 'g', ['source'], { maxSeries: 1 });
    for (const family of m.families()) {
      if (family instanceof HistogramFamily) family.restore(saved.histograms[family.name] ?? []);
      else family.restore(saved.series[family.name] ?? []);
    }
    gauge.restore(saved.series[unbounded.lastRecord.name] ?? []);

    expect(m.requests.sum()).toBe(20 + 2500);
    expect(m.requests.size).toBeLessThanOrEqual(100 + 1);
    for (const [labels] of m.requests.entries()) for (const v of labels) expect(bytes(v)).toBeLessThanOrEqual(128);
    // Most rows went to the overflow series: 100 series of their own at most, the rest added up there.
    expect(m.requests.get(['true', '2xx', OVERFLOW_VALUE, OVERFLOW_VALUE, OVERFLOW_VALUE])).toBeGreaterThan(2000);
    expect(m.duration.entries().reduce((t, r) => t + r.count, 0)).toBe(20);
    // The cut values were admitted (up to the limit) as a line's would be; nothing counted as overflow.
    expect(m.model.values()[0]).toBe(cutToBytes(huge(0), 128));
    expect(m.labelOverflow.sum()).toBe(0);
    expect(m.seriesOverflow.sum()).toBe(0);
    // Two gauge rows on one series keep the larger value (a timestamp).
    expect(gauge.entries()).toEqual([
      [['a'], 10],
      [[OVERFLOW_VALUE], 30],
    ]);
  });

  it('label_overflow_total rows saved before the reason label keep counting as too_many_values', () => {
    const m = new ExporterMetrics([0.1], { labelValueLimit: 50, downgradeReasonLimit: 20 });
    m.labelOverflow.restore([
      [['model'], 7],
      [['route', 'too_long'], 2],
    ]);
    expect(m.labelOverflow.get(['model', 'too_many_values'])).toBe(7);
    expect(m.labelOverflow.get(['route', 'too_long'])).toBe(2);
  });
});

describe('merging a second half (report on two threads)', () => {
  it('is exact only when the series of both halves fit the cap; cut values do not matter', () => {
    // Each hit model makes 2 warm-up series (hit, miss): the family that fills first here.
    const config = configWith({ maxSeriesPerFamily: 150, labelValueLimit: 1000 });
    const first = new Pipeline(config, { keepTotals: true });
    const fits = new Pipeline(config, { keepTotals: true });
    const spills = new Pipeline(config, { keepTotals: true });
    for (let i = 0; i < 40; i++) first.line(line(`m${i}`), 'gw');
    for (let i = 0; i < 20; i++) fits.line(line(`${i}-${'x'.repeat(200)}`), 'gw'); // cut, but cut the same in one pass
    for (let i = 40; i < 110; i++) spills.line(line(`m${i}`), 'gw');
    expect(fits.metrics.labelOverflow.sum({ reason: 'too_long' })).toBe(20);
    expect(mergesExactly(first.metrics, fits.state().metrics)).toBe(true);
    // Each half alone fits 150 series; together they would not, so one pass would have folded some.
    expect(spills.metrics.seriesOverflow.sum()).toBe(0);
    expect(mergesExactly(first.metrics, spills.state().metrics)).toBe(false);
    mergeMetricsState(first.metrics, fits.state().metrics);
    expect(first.metrics.requests.sum()).toBe(60);
    // And a half that folded on its own never merges.
    const folded = new Pipeline(config, { keepTotals: true });
    for (let i = 0; i < 80; i++) folded.line(line(`m${i}`), 'gw');
    expect(folded.metrics.seriesOverflow.get(['zero_plane_warmup_total'])).toBe(5);
    expect(mergesExactly(new Pipeline(config).metrics, folded.state().metrics)).toBe(false);
  });
});

describe('the /metrics body', () => {
  it('with the defaults, is at most 22 MiB whatever the lines say (every family full, every value 128 escaped bytes)', async () => {
    const config = defaultConfig();
    const p = new Pipeline(config, { clock: () => 1_714_564_800_000 });
    // 128 bytes that the text format writes as 256 (\" and \\), distinct in their first bytes.
    const worst = (kind: string, i: number) => `${kind}${String(i).padStart(2, '0')}${'"\\'.repeat(63)}`.slice(0, 128);
    let n = 0;
    const send = (a: number, b: number, c: number, hit: boolean, status: number | undefined) => {
      const headers = {
        'x-anthropic-layer-id': hit ? 'zero-plane-v1' : 'standard',
        'x-anthropic-delay-profile': `warmup=${n % 2 === 0 ? 'hit' : 'miss'}, degraded=?1, mode=strict`,
        'x-anthropic-cached': 'true',
        'x-anthropic-downgrade-reason': worst('d', n % 40),
      };
      p.line(JSON.stringify({ latency_ms: 150 + (n++ % 3000), status, model: worst('m', a), route: worst('r', b), cohort: worst('c', c), response_headers: headers }), 'gw');
    };
    // A new (model, route, cohort) per line, one series each, until every family is full...
    for (let i = 0; i < 2500; i++) send(i % 50, Math.floor(i / 50) % 50, (i * 7) % 50, true, 200);
    // ...then every hit × status class, all of them __other__.
    for (const hit of [true, false]) for (const status of [101, 200, 302, 404, 503, undefined]) send(1, 2, 3, hit, status);
    const m = p.metrics;
    for (const family of [m.requests, m.duration, m.degraded, m.cached]) expect(family.size, family.name).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...m.model.values().map(bytes))).toBe(128);
    const chunks = await buildRegistry(m.families(), 'test').chunks();
    const size = chunks.reduce((t, c) => t + bytes(c), 0);
    expect(size).toBeGreaterThan(20 * 1024 * 1024); // the worst case really is this big...
    expect(size).toBeLessThan(22 * 1024 * 1024); // ...and no bigger: what docs/reliability.md promises
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThan(EXPOSITION_CHUNK_CHARS + 32 * 1024);
  });

  it('comes in pieces of about EXPOSITION_CHUNK_CHARS, cut between series, that join to the whole text', async () => {
    const m = new ExporterMetrics([0.1, 0.2, 0.5], { labelValueLimit: 1000, downgradeReasonLimit: 20, labelValueMaxBytes: 128, maxSeriesPerFamily: 1000 });
    for (let i = 0; i < 900; i++) {
      m.requests.inc(['true', '2xx', `model-${i}-${'"'.repeat(100)}`, '/r', '']);
      m.duration.observe(['true', `model-${i}`, '/r', ''], i / 1000);
    }
    const registry = buildRegistry(m.families(), 'test');
    const chunks = await registry.chunks();
    const whole = await registry.metrics();
    // The first piece is prom-client's process metrics, which change between two calls; ours do not.
    expect(whole.endsWith(chunks.slice(1).join(''))).toBe(true);
    expect(chunks.slice(1).join('')).toContain(`${m.duration.text()}\n\n`);
    // Most pieces are cut right after reaching the size, at the end of a sample line (never mid-series).
    const big = chunks.filter((c) => c.length >= EXPOSITION_CHUNK_CHARS);
    expect(big.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.length).toBeLessThan(EXPOSITION_CHUNK_CHARS + 2048);
    for (const c of big) expect(c.at(-1)).toMatch(/\d/);
    const histogramPieces = [...m.duration.chunks()];
    for (const piece of histogramPieces.slice(1)) expect(piece.startsWith('\nzero_plane_request_duration_seconds_bucket{')).toBe(true);
    for (const piece of histogramPieces.slice(0, -1)) expect(piece).toMatch(/_count\{[^}]*\} \d+$/);
  });
});
