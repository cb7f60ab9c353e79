// The dashboards pass grafana/dashboard-linter's Prometheus rules (ported in test/helpers/dashboard-lint.ts),
// for the default config and for the kube-prometheus setting: every target filtered by job and instance,
// the instance variable, `.+` as All for job and instance, not editable. The port is shown to catch each
// of those on a dashboard broken on purpose.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig, type Config } from '../../../src/config/schema.js';
import { DASHBOARD_UIDS, renderDashboards } from '../../../src/dashboards/render-dashboards.js';
import { lintDashboard, type LintDashboard } from '../../helpers/dashboard-lint.js';

const KUBE = parseConfig('pack:\n  aggregationLabels: [cluster, namespace, job]\n  selector: \'job=~"llm-gateway.*", namespace="llm"\'\n', 'kube.yml');

function dashboardsOf(config: Config): LintDashboard[] {
  const files = renderDashboards(config);
  return DASHBOARD_UIDS.map((uid) => JSON.parse(files.get(`${uid}.json`) as string) as LintDashboard);
}

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

describe('dashboard-linter rules', () => {
  it.each([
    ['the default config', defaultConfig()],
    ['aggregationLabels [cluster, namespace, job] and a regex selector', KUBE],
  ])('%s: no finding, error or warning, on any dashboard', (_name, config) => {
    const boards = dashboardsOf(config);
    expect(boards).toHaveLength(3);
    const targets = boards.flatMap((d) => d.panels.flatMap((p) => [p, ...(p.panels ?? [])])).flatMap((p) => p.targets ?? []);
    expect(targets.length).toBeGreaterThan(60);
    expect(boards.flatMap(lintDashboard)).toEqual([]);
  });

  it('the kube-prometheus dashboards have cluster and namespace variables before job, and filter by them', () => {
    for (const d of dashboardsOf(KUBE)) {
      expect(d.templating.list.map((t) => t.name)).toEqual(['datasource', 'cluster', 'namespace', 'job', 'instance', 'model', 'route', 'cohort']);
      const exprs = d.panels.flatMap((p) => [p, ...(p.panels ?? [])]).flatMap((p) => p.targets ?? []).map((t) => t.expr ?? '');
      for (const e of exprs) expect(e).toContain('cluster=~"$cluster", namespace=~"$namespace", job=~"$job", instance=~"$instance"');
    }
  });

  it('catches each named defect on a dashboard broken on purpose', () => {
    const [overview] = dashboardsOf(defaultConfig());
    const broken = clone(overview as LintDashboard);
    broken.editable = true;
    broken.templating.list = broken.templating.list.filter((t) => t.name !== 'instance');
    const job = broken.templating.list.find((t) => t.name === 'job');
    if (job) job.allValue = '.*';
    const panel = broken.panels.find((p) => (p.targets ?? []).length > 0);
    const target = panel?.targets?.[0];
    if (!target) throw new Error('no target to break');
    target.expr = 'sum(rate(zero_plane_requests_total{job=~"$job"}[5m])) + zero_plane_requests_total{instance=~"$instance"}';
    const rules = new Set(lintDashboard(broken).map((f) => f.rule));
    expect([...rules].sort()).toEqual(
      ['target-counter-agg-rule', 'target-instance-rule', 'target-job-rule', 'target-rate-interval-rule', 'template-instance-rule', 'template-job-rule', 'uneditable-dashboard'].sort(),
    );
  });

  it('dashboards.editable: true makes them editable again (and the linter says so)', () => {
    const config = parseConfig('dashboards:\n  editable: true\n', 'e.yml');
    for (const d of dashboardsOf(config)) {
      expect(d.editable).toBe(true);
      expect(lintDashboard(d).map((f) => f.rule)).toEqual(['uneditable-dashboard']);
    }
  });
});
