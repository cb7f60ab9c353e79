// The committed dashboards are exactly the generator's output, and they are importable as Grafana 11 and 12
// expect: stable uids, no instance id, schemaVersion 41, unique panel ids and refIds, the `datasource`
// variable everywhere (no __inputs), explicit legends and heatmap colours, thresholds from the config.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tempDir } from '../../helpers/temp-dir.js';
import { writeFiles } from '../../../src/cli/write-files.js';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import {
  DASHBOARD_UIDS,
  GRAFANA_FOLDER,
  PROVISIONED_DASHBOARDS_PATH,
  renderDashboards,
} from '../../../src/dashboards/render-dashboards.js';
import { allPanels, queryPanels, VARIABLE_NAMES, type Dashboard, type Panel } from '../../fixtures/dashboards/dashboards.js';

const DASHBOARDS_DIR = fileURLToPath(new URL('../../../dashboards/', import.meta.url));
const DS = { type: 'prometheus', uid: '${datasource}' };
const UNITS = new Set(['s', 'percentunit', 'short', 'none', 'reqps', 'ops']);

const rendered = renderDashboards(defaultConfig());
const dashboards: Dashboard[] = DASHBOARD_UIDS.map((uid) => JSON.parse(rendered.get(`${uid}.json`) as string) as Dashboard);
const byUid = (uid: string) => dashboards.find((d) => d.uid === uid) as Dashboard;
const panelByTitle = (d: Dashboard, title: string) => {
  const p = allPanels(d).find((x) => x.title === title);
  if (!p) throw new Error(`${d.uid} has no panel "${title}"`);
  return p;
};
const steps = (p: Panel) => p.fieldConfig?.defaults.thresholds?.steps;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('dashboards/ is the generator output', () => {
  it('every committed file equals renderDashboards(defaultConfig()) and nothing else is there (regenerate: npx zero-plane-exporter generate)', () => {
    for (const [file, content] of rendered) {
      expect(readFileSync(join(DASHBOARDS_DIR, file), 'utf8'), `dashboards/${file} drifted from its generator`).toBe(content);
    }
    const committed = filesUnder(DASHBOARDS_DIR).map((p) => relative(DASHBOARDS_DIR, p).split('\\').join('/')).sort();
    expect(committed).toEqual([...rendered.keys()].sort());
  });

  it('JSON files are 2-space indented with a trailing newline', () => {
    for (const uid of DASHBOARD_UIDS) {
      const text = rendered.get(`${uid}.json`) as string;
      expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    }
  });

  it('generate\'s writeFiles(renderDashboards(config), dir) writes exactly those files', () => {
    const dir = tempDir('zp-dashboards-');
    const written = writeFiles(renderDashboards(defaultConfig()), dir);
    expect(written.map((p) => relative(dir, p).split('\\').join('/')).sort()).toEqual([...rendered.keys()].sort());
    for (const [file, content] of rendered) expect(readFileSync(join(dir, file), 'utf8')).toBe(content);
  });

  it('the same config always renders the same bytes', () => {
    expect(new Map(renderDashboards(defaultConfig()))).toEqual(rendered);
  });
});

describe('dashboards import into Grafana 11 and 12', () => {
  it('three dashboards: overview, latency, diagnostics', () => {
    expect(dashboards.map((d) => [d.uid, d.title])).toEqual([
      ['zero-plane-overview', 'Zero-Plane overview'],
      ['zero-plane-latency', 'Zero-Plane latency'],
      ['zero-plane-diagnostics', 'Zero-Plane diagnostics'],
    ]);
  });

  it('uid is at most 40 characters of [A-Za-z0-9_-], there is no top-level id, and schemaVersion is 41', () => {
    for (const d of dashboards) {
      expect(d.uid).toMatch(/^[A-Za-z0-9_-]{1,40}$/);
      expect('id' in d, `${d.uid} has an id`).toBe(false);
      expect(d.schemaVersion).toBe(41);
    }
  });

  it('no __inputs or __requires: the datasource is a variable, so provisioning and the sidecar work too', () => {
    for (const uid of DASHBOARD_UIDS) {
      const text = rendered.get(`${uid}.json`) as string;
      expect(text).not.toContain('__inputs');
      expect(text).not.toContain('__requires');
      expect(text).not.toMatch(/\$\{DS_/);
    }
  });

  it('panel ids are unique, rows’ nested panels included, and every panel and target reads ${datasource}', () => {
    for (const d of dashboards) {
      const ids = allPanels(d).map((p) => p.id);
      expect(ids.every((id) => Number.isInteger(id) && (id as number) > 0), `${d.uid}: ${ids.join(',')}`).toBe(true);
      expect(new Set(ids).size, `${d.uid} has duplicate panel ids`).toBe(ids.length);
      for (const p of queryPanels(d)) {
        expect(p.datasource, `${d.uid} / ${p.title}`).toEqual(DS);
        expect(p.targets?.length, `${d.uid} / ${p.title} has no query`).toBeGreaterThan(0);
        for (const t of p.targets ?? []) expect(t.datasource, `${d.uid} / ${p.title} / ${t.refId}`).toEqual(DS);
      }
    }
  });

  it('refIds are A, B, C… unique within each panel', () => {
    for (const d of dashboards) {
      for (const p of queryPanels(d)) {
        const refIds = (p.targets ?? []).map((t) => t.refId);
        expect(refIds, `${d.uid} / ${p.title}`).toEqual(refIds.map((_, i) => String.fromCharCode(65 + i)));
      }
    }
  });

  it('every panel has a title, a description and a unit from the allow-list', () => {
    for (const d of dashboards) {
      for (const p of queryPanels(d)) {
        expect(p.title.length).toBeGreaterThan(0);
        expect(p.description?.length ?? 0, `${d.uid} / ${p.title} has no description`).toBeGreaterThan(20);
        expect(UNITS, `${d.uid} / ${p.title}: unit ${p.fieldConfig?.defaults.unit}`).toContain(p.fieldConfig?.defaults.unit);
      }
    }
  });

  it('panels sit inside the 24-column grid without overlapping', () => {
    for (const d of dashboards) {
      const cells = new Set<string>();
      for (const p of allPanels(d)) {
        const { x, y, w, h } = p.gridPos;
        expect(x >= 0 && w > 0 && x + w <= 24 && h > 0, `${d.uid} / ${p.title}: ${JSON.stringify(p.gridPos)}`).toBe(true);
        for (let i = x; i < x + w; i++) {
          for (let j = y; j < y + h; j++) {
            expect(cells.has(`${i},${j}`), `${d.uid} / ${p.title} overlaps at ${i},${j}`).toBe(false);
            cells.add(`${i},${j}`);
          }
        }
      }
    }
  });

  it('variables: datasource (type prometheus), job and instance (All = .+), model, route, cohort (All = .*: no cohort is empty); multi, refreshed on time change', () => {
    for (const d of dashboards) {
      const vars = d.templating.list;
      expect(vars.map((v) => v.name)).toEqual(VARIABLE_NAMES);
      const [ds, ...filters] = vars;
      expect(ds).toMatchObject({ type: 'datasource', name: 'datasource', query: 'prometheus', label: 'Data source' });
      for (const v of filters) {
        const allValue = ['job', 'instance'].includes(v.name) ? '.+' : '.*';
        expect(v).toMatchObject({ type: 'query', datasource: DS, refresh: 2, multi: true, includeAll: true, allValue });
        expect(v.query).toMatch(new RegExp(`^label_values\\(.*, ${v.name}\\)$`));
      }
      // The job and instance variables list the exporter's own series only (pack.selector).
      expect(vars.find((v) => v.name === 'job')?.query).toBe('label_values(zero_plane_exporter_build_info{job="zero-plane-exporter"}, job)');
      expect(vars.find((v) => v.name === 'instance')?.query).toBe('label_values(zero_plane_exporter_build_info{job="zero-plane-exporter", job=~"$job"}, instance)');
    }
  });

  it('not editable (dashboards.editable, default false): provisioned dashboards change in the generator', () => {
    for (const d of dashboards) expect(d.editable, d.uid).toBe(false);
  });

  it('time series show their legends; heatmaps have a 64-step colour scheme and bucket-format queries', () => {
    for (const d of dashboards) {
      for (const p of queryPanels(d)) {
        if (p.type === 'timeseries') {
          expect((p.options?.legend as { showLegend?: boolean }).showLegend, `${d.uid} / ${p.title}`).toBe(true);
        }
        if (p.type === 'heatmap') {
          const color = p.options?.color as { mode: string; scheme: string; steps: number; exponent: number };
          expect(color.mode).toBe('scheme');
          expect(color.scheme).not.toBe('');
          expect(color.steps).toBeGreaterThan(0);
          expect(color.exponent).toBeGreaterThan(0);
          expect(p.options?.calculate).toBe(false);
          for (const t of p.targets ?? []) {
            expect(t.format).toBe('heatmap');
            expect(t.legendFormat).toBe('{{le}}');
            expect(t.expr).toMatch(/^sum by \(le\) \(rate\(zero_plane_request_duration_seconds_bucket\{/);
          }
        }
      }
    }
    expect(queryPanels(byUid('zero-plane-latency')).filter((p) => p.type === 'heatmap')).toHaveLength(1);
  });

  it('every threshold list starts with a null step', () => {
    for (const d of dashboards) {
      for (const p of queryPanels(d)) {
        const s = steps(p);
        if (s) expect(s[0]?.value, `${d.uid} / ${p.title}`).toBeNull();
      }
    }
  });
});

describe('thresholds and rule names come from the config', () => {
  it('the overview stats are coloured by the healthy thresholds of the default config', () => {
    const o = byUid('zero-plane-overview');
    const stat = (title: string) => {
      const p = panelByTitle(o, title);
      expect(p.type).toBe('stat');
      return p;
    };
    expect(stat('Hit rate').fieldConfig?.defaults.unit).toBe('percentunit');
    expect(steps(stat('Hit rate'))).toEqual([{ value: null, color: 'red' }, { value: 0.994, color: 'green' }]);
    expect(steps(stat('p99 drift'))).toEqual([
      { value: null, color: 'red' },
      { value: -0.05, color: 'green' },
      { value: 0.05, color: 'red' },
    ]);
    expect(steps(stat('Degraded requests'))).toEqual([{ value: null, color: 'green' }, { value: 1, color: 'red' }]);
    expect(stat('Degraded requests').fieldConfig?.defaults.unit).toBe('none');
    expect(steps(stat('Warm-up efficiency'))).toEqual([{ value: null, color: 'red' }, { value: 0.88, color: 'green' }]);
    const band = panelByTitle(o, 'p99 against the band');
    expect(band.fieldConfig?.defaults.unit).toBe('s');
    expect(steps(band)).toEqual([
      { value: null, color: 'transparent' },
      { value: 0.17575, color: 'green' },
      { value: 0.19425, color: 'red' },
    ]);
    expect(band.fieldConfig?.defaults.custom?.thresholdsStyle).toEqual({ mode: 'dashed' });
    expect(band.targets?.[0]?.expr).toBe(
      'histogram_quantile(0.99, sum by (job, le) (rate(zero_plane_request_duration_seconds_bucket{job="zero-plane-exporter", job=~"$job", instance=~"$instance", hit="true"}[$__rate_interval])))',
    );
    expect(panelByTitle(o, 'Share of requests above the ceiling (exact)').targets?.[0]?.expr).toContain('le="0.19425"');
  });

  it('the P0 panel evaluates the alert’s condition and guard (rendered from the same spec over the raw series); the gate panel reads zero_plane_noncore_paused', () => {
    const o = byUid('zero-plane-overview');
    const targets = panelByTitle(o, 'P0: p99 above the ceiling with degraded requests').targets ?? [];
    expect(targets).toHaveLength(1);
    const condition = targets[0]?.expr ?? '';
    expect(condition).toContain(' > 0.01)\nand on (job)\n(sum by (job) (increase(zero_plane_degraded_requests_total{job="zero-plane-exporter", job=~"$job", instance=~"$instance"}[5m])) > 0)');
    expect(condition).toContain('and on (job)\n(sum by (job) (increase(zero_plane_request_duration_seconds_count{job="zero-plane-exporter", job=~"$job", instance=~"$instance", hit="true"}[5m])) >= 200)');
    expect(panelByTitle(o, 'Non-core calls paused').targets?.[0]?.expr).toContain('zero_plane_noncore_paused{job="zero-plane-exporter", job=~"$job", instance=~"$instance"}');
  });

  it('the error-budget row: budget left and time to exhaustion per SLO from the hourly per-instance recordings, burn rate over every window of the burn-rate pairs', () => {
    const o = byUid('zero-plane-overview');
    for (const title of ['Hit rate', 'Latency']) {
      const left = panelByTitle(o, `${title} budget left`);
      expect(left.type).toBe('stat');
      expect(left.targets?.[0]?.expr).toMatch(/sum_over_time\(zero_plane_instance:slo_errors:increase1h\{job=~"\$job", instance=~"\$instance", slo="[a-z-]+"\}\[28d:1h\]\)/);
      const exhaustion = panelByTitle(o, `${title} budget: time to exhaustion`);
      expect(exhaustion.fieldConfig?.defaults.unit).toBe('s');
      expect(exhaustion.targets?.[0]?.expr).toContain('* 2419200');
      const burn = panelByTitle(o, `${title} burn rate per window`);
      expect(burn.type).toBe('bargauge');
      expect((burn.targets ?? []).map((t) => t.legendFormat)).toEqual(['5m', '30m', '1h', '2h', '6h', '1d', '3d'].map((w) => `{{job}} ${w}`));
      expect((burn.targets ?? []).every((t) => t.instant)).toBe(true);
      expect(steps(burn)).toEqual([{ value: null, color: 'green' }, { value: 0.933333333333, color: 'orange' }, { value: 5.6, color: 'red' }]);
    }
    expect(panelByTitle(o, 'Latency burn rate per window').targets?.[2]?.expr).toContain('[1h]');
    expect(panelByTitle(o, 'Latency burn rate per window').targets?.[2]?.expr).toContain(') / 0.01');
  });

  it('no panel reads a recording rule aggregated by job (it has no instance to filter by); only the hourly per-instance SLO recordings', () => {
    for (const d of dashboards) {
      for (const p of queryPanels(d)) {
        for (const t of p.targets ?? []) {
          for (const rule of t.expr.match(/zero_plane[a-z_]*:[a-z_0-9:]+/g) ?? []) {
            expect(rule, `${d.uid} / ${p.title}`).toMatch(/^zero_plane_instance:slo_(errors|requests):increase1h$/);
          }
        }
      }
    }
    const hitRate = panelByTitle(byUid('zero-plane-overview'), 'Hit rate (filtered)').targets?.[0]?.expr;
    const sel = 'job="zero-plane-exporter", job=~"$job", instance=~"$instance", model=~"$model", route=~"$route", cohort=~"$cohort"';
    expect(hitRate).toBe(
      `sum(rate(zero_plane_requests_total{${sel}, hit="true"}[$__rate_interval]))\n/\n` + `sum(rate(zero_plane_requests_total{${sel}}[$__rate_interval]))`,
    );
  });

  it('another config moves every threshold and renames every rule the dashboards read', () => {
    const config = parseConfig(
      'signals:\n  baselineSeconds: 0.2\n  tolerance: 0.1\n  hitRateTarget: 0.99\n  warmupEfficiencyTarget: 0.8\n  stableCohorts: [stable, ga.1]\npack:\n  rateWindow: 2m\n',
      'c.yml',
    );
    const files = renderDashboards(config);
    const o = JSON.parse(files.get('zero-plane-overview.json') as string) as Dashboard;
    expect(steps(panelByTitle(o, 'Hit rate'))?.[1]?.value).toBe(0.99);
    expect(steps(panelByTitle(o, 'p99 drift'))?.map((s) => s.value)).toEqual([null, -0.1, 0.1]);
    expect(steps(panelByTitle(o, 'Warm-up efficiency'))?.[1]?.value).toBe(0.8);
    expect(steps(panelByTitle(o, 'p99 against the band'))?.map((s) => s.value)).toEqual([null, 0.18, 0.22]);
    expect(panelByTitle(o, 'Hit rate').targets?.[0]?.expr).toContain('[2m]');
    const all = [...files.values()].join('\n');
    expect(all).not.toMatch(/0\.19425|0\.17575|0\.994/);
    const l = JSON.parse(files.get('zero-plane-latency.json') as string) as Dashboard;
    const canary = panelByTitle(l, 'p99: canary cohorts vs the rest').targets?.[0]?.expr;
    expect(canary).toContain('cohort!~"|stable|ga\\\\.1|__other__"');
    expect(panelByTitle(l, 'Share above the ceiling: canary cohorts vs the rest').targets?.[0]?.expr).toContain('le="0.22"');
  });
});

describe('provisioning and Kubernetes files', () => {
  it('each ConfigMap carries grafana_dashboard: "1" and embeds exactly the dashboard JSON', () => {
    for (const uid of DASHBOARD_UIDS) {
      const text = rendered.get(`kubernetes/${uid}.yaml`) as string;
      const cm = parse(text) as { apiVersion: string; kind: string; metadata: { name: string; labels: Record<string, unknown>; annotations: Record<string, string> }; data: Record<string, string> };
      expect(cm.apiVersion).toBe('v1');
      expect(cm.kind).toBe('ConfigMap');
      expect(cm.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      expect(cm.metadata.labels.grafana_dashboard).toBe('1');
      expect(text).toContain('grafana_dashboard: "1"');
      expect(cm.metadata.annotations.grafana_folder).toBe(GRAFANA_FOLDER);
      expect(Object.keys(cm.data)).toEqual([`${uid}.json`]);
      expect(cm.data[`${uid}.json`]).toBe(rendered.get(`${uid}.json`));
    }
  });

  it('the dashboard provider YAML parses and loads the JSON files into the Zero-Plane folder', () => {
    const doc = parse(rendered.get('provisioning/dashboards/zero-plane.yaml') as string) as {
      apiVersion: number;
      providers: { name: string; type: string; folder: string; options: { path: string; foldersFromFilesStructure: boolean } }[];
    };
    expect(doc.apiVersion).toBe(1);
    expect(doc.providers).toHaveLength(1);
    const p = doc.providers[0]!;
    expect(p.type).toBe('file');
    expect(p.folder).toBe(GRAFANA_FOLDER);
    expect(p.options.path).toBe(PROVISIONED_DASHBOARDS_PATH);
    expect(p.options.foldersFromFilesStructure).toBe(false);
    // The documented mount is dashboards/ at that path: the dashboard JSON files sit at its top level.
    const topLevelJson = readdirSync(DASHBOARDS_DIR).filter((f) => f.endsWith('.json')).sort();
    expect(topLevelJson).toEqual(DASHBOARD_UIDS.map((u) => `${u}.json`).sort());
  });

  it('the datasource YAML parses and provisions one Prometheus datasource', () => {
    const doc = parse(rendered.get('provisioning/datasources/prometheus.yaml') as string) as {
      apiVersion: number;
      datasources: { type: string; access: string; url: string; jsonData: { timeInterval: string } }[];
    };
    expect(doc.apiVersion).toBe(1);
    expect(doc.datasources).toHaveLength(1);
    expect(doc.datasources[0]).toMatchObject({ type: 'prometheus', access: 'proxy' });
    expect(doc.datasources[0]?.url).toMatch(/^https?:\/\//);
    expect(doc.datasources[0]?.jsonData.timeInterval).toMatch(/^\d+s$/);
  });
});
