// Backtest to the last bit: on generated logs whose 5 m (and 1 h) ratios sit exactly on the alerts'
// thresholds (30 of 3,000 Zero-Plane requests above the ceiling, warm-up at exactly 88 %, the hit rate at
// 99.4 %, both SLOs burning at exactly 14.4×), spread over many series per group (three models, routes
// and cohorts with some left empty, a non-ASCII cohort, three status classes), `backtest` and a real
// Prometheus 2.42 evaluating the generated rules over the backfilled `export` agree at every step: every
// signal bit for bit, and every alert's firing intervals. Prometheus sums per-series rates in its own
// order; where the float64 result lands on either side of the threshold is decided by the last bit, and
// the test checks that it does land on both sides (so a backtest that summed counts first would fail).
//
// A fixed list of seeds (each names its scenario and the spread of its records over series), each seed's
// log 8 days after the previous one's, so no window (the early warnings' 7 d level, with its last hour, at
// most) reads another seed's samples; one
// Prometheus holds them all. A failure names its seed. One seed's export carries an extra target label
// whose name sorts after the series' own (zone), which changes the order of the sum: the backtest is
// given its name, as it must be to agree (told only job and instance, that seed fails).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseDuration } from '../../../src/config/duration.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { backtest, type BacktestResult, type BacktestRow } from '../../../src/history/backtest.js';
import { exportOpenMetrics } from '../../../src/history/openmetrics-export.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { createRng, type Rng } from '../../../src/simulate/random.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { BackfilledPrometheus, firingIntervals, type AlertingRule, type Matrix, type Range, type RecordingRule } from './backfilled-prometheus.js';

const dir = tempDir('zp-bits-');
const STEP_MS = 30_000;
const BASE_MS = Date.UTC(2025, 2, 3, 0, 0, 0);
const DAY_MS = 86_400_000;
/** Seeds, run in this order; seed % SCENARIOS.length picks the scenario. */
const SEEDS = [11, 12, 13, 14, 15, 21, 26] as const;
/**
 * A seed exported with one more target label, named after every label of the series (`zone` > `route`):
 * it changes Prometheus' order where one series lacks a label another has, so the backtest is told its name.
 */
const EXTRA_TARGET: Readonly<Record<number, readonly [string, string]>> = { 26: ['zone', 'eu-west-1'] };

/**
 * Per 30 s step, periodic over the 10 steps of the 5 m window, so every full 5 m window (and every 30 m
 * and 1 h one) holds exactly the same counts: `hits[k]` Zero-Plane requests with `slow[k]` above the ceiling,
 * `misses[k]` requests not served by Zero-Plane, `warmupMiss` of the hits with a warm-up miss.
 */
interface Scenario {
  name: string;
  hits: number[];
  slow: number[];
  misses: number[];
  warmupMiss: number;
}
const ten = (a: number, b: number, firstA: number) => Array.from({ length: 10 }, (_, i) => (i < firstA ? a : b));
const SCENARIOS: readonly Scenario[] = [
  // 30 of 3,000 above the ceiling: exactly the 1 % the P0, the band and the canary compare with `>`.
  { name: 'above-ceiling at 1 %', hits: ten(300, 300, 10), slow: ten(3, 3, 10), misses: ten(0, 0, 10), warmupMiss: 30 },
  // 880 of 1,000 warm-up hits: exactly the 88 % ZeroPlaneWarmupEfficiencyLow compares with `<`.
  { name: 'warm-up at 88 %', hits: ten(100, 100, 10), slow: ten(0, 0, 10), misses: ten(0, 0, 10), warmupMiss: 12 },
  // 994 of 1,000 requests served by Zero-Plane: exactly the 99.4 % ZeroPlaneHitRateLow compares with `<`.
  { name: 'hit rate at 99.4 %', hits: ten(99, 100, 6), slow: ten(0, 0, 10), misses: ten(1, 0, 6), warmupMiss: 9 },
  // 144 of 1,000 above the ceiling over 5 m and 1 h: the latency SLO (1 % budget) burning at exactly 14.4×.
  { name: 'latency burn at 14.4×', hits: ten(100, 100, 10), slow: ten(15, 14, 4), misses: ten(0, 0, 10), warmupMiss: 10 },
  // 108 of 1,250 requests missed over 5 m and 1 h: the hit-rate SLO (0.6 % budget) burning at exactly 14.4×.
  { name: 'hit-rate burn at 14.4×', hits: ten(114, 115, 8), slow: ten(0, 0, 10), misses: ten(11, 10, 8), warmupMiss: 11 },
];

const MODELS = ['claude-sonnet-4', 'claude-haiku-4', 'claude-opus-4'];
/** '' leaves the field out: the label is empty, so the TSDB does not store it (it takes no place in the order). */
const ROUTES = ['/v1/messages', '/v1/complete', ''];
const COHORTS = ['stable', 'canary', '', 'canary-ü'];

interface Generated {
  seed: number;
  scenario: Scenario;
  file: string;
  startMs: number;
  endMs: number;
}

/** One seed's log: 65 min at the scenario's exact counts, 6 min of spike (everything fires), 10 min exact again. */
function generate(seed: number, index: number): Generated {
  const scenario = SCENARIOS[seed % SCENARIOS.length] as Scenario;
  const rng = createRng(seed);
  const startMs = BASE_MS + index * 8 * DAY_MS;
  const steps = (65 + 6 + 10) * 2;
  const pick = <T>(xs: readonly T[], weights: readonly number[]): T => {
    let r = rng() * weights.reduce((a, b) => a + b, 0);
    for (let i = 0; i < xs.length; i++) if ((r -= weights[i] as number) < 0) return xs[i] as T;
    return xs[xs.length - 1] as T;
  };
  // How this seed spreads its records over the series: uneven, so each series' share differs.
  const modelW = MODELS.map(() => 0.2 + rng());
  const routeW = ROUTES.map(() => 0.2 + rng());
  const cohortW = COHORTS.map(() => 0.2 + rng());
  const lines: string[] = [];
  for (let s = 0; s < steps; s++) {
    const t0 = startMs + s * STEP_MS;
    const spike = s >= 130 && s < 142;
    const k = s % 10;
    const hits = scenario.hits[k] as number;
    const slow = spike ? 60 : (scenario.slow[k] as number);
    const misses = spike ? 40 : (scenario.misses[k] as number);
    // Which of the step's hits are slow, warm-up misses, degraded (one every other step: the P0 needs some).
    const order = shuffle(
      rng,
      Array.from({ length: hits }, (_, i) => i),
    );
    const slowSet = new Set(order.slice(0, slow));
    const missSet = new Set(shuffle(rng, order).slice(0, scenario.warmupMiss));
    const degraded = s % 2 === 0 ? (order[hits - 1] as number) : -1;
    const records: { at: number; line: string }[] = [];
    for (let i = 0; i < hits + misses; i++) {
      const hit = i < hits;
      const record: Record<string, unknown> = {
        ts: '',
        latency_ms: hit ? (slowSet.has(i) ? 205 + Math.round(rng() * 40) : 180 + Math.round(rng() * 8)) : 320 + Math.round(rng() * 50),
        status: hit ? 200 : pick([200, 429, 503], [3, 1, 1]),
        model: pick(MODELS, modelW),
      };
      const route = pick(ROUTES, routeW);
      if (route !== '') record['route'] = route;
      const cohort = pick(COHORTS, cohortW);
      if (cohort !== '') record['cohort'] = cohort;
      const response: Record<string, string> = { 'x-anthropic-layer-id': hit ? 'zero-plane-v1' : 'standard-v3' };
      if (hit) response['x-anthropic-delay-profile'] = `warmup=${missSet.has(i) ? 'miss' : 'hit'}, degraded=?${i === degraded ? 1 : 0}, mode=balanced`;
      record['response_headers'] = response;
      record['request_headers'] = { 'x-anthropic-experimental': 'zero-plane-2024' };
      const at = t0 + Math.floor(rng() * STEP_MS);
      record['ts'] = new Date(at).toISOString();
      records.push({ at, line: JSON.stringify(record) });
    }
    records.sort((a, b) => a.at - b.at);
    for (const r of records) lines.push(r.line);
  }
  const file = join(dir, `seed-${seed}.log`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { seed, scenario, file, startMs, endMs: startMs + steps * STEP_MS };
}

function shuffle<T>(rng: Rng, xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

interface SeedRun extends Generated {
  rows: BacktestRow[];
  result: BacktestResult;
  range: Range;
}

const prometheus = new BackfilledPrometheus(dir);
const config = defaultConfig();
const runs: SeedRun[] = [];
let recorded: Map<RecordingRule, Matrix[]>;
let alerts: AlertingRule[];

beforeAll(async () => {
  const nowMs = Date.now();
  for (const [i, seed] of SEEDS.entries()) {
    const g = generate(seed, i);
    const rows: BacktestRow[] = [];
    const extra = EXTRA_TARGET[seed];
    const labels: (readonly [string, string])[] = [['job', 'zero-plane-exporter'], ['instance', 'backfill'], ...(extra === undefined ? [] : [extra])];
    const result = await backtest(config, [g.file], { stepMs: STEP_MS, nowMs, targetLabels: labels }, (r) => void rows.push(r));
    const out = join(dir, `export-${seed}`);
    mkdirSync(out);
    const ex = await exportOpenMetrics(config, [g.file], { stepMs: 15_000, nowMs, labels, to: { dir: out }, version: 'test' });
    for (const f of ex.files) prometheus.backfill(f);
    const first = rows[0]?.timeMs as number;
    const last = rows.at(-1)?.timeMs as number;
    runs.push({ ...g, rows, result, range: { start: first / 1000, end: last / 1000, step: STEP_MS / 1000 } });
  }
  const pack = parse(renderPack(config).get('zero-plane.rules.yml') as string) as { groups: { name: string; rules: (RecordingRule | AlertingRule)[] }[] };
  // Every group's: the SLO recordings are a group of their own.
  const all = pack.groups.flatMap((g) => g.rules);
  const rules = all.filter((r): r is RecordingRule => 'record' in r);
  alerts = all.filter((r): r is AlertingRule => 'alert' in r);
  recorded = await prometheus.evaluateRules(
    rules,
    runs.map((r) => r.range),
  );
}, 540_000);

afterAll(async () => {
  await prometheus.stop();
});

/** One recorded rule's single series over seed run `i`, by timestamp (s). */
function recordedSeries(record: string, i: number): Map<number, number> {
  const matrices = [...recorded].filter(([rule]) => rule.record === record).map(([, per]) => per[i] as Matrix);
  expect(matrices).toHaveLength(1);
  const m = matrices[0] as Matrix;
  expect(m.length, `${record} has one series (seed ${runs[i]?.seed})`).toBeLessThanOrEqual(1);
  return new Map((m[0]?.values ?? []).map(([t, v]) => [t, Number(v)]));
}

describe('backtest against Prometheus 2.42 over the backfilled export, at exact thresholds with many series per group', () => {
  it('every seed ran, with many series per group and the spike firing alerts', () => {
    for (const r of runs) {
      expect(r.result.summary.records, `seed ${r.seed}`).toBeGreaterThan(15_000);
      expect(
        r.result.alerts.some((a) => a.intervals.length > 0),
        `seed ${r.seed}: something fires`,
      ).toBe(true);
    }
    expect(new Set(runs.map((r) => r.scenario.name)).size).toBe(SCENARIOS.length);
  });

  it("at every step every signal is Prometheus' value bit for bit (requests, hit requests, hit rate, above ceiling, p99 drift, degraded, warm-up)", () => {
    for (const [i, run] of runs.entries()) {
      const series = {
        requests: recordedSeries('zero_plane:requests:rate5m', i),
        hitCount: recordedSeries('zero_plane:request_duration_seconds_count:rate5m', i),
        hitRate: recordedSeries('zero_plane:hit_rate:ratio_rate5m', i),
        aboveCeiling: recordedSeries('zero_plane:latency_above_ceiling:ratio_rate5m', i),
        p99Drift: recordedSeries('zero_plane:p99_drift:ratio_rate5m', i),
        degraded: recordedSeries('zero_plane:degraded_requests:increase5m', i),
        warmupEfficiency: recordedSeries('zero_plane:warmup_efficiency:ratio_rate5m', i),
      };
      for (const row of run.rows) {
        const t = row.timeMs / 1000;
        const where = `seed ${run.seed} (${run.scenario.name}) at ${new Date(row.timeMs).toISOString()}`;
        const same = (ours: number | undefined, theirs: number | undefined, what: string) => {
          if (ours === undefined) expect(theirs === undefined || Number.isNaN(theirs), `${what}, ${where}: backtest none, Prometheus ${theirs}`).toBe(true);
          else expect(theirs, `${what}, ${where}`).toBe(ours);
        };
        const times300 = (v: number | undefined) => (v === undefined ? undefined : v * 300);
        same(row.requests, times300(series.requests.get(t)), 'requests');
        same(row.hitRequests, times300(series.hitCount.get(t)), 'hit requests');
        same(row.hitRate, series.hitRate.get(t), 'hit rate');
        same(row.aboveCeiling, series.aboveCeiling.get(t), 'above ceiling');
        same(row.p99Drift, series.p99Drift.get(t), 'p99 drift');
        same(row.degraded, series.degraded.get(t), 'degraded');
        same(row.warmupEfficiency, series.warmupEfficiency.get(t), 'warm-up efficiency');
      }
    }
  });

  it('the exact thresholds are decided by the last bit, both ways: a sum of counts would land on one side only', () => {
    // In the full windows of the exact phase, Prometheus' ratio is the threshold give or take the rounding of
    // its per-series sum: some steps above, some at or below. The backtest matched each (previous test).
    const sides = (record: string, scenario: string, op: '>' | '<', threshold: number) => {
      const seen = { holds: 0, not: 0 };
      for (const [i, run] of runs.entries()) {
        if (run.scenario.name !== scenario) continue;
        for (const [t, v] of recordedSeries(record, i)) {
          const step = (t * 1000 - run.startMs) / STEP_MS;
          if (step < 10 || step > 130) continue; // the full windows of the first exact phase
          expect(Math.abs(v - threshold), `seed ${run.seed} at ${t}`).toBeLessThan(1e-12);
          if (op === '>' ? v > threshold : v < threshold) seen.holds++;
          else seen.not++;
        }
      }
      expect(seen.holds, `${record} ${op} ${threshold}: ${JSON.stringify(seen)}`).toBeGreaterThan(0);
      expect(seen.not, `${record} ${op} ${threshold}: ${JSON.stringify(seen)}`).toBeGreaterThan(0);
    };
    sides('zero_plane:latency_above_ceiling:ratio_rate5m', 'above-ceiling at 1 %', '>', 0.01);
    sides('zero_plane:warmup_efficiency:ratio_rate5m', 'warm-up at 88 %', '<', 0.88);
    sides('zero_plane:hit_rate:ratio_rate5m', 'hit rate at 99.4 %', '<', 0.994);
  });

  it("every alert of every seed fires over exactly the intervals Prometheus' own expression, for: and keep_firing_for: give", async () => {
    let compared = 0;
    for (const run of runs) {
      for (const rule of alerts) {
        const outcomes = run.result.alerts.filter((a) => a.alert === rule.alert && ['long_window', 'short_window'].every((k) => a.labels[k] === rule.labels?.[k]));
        if (outcomes.length === 0) continue; // an alert on the exporter itself: not in a log
        const forS = (parseDuration(rule.for ?? '0s') ?? 0) / 1000;
        const keepS = (parseDuration(rule.keep_firing_for ?? '0s') ?? 0) / 1000;
        const matrix = await prometheus.queryRange(rule.expr, run.range);
        const where = `seed ${run.seed} (${run.scenario.name}), ${rule.alert}${JSON.stringify(rule.labels ?? {})}`;
        // Per cohort for the canary, else one series.
        const theirs = new Map<string, ReturnType<typeof firingIntervals>>();
        for (const s of matrix) theirs.set(s.metric['cohort'] ?? '', firingIntervals(new Set(s.values.map(([t]) => t)), run.range, forS, keepS));
        for (const o of outcomes) {
          const ours = o.intervals.map((x) => ({ pendingSince: x.pendingSinceMs / 1000, start: x.startMs / 1000, end: x.endMs === undefined ? null : x.endMs / 1000 }));
          expect(ours, `${where} ${o.labels['cohort'] ?? ''}`).toEqual(theirs.get(o.labels['cohort'] ?? '') ?? []);
          theirs.delete(o.labels['cohort'] ?? '');
          compared++;
        }
        for (const [cohort, intervals] of theirs) expect(intervals, `${where}: Prometheus has ${cohort} the backtest has not`).toEqual([]);
      }
    }
    expect(compared).toBeGreaterThan(runs.length * 10);
  }, 240_000);
});
