// mixin/ for jsonnet users: Debian's jsonnet evaluates mixin/mixin.libsonnet, and what it gives is exactly
// what `generate` writes: the committed rules and dashboards for the default _config, and the pack for
// aggregationLabels [cluster, namespace, job] and a regex selector when _config says so (then promtool
// and the dashboard lint accept it too). mixin/generated/ is the generator's output.
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig, type Config } from '../../../src/config/schema.js';
import { DASHBOARD_UIDS, renderDashboards } from '../../../src/dashboards/render-dashboards.js';
import { renderMixin } from '../../../src/mixin/render-mixin.js';
import { ruleGroups } from '../../../src/pack/rules.js';
import { requireBinary } from '../../helpers/binaries.js';
import { lintDashboard, type LintDashboard } from '../../helpers/dashboard-lint.js';
import { tempDir } from '../../helpers/temp-dir.js';

const MIXIN = fileURLToPath(new URL('../../../mixin/', import.meta.url));
const ALERTS = fileURLToPath(new URL('../../../alerts/zero-plane.rules.yml', import.meta.url));
const DASHBOARDS = fileURLToPath(new URL('../../../dashboards/', import.meta.url));

interface MixinOutput {
  prometheusRules: { groups: { name: string; rules: unknown[] }[] };
  prometheusAlerts: { groups: { name: string; rules: unknown[] }[] };
  grafanaDashboards: Record<string, unknown>;
}

/** jsonnet's view of the mixin, with `config` (jsonnet source) added to _config; `jpath`/`path`: how it is imported. */
function evaluate(config = '{}', jpath = MIXIN, path = 'mixin.libsonnet'): MixinOutput {
  const jsonnet = requireBinary('jsonnet');
  const code = `local m = (import "${path}") + { _config+:: ${config} };
{ prometheusRules: m.prometheusRules, prometheusAlerts: m.prometheusAlerts, grafanaDashboards: m.grafanaDashboards }`;
  const r = spawnSync(jsonnet, ['-J', jpath, '-e', code], { encoding: 'utf8', timeout: 20_000, maxBuffer: 64 * 1024 * 1024 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as MixinOutput;
}

/** The generator's rules and dashboards for `config`, as JSON values (what jsonnet compares with). */
function generated(config: Config) {
  const files = renderDashboards(config);
  return {
    groups: JSON.parse(JSON.stringify(ruleGroups(config))) as unknown[],
    dashboards: Object.fromEntries(DASHBOARD_UIDS.map((uid) => [`${uid}.json`, JSON.parse(files.get(`${uid}.json`) as string) as unknown])),
  };
}

// Each evaluate() is one jsonnet run of ~0.3 CPU-seconds (`/usr/bin/time jsonnet -J mixin -e …` measures
// it; it was 2.4–3.5 s while mixin.libsonnet used std.format, std.rstripChars, std.escapeStringJson and
// filtered comprehensions, which are jsonnet code in 0.18). At load 12 on 2 cores a run gets a sixth of a
// core: ~2 s, and promtool's check as much again, well inside the default 20 s.
describe('mixin/', () => {
  it('mixin/generated/ is exactly what `generate` makes from the default config (regenerate: npx zero-plane-exporter generate)', () => {
    const rendered = renderMixin(defaultConfig());
    for (const [file, content] of rendered) expect(readFileSync(join(MIXIN, file), 'utf8'), `mixin/${file} drifted from its generator`).toBe(content);
    expect(readdirSync(join(MIXIN, 'generated')).sort()).toEqual([...rendered.keys()].map((f) => f.replace('generated/', '')).sort());
  });

  it('with the default _config, jsonnet gives the committed rules (recording and alerting groups) and dashboards', () => {
    const out = evaluate();
    const committed = parse(readFileSync(ALERTS, 'utf8')) as { groups: unknown[] };
    expect([...out.prometheusRules.groups, ...out.prometheusAlerts.groups]).toEqual(committed.groups);
    expect(out.prometheusAlerts.groups.map((g) => g.name)).toEqual(['zero-plane.alerts']);
    expect(Object.keys(out.grafanaDashboards).sort()).toEqual(DASHBOARD_UIDS.map((u) => `${u}.json`).sort());
    for (const uid of DASHBOARD_UIDS) {
      expect(out.grafanaDashboards[`${uid}.json`], uid).toEqual(JSON.parse(readFileSync(join(DASHBOARDS, `${uid}.json`), 'utf8')));
    }
  });

  it('_config { aggregationLabels: [cluster, namespace, job], selector, runbookUrl } gives what `generate` writes for that config', () => {
    const out = evaluate(`{ aggregationLabels: ['cluster', 'namespace', 'job'], selector: 'job=~"llm-gateway.*", namespace="llm"', runbookUrl: 'https://wiki.example.internal/zero-plane' }`);
    const config = parseConfig(
      'pack:\n  aggregationLabels: [cluster, namespace, job]\n  selector: \'job=~"llm-gateway.*", namespace="llm"\'\n  runbookUrl: https://wiki.example.internal/zero-plane\n',
      'kube.yml',
    );
    const expected = generated(config);
    expect([...out.prometheusRules.groups, ...out.prometheusAlerts.groups]).toEqual(expected.groups);
    expect(out.grafanaDashboards).toEqual(expected.dashboards);
    // And it is valid: promtool (lint fatal) on the rules, the dashboard lint on the dashboards.
    const file = join(tempDir('zp-mixin-'), 'rules.json');
    writeFileSync(file, JSON.stringify({ groups: [...out.prometheusRules.groups, ...out.prometheusAlerts.groups] }));
    const r = spawnSync(requireBinary('promtool'), ['check', 'rules', '--lint=all', '--lint-fatal', file], { encoding: 'utf8', timeout: 30_000 });
    expect(`${r.stdout}${r.stderr}`).toContain(`SUCCESS: ${expected.groups.flatMap((g) => (g as { rules: unknown[] }).rules).length} rules found`);
    for (const d of Object.values(out.grafanaDashboards)) expect(lintDashboard(d as LintDashboard)).toEqual([]);
  });

  it('_config thresholds (band, hit-rate and warm-up targets, minRequests, early warnings, SLO objectives) change the rules and dashboards as `generate` would', () => {
    const thresholds = {
      baselineSeconds: 0.2,
      tolerance: 0.1,
      hitRateTarget: 0.99,
      warmupEfficiencyTarget: 0.85,
      minRequests: 500,
      warmupDrop: 0.01,
      driftAbove: 0.07,
      hitRateObjective: 0.995,
      latencyObjective: 0.999,
    };
    const out = evaluate(JSON.stringify(thresholds));
    const config = parseConfig(
      'signals:\n  baselineSeconds: 0.2\n  tolerance: 0.1\n  hitRateTarget: 0.99\n  warmupEfficiencyTarget: 0.85\npack:\n  earlyWarning: { warmupDrop: 0.01, driftAbove: 0.07 }\nalerts:\n  minRequests: 500\nslos:\n  hitRate: { objective: 0.995 }\n  latency: { objective: 0.999 }\n',
      'tuned.yml',
    );
    const expected = generated(config);
    expect([...out.prometheusRules.groups, ...out.prometheusAlerts.groups]).toEqual(expected.groups);
    expect(out.grafanaDashboards).toEqual(expected.dashboards);
    // And they did change: the new numbers are in the rules, the defaults' are not.
    const text = JSON.stringify([out.prometheusRules, out.prometheusAlerts]);
    expect(text).toContain('>= 500)');
    expect(text).not.toContain('>= 200)');
    expect(text).toContain('le=\\"0.22\\"');
    expect(text).not.toContain('0.19425');
    expect(text).toContain('vector(0.001)');
    expect(text).toContain('zero_plane:hit_rate:ratio_rate5m < 0.99)');
    expect(text).toContain('zero_plane:warmup_efficiency:ratio_rate7d - 0.01)');
    expect(text).toContain('zero_plane:p99_drift:ratio_rate1h > 0.07)');
    expect(text).not.toContain('- 0.005)');
  });

  it('a _config threshold that is not a number is refused by name', () => {
    const r = spawnSync(requireBinary('jsonnet'), ['-J', MIXIN, '-e', `((import "mixin.libsonnet") + { _config+:: { minRequests: "many" } }).prometheusAlerts`], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('_config: not a number: minRequests');
  });

  it('vendored where `jb install github.com/zero-plane/zero-plane-exporter/mixin` puts it, it imports by that path', () => {
    const manifest = JSON.parse(readFileSync(join(MIXIN, 'jsonnetfile.json'), 'utf8')) as { version: number; dependencies: unknown[] };
    expect(manifest).toMatchObject({ version: 1, dependencies: [] });
    const vendor = join(tempDir('zp-mixin-vendor-'), 'vendor');
    const target = join(vendor, 'github.com/zero-plane/zero-plane-exporter/mixin');
    cpSync(MIXIN, target, { recursive: true });
    const out = evaluate('{}', vendor, 'github.com/zero-plane/zero-plane-exporter/mixin/mixin.libsonnet');
    const committed = parse(readFileSync(ALERTS, 'utf8')) as { groups: unknown[] };
    expect([...out.prometheusRules.groups, ...out.prometheusAlerts.groups]).toEqual(committed.groups);
  });

  it('the template is really tokenised: no aggregation label, selector, runbook URL or threshold of the generating config in the rules', () => {
    const rules = readFileSync(join(MIXIN, 'generated/prometheus_rules.json'), 'utf8') + readFileSync(join(MIXIN, 'generated/prometheus_alerts.json'), 'utf8');
    expect(rules).not.toContain('job="zero-plane-exporter"');
    expect(rules).not.toMatch(/by \(job/);
    expect(rules).not.toContain('github.com');
    expect(rules).toContain('@@by@@');
    for (const threshold of ['0.19425', '0.17575', '194.25 ms', '>= 200', '0.994', '99.4 %', '0.0336']) expect(rules).not.toContain(threshold);
    expect(rules).toContain('@@ceiling.plain@@');
  });
});
