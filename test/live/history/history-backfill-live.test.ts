// The history commands proven against Prometheus itself. A held-out log (a healthy hour, 40 minutes of
// drift with degraded requests, an hour of recovery; two files, the second gzip, given in reverse order,
// with unusable lines) goes through `backtest` on one side and `export` → `promtool tsdb create-blocks-from
// openmetrics` → a real Prometheus 2.42 on the other. The generated recording rules are evaluated by
// Prometheus over the whole range (query_range on the rules' 30 s grid, one dependency level at a time,
// each level's results backfilled before the next), and at every step of the backtest its hit rate,
// above-ceiling share and degraded increase equal Prometheus' bit for bit. The P0's own
// expression, evaluated by Prometheus, holds exactly where the backtest's P0 is pending or firing, and its
// for: and keep_firing_for: give the backtest's firing interval; the shipped dashboard's P0 panel agrees.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseDuration } from '../../../src/config/duration.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { DASHBOARD_UIDS, renderDashboards } from '../../../src/dashboards/render-dashboards.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { runCliToFile } from '../../helpers/cli-process.js';
import { heldOutLog } from '../../helpers/held-out-log.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { allPanels, expand, type Dashboard } from '../../fixtures/dashboards/dashboards.js';
import { BackfilledPrometheus, firingIntervals, type AlertingRule, type Matrix, type RecordingRule } from './backfilled-prometheus.js';

const dir = tempDir('zp-backfill-');
const STEP_S = 30;

interface Row {
  time: string;
  requests: number | null;
  hitRequests: number | null;
  hitRate: number | null;
  aboveCeiling: number | null;
  p99Drift: number | null;
  degraded: number | null;
  warmupEfficiency: number | null;
}
interface Backtest {
  steps: Row[];
  skipped: Record<string, number>;
  records: number;
  alerts: { name: string; for: string; keepFiringFor: string; intervals: { pendingSince: string; start: string; end: string | null }[] }[];
  firstP0: { start: string; end: string | null } | null;
}

const prometheus = new BackfilledPrometheus(dir);
let backtest: Backtest;
let alerts: AlertingRule[];
let start = 0;
let end = 0;
const queryRange = (expr: string) => prometheus.queryRange(expr, { start, end, step: STEP_S });

/** One series' values by timestamp (seconds); NaN kept as NaN. */
function byTime(matrix: Matrix): Map<number, number> {
  expect(matrix.length).toBeLessThanOrEqual(1);
  return new Map((matrix[0]?.values ?? []).map(([t, v]) => [t, Number(v)]));
}

beforeAll(async () => {
  const config = defaultConfig();
  const log = heldOutLog({ bad: true });
  const half = Math.floor(log.lines.length / 2);
  const first = join(dir, 'gateway.log.1');
  const second = join(dir, 'gateway.log.gz');
  writeFileSync(first, `${log.lines.slice(0, half).join('\n')}\n`);
  writeFileSync(second, gzipSync(`${log.lines.slice(half).join('\n')}\n`));

  const bt = runCliToFile(['backtest', '--format', 'json', second, first], join(dir, 'backtest.json'));
  expect(bt.code, bt.stderr).toBe(0);
  backtest = JSON.parse(readFileSync(join(dir, 'backtest.json'), 'utf8')) as Backtest;
  const ex = runCliToFile(['export', '--format', 'openmetrics', second, first], join(dir, 'export.om'));
  expect(ex.code, ex.stderr).toBe(0);
  prometheus.backfill(join(dir, 'export.om'));

  const pack = parse(renderPack(config).get('zero-plane.rules.yml') as string) as { groups: { name: string; rules: (RecordingRule | AlertingRule)[] }[] };
  const rules = (pack.groups.find((g) => g.name === 'zero-plane.rules')?.rules ?? []) as RecordingRule[];
  alerts = (pack.groups.find((g) => g.name === 'zero-plane.alerts')?.rules ?? []) as AlertingRule[];
  start = Date.parse(backtest.steps[0]?.time as string) / 1000;
  end = Date.parse(backtest.steps.at(-1)?.time as string) / 1000;

  // Level by level: Prometheus evaluates each rule over the range, its results are backfilled, and
  // Prometheus restarts on the blocks so the next level reads them.
  await prometheus.evaluateRules(rules, [{ start, end, step: STEP_S }]);
}, 240_000);

afterAll(async () => {
  await prometheus.stop();
});

describe('backtest and export against Prometheus 2.42 (promtool backfill, the generated rules)', () => {
  it('the held-out log is read with its unusable lines counted, and its timeline is 30 s steps', () => {
    expect(backtest.skipped).toMatchObject({ noTimestamp: 3, farOut: 2, late: 0 });
    expect(backtest.records).toBe(heldOutLog().lines.length);
    expect(end - start).toBe((backtest.steps.length - 1) * STEP_S);
    expect(start % STEP_S).toBe(0);
  });

  it("at every step the four signals, the share above the ceiling and the traffic guard are Prometheus' bit for bit", async () => {
    const series = async (q: string) => byTime(await queryRange(q));
    const hitRate = await series('zero_plane:hit_rate:ratio_rate5m');
    const above = await series('zero_plane:latency_above_ceiling:ratio_rate5m');
    const degraded = await series('zero_plane:degraded_requests:increase5m');
    const hitCount = await series('zero_plane:request_duration_seconds_count:rate5m * 300');
    const drift = await series('zero_plane:p99_drift:ratio_rate5m');
    const warmup = await series('zero_plane:warmup_efficiency:ratio_rate5m');
    let compared = 0;
    // The first step is the timeline's first sample: a rate needs two.
    for (const row of backtest.steps.slice(1)) {
      const t = Date.parse(row.time) / 1000;
      const at = (m: Map<number, number>, what: string) => {
        const v = m.get(t);
        expect(v, `${what} at ${row.time}`).toBeDefined();
        return v as number;
      };
      expect(at(degraded, 'degraded'), row.time).toBe(row.degraded);
      expect(at(hitCount, 'hit requests'), row.time).toBe(row.hitRequests);
      for (const [m, value, what] of [
        [hitRate, row.hitRate, 'hit rate'],
        [above, row.aboveCeiling, 'above ceiling'],
        [drift, row.p99Drift, 'p99 drift'],
        [warmup, row.warmupEfficiency, 'warm-up efficiency'],
      ] as const) {
        const v = at(m, what);
        if (value === null) expect(Number.isNaN(v), `${what} at ${row.time}`).toBe(true);
        else expect(v, `${what} at ${row.time}`).toBe(value);
      }
      compared++;
    }
    expect(compared).toBe(backtest.steps.length - 1);
    // The story is in the data: degraded requests and p99 above the ceiling in the drift, none before.
    expect(Math.max(...backtest.steps.map((r) => r.degraded ?? 0))).toBeGreaterThan(0);
    expect(backtest.steps.slice(1, 100).every((r) => r.degraded === 0 && (r.aboveCeiling ?? 0) < 0.01)).toBe(true);
  });

  it("the P0 expression holds in Prometheus exactly where the backtest's P0 is pending or firing, and its for: / keep_firing_for: give the same interval", async () => {
    const rule = alerts.find((a) => a.alert === 'ZeroPlaneP0DriftWithDegraded') as AlertingRule;
    const holds = new Set((await queryRange(rule.expr)).flatMap((s) => s.values.map(([t]) => t)));
    const forS = (parseDuration(rule.for ?? '0s') ?? 0) / 1000;
    const keepS = (parseDuration(rule.keep_firing_for ?? '0s') ?? 0) / 1000;
    expect(forS).toBe(120);
    expect(keepS).toBe(300);
    // Prometheus' alert states over the evaluation steps (rules/alerting.go), on Prometheus' own results.
    const intervals = firingIntervals(holds, { start, end, step: STEP_S }, forS, keepS);
    const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
    const p0 = backtest.alerts.find((a) => a.name === 'ZeroPlaneP0DriftWithDegraded');
    expect(p0?.intervals.map((i) => ({ pendingSince: i.pendingSince, start: i.start, end: i.end }))).toEqual(
      intervals.map((i) => ({ pendingSince: iso(i.pendingSince), start: iso(i.start), end: i.end === null ? null : iso(i.end) })),
    );
    expect(intervals).toHaveLength(1);
    expect(backtest.firstP0?.start).toBe(iso((intervals[0] as { start: number }).start));
    // It fired in the drift (from 01:00), not in the healthy hour, and resolved in the recovery.
    expect(Date.parse(backtest.firstP0?.start as string)).toBeGreaterThan(Date.UTC(2024, 4, 7, 1, 0, 0));
    expect(Date.parse(backtest.firstP0?.end as string)).toBeLessThan(Date.UTC(2024, 4, 7, 2, 0, 0));
  });

  it("the shipped overview dashboard, on the backfilled blocks, shows the P0 at the same steps and the backtest's hit rate", async () => {
    const overview = JSON.parse(renderDashboards(defaultConfig()).get(`${DASHBOARD_UIDS[0]}.json`) as string) as Dashboard;
    const panel = (title: string) =>
      expand(allPanels(overview).find((p) => p.title === title)?.targets?.[0]?.expr as string, { rateInterval: '1m', interval: '30s', range: '1h', variableValue: '.+' });
    const p0Panel = new Set((await queryRange(panel('P0: p99 above the ceiling with degraded requests'))).flatMap((s) => s.values.filter(([, v]) => Number(v) > 0).map(([t]) => t)));
    const rule = alerts.find((a) => a.alert === 'ZeroPlaneP0DriftWithDegraded') as AlertingRule;
    const p0Rule = new Set((await queryRange(rule.expr)).flatMap((s) => s.values.map(([t]) => t)));
    expect([...p0Panel].sort()).toEqual([...p0Rule].sort());
    expect(p0Panel.size).toBeGreaterThan(0);
    const hitRate = byTime(await queryRange(panel('Hit rate')));
    for (const row of backtest.steps.slice(1)) {
      const v = hitRate.get(Date.parse(row.time) / 1000) as number;
      if (row.hitRate === null) expect(v === undefined || Number.isNaN(v)).toBe(true);
      else expect(Math.abs(v - row.hitRate), row.time).toBeLessThan(1e-9);
    }
  });
});
