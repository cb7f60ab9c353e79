// Every dashboard query is valid PromQL (lezer-promql for syntax, promtool for types) once Grafana's macros
// and variables are expanded, and reads only metrics that exist: in a real scrape of the exporter fed the
// fixture log, as a recording rule of the committed alerting pack, or as a Prometheus built-in.
import { spawnSync } from 'node:child_process';
import { tempDir } from '../../helpers/temp-dir.js';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { defaultConfig } from '../../../src/config/schema.js';
import * as probeSeries from '../../../src/metrics/probe-names.js';
import { DASHBOARD_UIDS, renderDashboards } from '../../../src/dashboards/render-dashboards.js';
import { requireBinary } from '../../helpers/binaries.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import {
  checkPromql,
  expand,
  FIXTURE_LOG,
  labelValuesSelector,
  queryPanels,
  variablesUsed,
  VARIABLE_NAMES,
  type Dashboard,
} from '../../fixtures/dashboards/dashboards.js';

const RULES_FILE = fileURLToPath(new URL('../../../alerts/zero-plane.rules.yml', import.meta.url));
const BUILTINS = new Set(['ALERTS', 'ALERTS_FOR_STATE', 'up']);
/** What GET /probe answers (the probe row reads the probe job's series, not /metrics'). */
const PROBE_SERIES = new Set<string>(Object.values(probeSeries));

const rendered = renderDashboards(defaultConfig());
const dashboards = DASHBOARD_UIDS.map((uid) => JSON.parse(rendered.get(`${uid}.json`) as string) as Dashboard);

interface Query {
  where: string;
  expr: string;
  record: string;
}

/** Every panel query and every variable's label_values() selector, with where it comes from. */
const queries: Query[] = dashboards.flatMap((d) => {
  const slug = d.uid.replace(/-/g, '_');
  return [
    ...queryPanels(d).flatMap((p) =>
      (p.targets ?? []).map((t) => ({ where: `${d.uid} / ${p.title} / ${t.refId}`, expr: t.expr, record: `dashboard:${slug}:panel${p.id}_${t.refId}` })),
    ),
    ...d.templating.list
      .filter((v) => v.type === 'query')
      .map((v) => ({ where: `${d.uid} / $${v.name}`, expr: labelValuesSelector(v.query).selector, record: `dashboard:${slug}:var_${v.name}` })),
  ];
});

let exporter: ServeProcess;
let scrapedNames: Set<string>;

beforeAll(async () => {
  const dir = tempDir('zp-dash-q-');
  const log = join(dir, 'gateway.log');
  writeFileSync(log, '');
  // A second, missing source makes zero_plane_exporter_source_errors_total appear.
  exporter = await startServe([log, join(dir, 'missing.log')]);
  appendFileSync(log, readFileSync(FIXTURE_LOG, 'utf8'));
  const text = await waitFor(async () => {
    const body = await (await fetch(`${exporter.url}/metrics`)).text();
    const ready =
      /^zero_plane_exporter_parse_errors_total\{reason="invalid_json"\} 1$/m.test(body) &&
      /^zero_plane_window_latency_stddev_seconds /m.test(body) &&
      /^zero_plane_exporter_source_errors_total\{/m.test(body) &&
      /^zero_plane_exporter_header_parse_errors_total\{/m.test(body);
    return ready ? body : undefined;
  }, 10_000, 'the exporter to expose the fixture log');
  scrapedNames = new Set(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)?.[0] as string),
  );
});

afterAll(async () => {
  await exporter?.stop('SIGKILL');
});

describe('dashboard queries', () => {
  it('there are queries to check: every panel of every dashboard, and the variables', () => {
    expect(queries.length).toBeGreaterThan(50);
  });

  it('every expr parses with lezer-promql (no error nodes) after expanding macros and variables', () => {
    const failures = queries.flatMap((q) => {
      const errors = checkPromql(expand(q.expr)).errors;
      return errors.length ? [`${q.where}: ${JSON.stringify(errors)}\n${q.expr}`] : [];
    });
    expect(failures).toEqual([]);
  });

  it('the expansion is not what makes them parse: a broken query is caught', () => {
    expect(checkPromql(expand('sum(rate(zero_plane_requests_total{job=~"$job"}[$__rate_interval])')).errors).not.toEqual([]);
    expect(checkPromql('rate(zero_plane_requests_total[$__rate_interval])').errors).not.toEqual([]);
    expect(() => expand('up{job=~"$nosuchvar"}')).toThrow(/undefined variable/);
  });

  it('every expr type-checks with promtool (as recording rules)', () => {
    const promtool = requireBinary('promtool');
    const file = join(tempDir('zp-dash-promtool-'), 'dashboard-queries.yml');
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard-queries', rules: queries.map((q) => ({ record: q.record, expr: expand(q.expr) })) }] }));
    const r = spawnSync(promtool, ['check', 'rules', file], { encoding: 'utf8', timeout: 30_000 });
    expect(`${r.stdout}${r.stderr}`).toContain(`SUCCESS: ${queries.length} rules found`);
    expect(r.status).toBe(0);
  });

  it('every metric a query reads is in a real /metrics scrape, a recording rule of alerts/zero-plane.rules.yml, a /probe series, or a built-in', () => {
    const rules = parse(readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: { record?: string }[] }[] };
    const recorded = new Set(rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.record ? [r.record] : []))));
    const used = new Set<string>();
    const unknown = queries.flatMap((q) =>
      checkPromql(expand(q.expr)).metrics.flatMap((m) => {
        used.add(m);
        return scrapedNames.has(m) || recorded.has(m) || BUILTINS.has(m) || PROBE_SERIES.has(m) ? [] : [`${q.where}: ${m}`];
      }),
    );
    expect(unknown).toEqual([]);
    // The check has teeth: the dashboards read raw series, recording rules and built-ins alike.
    expect([...used].filter((m) => recorded.has(m)).length).toBe(2);
    expect([...used].filter((m) => scrapedNames.has(m)).length).toBeGreaterThan(15);
    expect(used.has('up')).toBe(true);
  });

  it('the only recording rules a dashboard reads are the per-instance hourly SLO increases (every other rule has lost `instance`)', () => {
    const ruleNamesUsed = new Set(queries.flatMap((q) => checkPromql(expand(q.expr)).metrics.filter((m) => m.includes(':'))));
    expect([...ruleNamesUsed].sort()).toEqual(['zero_plane_instance:slo_errors:increase1h', 'zero_plane_instance:slo_requests:increase1h']);
  });

  it('rate() uses $__rate_interval; a fixed window is an increase() over a window the alerts use (5m, the burn-rate windows) or the budget period', () => {
    const ranges = queries.flatMap((q) => [...q.expr.matchAll(/(\w+)\(([^()]*?)\[([^\]]*)\]/g)].map((m) => ({ fn: m[1] as string, range: m[3] as string, where: q.where })));
    expect(ranges.length).toBeGreaterThan(30);
    const alertWindows = new Set(['5m', '30m', '1h', '2h', '6h', '1d', '3d']);
    const bad = ranges.filter(({ fn, range }) => {
      if (range === '$__rate_interval') return false;
      if (fn === 'increase') return !(range === '$__range' || alertWindows.has(range));
      if (fn === 'sum_over_time') return range !== '28d:1h';
      // The probe row's fallback share: the window of the rule ZeroPlaneProbeFallback reads.
      if (fn === 'avg_over_time') return !alertWindows.has(range);
      return true;
    });
    expect(bad).toEqual([]);
    expect(ranges.filter((r) => r.fn === 'rate').every((r) => r.range === '$__rate_interval')).toBe(true);
  });

  it('counters and histogram series (_total, _bucket, _count) are only read through rate() or increase()', () => {
    const raw = queries
      .filter((q) => !q.where.includes(' / $'))
      .flatMap((q) => checkPromql(expand(q.expr)).instantSelectors.filter((m) => /_(total|bucket|count)$/.test(m)).map((m) => `${q.where}: ${m}`));
    expect(raw).toEqual([]);
  });

  it('queries only use the dashboard variables job, instance, model, route and cohort', () => {
    const used = new Set(queries.flatMap((q) => variablesUsed(q.expr)));
    expect([...used].every((v) => VARIABLE_NAMES.includes(v)), [...used].join(', ')).toBe(true);
    expect([...used].sort()).toEqual(['cohort', 'instance', 'job', 'model', 'route']);
  });
});
