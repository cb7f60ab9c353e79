// Every dashboard query, live: a real Prometheus on loopback scrapes the exporter (fed the fixture log
// continuously) and evaluates the alerting pack's rules; the rules and the dashboards are both generated
// from one short-window config, so the dashboards read the rule names Prometheus actually records.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { tempDir } from '../../helpers/temp-dir.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { DASHBOARD_UIDS, renderDashboards } from '../../../src/dashboards/render-dashboards.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { requireBinary } from '../../helpers/binaries.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { startPrometheus, type Daemon } from '../../helpers/processes.js';
import {
  allPanels,
  expand,
  FIXTURE_LOG,
  labelValuesSelector,
  legendLabels,
  queryPanels,
  type Dashboard,
  type Expansion,
} from '../../fixtures/dashboards/dashboards.js';

/** 10 s windows and 1 s evaluation, as the chain test uses; every threshold stays the default. */
const CONFIG_TEXT =
  'pack:\n  rateWindow: 10s\n  evaluationInterval: 1s\n  keepFiringFor: 0s\n  for: { p0: 0s, driftOutOfBand: 0s, canaryRollback: 0s, hitRateLow: 0s, degraded: 0s, warmupEfficiencyLow: 0s, optInMalformed: 0s, exporterDown: 0s, sourceStalled: 0s, parseErrorsHigh: 0s }\n';
/** What Grafana would substitute with a 1 s scrape interval over a short time range. */
const EXPANSION: Expansion = { rateInterval: '10s', interval: '2s', range: '30s', variableValue: '.+' };

/** The panels whose data this test requires, not just a successful query. */
const CORE_PANELS: Record<string, string[]> = {
  'zero-plane-overview': [
    'Hit rate',
    'p99 drift',
    'Degraded requests',
    'Warm-up efficiency',
    'P0: p99 above the ceiling with degraded requests',
    'Non-core calls paused',
    'p99 against the band',
    'Share of requests above the ceiling (exact)',
    'Requests: Zero-Plane hit vs fallback',
    'Hit rate burn rate per window',
    'Latency burn rate per window',
  ],
  'zero-plane-latency': ['Latency heatmap', 'p50 / p99 / p99.9 from the buckets', 'Window quantiles', 'p99: canary cohorts vs the rest'],
  'zero-plane-diagnostics': ['Downgrades by reason', 'Opt-in header states', 'Log lines read per source', 'Read lag'],
};

interface PromResponse {
  status: string;
  error?: string;
  data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

let dir: string;
let exporter: ServeProcess;
let prometheus: Daemon;
let promUrl: string;
let writer: NodeJS.Timeout | undefined;
let dashboards: Dashboard[];

async function promQuery(query: string): Promise<PromResponse> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(query)}`, { signal: AbortSignal.timeout(5_000) });
  return (await res.json()) as PromResponse;
}

async function promQueryAt(query: string, time: number): Promise<PromResponse> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(query)}&time=${time}`, { signal: AbortSignal.timeout(5_000) });
  return (await res.json()) as PromResponse;
}

beforeAll(async () => {
  const promBin = requireBinary('prometheus');
  dir = tempDir('zp-dash-live-');
  const config = parseConfig(CONFIG_TEXT, 'dashboards-live.yml');
  const configFile = join(dir, 'zp.yml');
  writeFileSync(configFile, CONFIG_TEXT);
  const rendered = renderDashboards(config);
  dashboards = DASHBOARD_UIDS.map((uid) => JSON.parse(rendered.get(`${uid}.json`) as string) as Dashboard);

  const log = join(dir, 'gateway.log');
  writeFileSync(log, '');
  exporter = await startServe([`--config.file=${configFile}`, log]);
  // The fixture log (hits, fallbacks, degraded, warm-up, cached, downgrades, opt-in states, a canary
  // cohort, a parse error) appended every 200 ms, so every rate has samples.
  const batch = readFileSync(FIXTURE_LOG, 'utf8');
  appendFileSync(log, batch);
  writer = setInterval(() => appendFileSync(log, batch), 200);

  const started = await startPrometheus(promBin, {
    dir,
    rules: renderPack(config).get('zero-plane.rules.yml') as string,
    scrapeTarget: exporter.url.replace('http://', ''),
  });
  promUrl = started.url;
  prometheus = started.daemon;
  // Rates need two scrapes inside the window, and the rules read the rates: wait for the last of the chain.
  await waitFor(async () => {
    const [warmup, drift] = await Promise.all([promQuery('zero_plane:warmup_efficiency:ratio_rate10s'), promQuery('zero_plane:p99_drift:ratio_rate10s')]);
    return warmup.data.result.length > 0 && drift.data.result.length > 0 ? true : undefined;
  }, 20_000, 'Prometheus to record the rules from the exporter');
}, 40_000);

afterAll(async () => {
  if (writer) clearInterval(writer);
  await Promise.allSettled([prometheus?.stop(), exporter?.stop('SIGKILL')]);
});

describe('dashboards against a live Prometheus', () => {
  it('the dashboards for this test compute the alerts\' signals over the same 10s window the rules use', () => {
    const exprs = dashboards.flatMap((d) => queryPanels(d).flatMap((p) => (p.targets ?? []).map((t) => t.expr)));
    expect(exprs.some((e) => e.includes('[10s]'))).toBe(true);
    expect(exprs.filter((e) => /zero_plane:[a-z_]+:/.test(e))).toEqual([]);
  });

  it('the per-job stats are exactly what the recording rules recorded (evaluated at the rule\'s own timestamp)', async () => {
    const o = dashboards.find((d) => d.uid === 'zero-plane-overview') as Dashboard;
    const statExpr = (title: string) => expand(allPanels(o).find((p) => p.title === title)?.targets?.[0]?.expr as string, EXPANSION);
    const pairs: [string, string][] = [
      ['Hit rate', 'zero_plane:hit_rate:ratio_rate10s'],
      ['Warm-up efficiency', 'zero_plane:warmup_efficiency:ratio_rate10s'],
      ['p99 drift', 'zero_plane:p99_drift:ratio_rate10s'],
    ];
    for (const [title, rule] of pairs) {
      // A recorded sample 3 s old: every scrape up to its timestamp is stored by now.
      const at = await waitFor(async () => (await promQueryAt(`timestamp(${rule})`, Date.now() / 1000 - 3)).data.result[0]?.value[1], 10_000, `${rule} 3 s ago`);
      const recorded = Number((await promQueryAt(rule, Number(at))).data.result[0]?.value[1]);
      const computed = Number((await promQueryAt(statExpr(title), Number(at))).data.result[0]?.value[1]);
      expect(Number.isFinite(recorded), rule).toBe(true);
      expect(computed, `${title} vs ${rule}`).toBeCloseTo(recorded, 9);
    }
  });

  it('every panel query runs via /api/v1/query without error (macros expanded, variables = All)', async () => {
    const failures: string[] = [];
    let count = 0;
    for (const d of dashboards) {
      for (const p of queryPanels(d)) {
        for (const t of p.targets ?? []) {
          count++;
          const r = await promQuery(expand(t.expr, EXPANSION));
          if (r.status !== 'success') failures.push(`${d.uid} / ${p.title} / ${t.refId}: ${r.error ?? r.status}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(count).toBeGreaterThan(40);
  });

  it('every variable’s label_values() selector finds series carrying its label', async () => {
    for (const d of dashboards) {
      for (const v of d.templating.list.filter((x) => x.type === 'query')) {
        const { selector, label } = labelValuesSelector(v.query);
        const q = expand(selector, EXPANSION);
        const res = await fetch(`${promUrl}/api/v1/label/${label}/values?match[]=${encodeURIComponent(q)}`, { signal: AbortSignal.timeout(5_000) });
        const body = (await res.json()) as { status: string; data: string[] };
        expect(body.status, `${d.uid} $${v.name}`).toBe('success');
        expect(body.data.length, `${d.uid} $${v.name}: no values for ${q}`).toBeGreaterThan(0);
      }
    }
  });

  it('the core panels return data, with every label their legends use', async () => {
    let checked = 0;
    for (const d of dashboards) {
      for (const title of CORE_PANELS[d.uid] ?? []) {
        const p = allPanels(d).find((x) => x.title === title);
        expect(p, `${d.uid} has no panel "${title}"`).toBeDefined();
        for (const t of p?.targets ?? []) {
          const series = await waitFor(async () => {
            const r = await promQuery(expand(t.expr, EXPANSION));
            return r.data.result.length > 0 ? r.data.result : undefined;
          }, 10_000, `data for ${d.uid} / ${title} / ${t.refId}`);
          for (const s of series) {
            for (const label of legendLabels(t.legendFormat)) {
              expect(s.metric[label], `${d.uid} / ${title} / ${t.refId}: series ${JSON.stringify(s.metric)} lacks ${label}`).toBeDefined();
            }
          }
          if (p?.type === 'heatmap') {
            expect(series.every((s) => Object.keys(s.metric).join() === 'le')).toBe(true);
            expect(series.map((s) => s.metric.le)).toEqual(expect.arrayContaining(['0.17575', '0.185', '0.19425', '+Inf']));
          }
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });

  it('beyond the core panels, every panel has data for the fixture log, except those that only show problems it does not have', async () => {
    // The error budget sums zero_plane_instance:slo_*:increase1h on a 1h subquery step, whose points sit on
    // whole hours: this minutes-old Prometheus has budget data only once an hour has turned while it ran.
    // All queries run at one instant; right after an hour turns, wait until every sample up to it is stored.
    const sinceHour = (Date.now() / 1000) % 3600;
    if (sinceHour < 20) await new Promise((r) => setTimeout(r, (20 - sinceHour) * 1000));
    const at = Date.now() / 1000;
    const empty: string[] = [];
    for (const d of dashboards) {
      for (const p of queryPanels(d)) {
        for (const t of p.targets ?? []) {
          const r = await promQueryAt(expand(t.expr, EXPANSION), at);
          if (r.data.result.length === 0) empty.push(`${d.uid} / ${p.title} / ${t.refId}`);
        }
      }
    }
    const hour = Math.floor(at / 3600) * 3600;
    const budgetSeen = (await promQueryAt('zero_plane_instance:slo_requests:increase1h', hour)).data.result.length > 0;
    const budget = [
      'zero-plane-overview / Hit rate budget left / A',
      'zero-plane-overview / Hit rate budget: time to exhaustion / A',
      'zero-plane-overview / Latency budget left / A',
      'zero-plane-overview / Latency budget: time to exhaustion / A',
    ];
    // The capacity panel's max_over_time(…[24h:STEP]) subquery has its points on whole multiples of its step, pack.rateWindow (10 s here),
    // the same way: it has data once such a point has passed with a rate to read, that is when the panel's own
    // query has data at the last whole step (every point before `at` is also one before that instant).
    const STEP_S = parseConfig(CONFIG_TEXT, 'dashboards-live.yml').pack.rateWindow / 1000;
    const capacityTitle = 'zero-plane-latency / Deterministic bandwidth demand / A';
    const capacityPanel = queryPanels(dashboards.find((d) => d.uid === 'zero-plane-latency') as Dashboard).find((p) => p.title === 'Deterministic bandwidth demand');
    const capacityExpr = capacityPanel?.targets?.[0]?.expr;
    expect(capacityExpr, 'the capacity panel and its query').toBeDefined();
    const capacitySeen = (await promQueryAt(expand(capacityExpr as string, EXPANSION), Math.floor(at / STEP_S) * STEP_S)).data.result.length > 0;
    // No label reaches its value limit, and the only source exists.
    // No probe job scrapes /probe here (test/live/probe/probe-prometheus.test.ts does): the probe row is empty.
    const probeRow = ['zero-plane-overview / Last probe served by Zero-Plane / A', 'zero-plane-overview / Probes answered, not by Zero-Plane (10s) / A', 'zero-plane-overview / Probe duration / A'];
    expect(empty).toEqual([...(budgetSeen ? [] : budget), ...probeRow, ...(capacitySeen ? [] : [capacityTitle]), 'zero-plane-diagnostics / Label overflow / A', 'zero-plane-diagnostics / Source errors / A']);
  });

  it('the overview stats show the fixture’s numbers, coloured as their thresholds say', async () => {
    const o = dashboards.find((d) => d.uid === 'zero-plane-overview') as Dashboard;
    /** The stat's first query, evaluated now, and the colour of its threshold step for that value. */
    const stat = async (title: string) => {
      const p = allPanels(o).find((x) => x.title === title);
      const r = await promQuery(expand(p?.targets?.[0]?.expr as string, EXPANSION));
      const value = Number(r.data.result[0]?.value[1]);
      const steps = p?.fieldConfig?.defaults.thresholds?.steps ?? [];
      const color = steps.filter((s) => s.value === null || value >= s.value).at(-1)?.color;
      return { value, color };
    };
    // Per batch: 22 requests, 19 Zero-Plane hits, 1 of them degraded at 250 ms (above the ceiling, 1/19 > 1 %),
    // 17 warm-up hits and 1 miss.
    const hitRate = await stat('Hit rate');
    expect(hitRate.value).toBeCloseTo(19 / 22, 1);
    expect(hitRate.color).toBe('red');
    const drift = await stat('p99 drift');
    expect(drift.value).toBeGreaterThan(0.05);
    expect(drift.color).toBe('red');
    const degraded = await stat('Degraded requests');
    expect(degraded.value).toBeGreaterThanOrEqual(1);
    expect(degraded.color).toBe('red');
    const warmup = await stat('Warm-up efficiency');
    expect(warmup.value).toBeCloseTo(17 / 18, 1);
    expect(warmup.color).toBe('green');
    expect(await stat('P0: p99 above the ceiling with degraded requests')).toEqual({ value: 1, color: 'red' });
    expect(await stat('Non-core calls paused')).toEqual({ value: 0, color: 'green' });
    // Burn rates: 3 fallbacks of 22 requests against the 0.6 % budget, 1 slow of 19 Zero-Plane requests
    // against the 1 % budget, the same over every window (the batch never changes).
    for (const [title, burn] of [['Hit rate burn rate per window', 3 / 22 / 0.006], ['Latency burn rate per window', 1 / 19 / 0.01]] as const) {
      const p = allPanels(o).find((x) => x.title === title);
      for (const t of p?.targets ?? []) {
        const r = await promQuery(expand(t.expr, EXPANSION));
        expect(Number(r.data.result[0]?.value[1]), `${title} ${t.legendFormat}`).toBeCloseTo(burn, 1);
      }
    }
  });
});
