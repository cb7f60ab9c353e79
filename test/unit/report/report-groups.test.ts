// `report --by`: the per-group figures on a known mix, worked out here from the lines written. The groups
// are the metric labels' values (empty value included, overflow to __other__ past metrics.labelValueLimit),
// sorted by request count, and each one is summarized as the whole input is.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { OVERFLOW_VALUE } from '../../../src/metrics/label-limiter.js';
import { Pipeline } from '../../../src/pipeline.js';
import { buildReport, type ReportGroup } from '../../../src/report/build-report.js';
import { formatText } from '../../../src/report/format-text.js';
import type { GroupLabel } from '../../../src/windows/grouped-aggregates.js';

interface Req {
  cohort?: string;
  model?: string;
  ms: number;
  hit: boolean;
  warmup?: 'hit' | 'miss';
  degraded?: boolean;
}

function line(r: Req): string {
  const profile = [r.warmup === undefined ? undefined : `warmup=${r.warmup}`, `degraded=?${r.degraded ? 1 : 0}`].filter((p) => p !== undefined).join(', ');
  return JSON.stringify({
    ts: '2026-11-01T00:00:00Z',
    latency_ms: r.ms,
    status: 200,
    model: r.model ?? 'claude-3',
    route: '/v1/messages',
    ...(r.cohort === undefined ? {} : { cohort: r.cohort }),
    response_headers: { 'x-anthropic-layer-id': r.hit ? 'zero-plane-v1' : 'standard-v3', 'x-anthropic-delay-profile': profile },
    request_headers: { 'x-anthropic-experimental': 'zero-plane-2024' },
  });
}

// Three cohort values fit (labelValueLimit 3): stable, the empty value (no field, or ""), canary; blue and
// green come later and become __other__, as they do on the metric.
const MIX: Req[] = [
  { cohort: 'stable', ms: 180, hit: true, warmup: 'hit' },
  { ms: 200, hit: true, warmup: 'miss' },
  { cohort: 'stable', ms: 184, hit: true, warmup: 'hit' },
  { cohort: 'canary', ms: 150, hit: true, warmup: 'hit', degraded: true },
  { cohort: 'stable', ms: 188, hit: true, warmup: 'miss' },
  { cohort: '', ms: 400, hit: false },
  { cohort: 'canary', ms: 250, hit: true, warmup: 'hit' },
  { cohort: 'blue', ms: 170, hit: true, warmup: 'hit' },
  { cohort: 'stable', ms: 500, hit: false },
  { cohort: 'canary', ms: 210, hit: true },
  { cohort: 'green', ms: 175, hit: false, degraded: true },
  { cohort: 'stable', ms: 182, hit: true, warmup: 'hit' },
];

function reportOf(reqs: Req[], by: GroupLabel | undefined) {
  const config = parseConfig('metrics:\n  labelValueLimit: 3\n', 'groups.yml');
  const pipeline = new Pipeline(config, { keepTotals: true, ...(by === undefined ? {} : { groupBy: by }) });
  for (const r of reqs) pipeline.line(line(r), 'mix.log');
  pipeline.finish();
  return { report: buildReport(pipeline, config), pipeline, config };
}

/** The figures of one group, from its requests: counts exact, nearest-rank quantiles, population σ. */
function expected(reqs: Req[], baseline: number) {
  const hits = reqs.filter((r) => r.hit);
  const lat = hits.map((r) => r.ms / 1000).sort((a, b) => a - b);
  const rank = (q: number) => (lat.length === 0 ? null : (lat[Math.max(1, Math.ceil(q * lat.length)) - 1] as number));
  const mean = lat.reduce((a, b) => a + b, 0) / lat.length;
  const warmHits = hits.filter((r) => r.warmup === 'hit').length;
  const warm = warmHits + hits.filter((r) => r.warmup === 'miss').length;
  const p99 = rank(0.99);
  return {
    requests: reqs.length,
    hits: hits.length,
    hitRate: hits.length / reqs.length,
    degradedCount: reqs.filter((r) => r.degraded).length,
    warmupEfficiency: warm === 0 ? null : warmHits / warm,
    p50Seconds: rank(0.5),
    p99Seconds: p99,
    p999Seconds: rank(0.999),
    stddevSeconds: lat.length === 0 ? null : Math.sqrt(lat.reduce((a, x) => a + (x - mean) ** 2, 0) / lat.length),
    p99Drift: p99 === null ? null : (p99 - baseline) / baseline,
  };
}

function expectGroup(g: ReportGroup | undefined, reqs: Req[], baseline: number): void {
  expect(g).toBeDefined();
  const want = expected(reqs, baseline);
  const got = g as ReportGroup;
  for (const key of ['requests', 'hits', 'hitRate', 'degradedCount', 'warmupEfficiency'] as const) expect(got[key], key).toBe(want[key]);
  // Quantiles from the DDSketch within its 0.5 % relative accuracy; σ from moments within float rounding.
  for (const key of ['p50Seconds', 'p99Seconds', 'p999Seconds', 'p99Drift'] as const) {
    const w = want[key];
    if (w === null) expect(got[key], key).toBeNull();
    else expect(Math.abs((got[key] as number) - w), key).toBeLessThanOrEqual(Math.abs(key === 'p99Drift' ? (want.p99Seconds as number) / baseline : w) * 0.005);
  }
  expect(got.stddevSeconds).toBeCloseTo(want.stddevSeconds as number, 12);
}

describe('report --by', () => {
  it('groups by the bounded cohort label, empty value and __other__ included, most requests first', () => {
    const { report, pipeline, config } = reportOf(MIX, 'cohort');
    const baseline = config.signals.baselineSeconds;
    const of = (values: (string | undefined)[]) => MIX.filter((r) => values.includes(r.cohort));
    expect(report.groupBy).toBe('cohort');
    const groups = report.groups ?? [];
    // stable 5, canary 3, then "" and __other__ with 2 each (ties by value).
    expect(groups.map((g) => g.value)).toEqual(['stable', 'canary', '', OVERFLOW_VALUE]);
    expectGroup(groups[0], of(['stable']), baseline);
    expectGroup(groups[1], of(['canary']), baseline);
    expectGroup(groups[2], of([undefined, '']), baseline);
    expectGroup(groups[3], of(['blue', 'green']), baseline);
    // The groups are the metric's cohort values, and together they are the whole input.
    const metricCohorts = new Set(pipeline.metrics.requests.entries().map(([labels]) => labels[pipeline.metrics.requests.labelNames.indexOf('cohort')]));
    expect(new Set(groups.map((g) => g.value))).toEqual(metricCohorts);
    expect(groups.reduce((a, g) => a + g.requests, 0)).toBe(report.requests);
    expect(groups.reduce((a, g) => a + g.degradedCount, 0)).toBe(report.degradedCount);
  });

  it('one group holding every record has exactly the whole-input figures', () => {
    const { report } = reportOf(MIX, 'model');
    expect(report.groups?.length).toBe(1);
    const g = report.groups?.[0] as ReportGroup;
    expect(g.value).toBe('claude-3');
    for (const key of ['requests', 'hits', 'hitRate', 'p50Seconds', 'p99Seconds', 'p999Seconds', 'stddevSeconds', 'p99Drift', 'degradedCount', 'warmupEfficiency'] as const)
      expect(g[key], key).toBe(report[key]);
  });

  it('adds nothing without --by, and the text names each group (the empty one as "(none)")', () => {
    const plain = reportOf(MIX, undefined).report;
    expect('groups' in plain).toBe(false);
    expect('groupBy' in plain).toBe(false);
    const text = formatText(reportOf(MIX, 'cohort').report);
    const table = text.slice(text.indexOf('by cohort: 4 groups'));
    expect(
      table
        .split('\n')
        .slice(2, 6)
        .map((row) => row.split(/\s+/)[0]),
    ).toEqual(['stable', 'canary', '(none)', OVERFLOW_VALUE]);
    expect(formatText(plain)).not.toContain('by cohort');
  });
});
