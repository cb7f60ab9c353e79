// The committed alerting pack is exactly what the generator makes from the default config, and it is
// valid for the real tools: promtool for the rules (plain and as a PrometheusRule), amtool for routing.
import { spawnSync } from 'node:child_process';
import { tempDir } from '../../helpers/temp-dir.js';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { alertSpecs } from '../../../src/pack/alert-specs.js';
import { groupingOf } from '../../../src/pack/grouping.js';
import { ALERT_NAMES, EARLY_WARNING_ALERT_NAMES, PROBE_FALLBACK_ALERT, MORE_ALERT_NAMES, ruleGroups } from '../../../src/pack/rules.js';
import { renderMixin } from '../../../src/mixin/render-mixin.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { renderDashboards } from '../../../src/dashboards/render-dashboards.js';
import { renderDeploy } from '../../../src/deploy/render-deploy.js';
import { requireBinary } from '../../helpers/binaries.js';
import { runCli } from '../../helpers/cli-process.js';

const ALERTS_DIR = fileURLToPath(new URL('../../../alerts/', import.meta.url));

function run(bin: string, args: string[]) {
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('alerting pack', () => {
  it('alerts/ is exactly what `generate` makes from the default config (regenerate: npx zero-plane-exporter generate)', () => {
    for (const [file, content] of renderPack(defaultConfig())) {
      expect(readFileSync(join(ALERTS_DIR, file), 'utf8'), `alerts/${file} drifted from its generator`).toBe(content);
    }
  });

  it('`generate --out.root DIR` writes the same files under DIR, and nothing anywhere else', () => {
    const dir = tempDir('zp-pack-');
    const cwd = tempDir('zp-pack-cwd-');
    const r = runCli(['generate', '--out.root', dir, '--log.level=warn'], undefined, cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['alerts', 'dashboards', 'deploy', 'mixin']);
    expect(readdirSync(cwd)).toEqual([]);
    for (const [file, content] of renderPack(defaultConfig())) expect(readFileSync(join(dir, 'alerts', file), 'utf8')).toBe(content);
    for (const [file, content] of renderDashboards(defaultConfig())) expect(readFileSync(join(dir, 'dashboards', file), 'utf8')).toBe(content);
    for (const [file, content] of renderMixin(defaultConfig())) expect(readFileSync(join(dir, 'mixin', file), 'utf8')).toBe(content);
    for (const [file, content] of renderDeploy(defaultConfig())) expect(readFileSync(join(dir, 'deploy', file), 'utf8')).toBe(content);
  });

  it('`generate --out DIR` alone is refused (exit 2) instead of writing the other parts into the current directory', () => {
    const dir = tempDir('zp-pack-');
    const cwd = tempDir('zp-pack-cwd-');
    const r = runCli(['generate', '--out', join(dir, 'rules'), `--dashboards.out=${join(dir, 'd')}`, '--log.level=warn'], undefined, cwd);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--mixin.out, --deploy.out go: they would be written into the current directory');
    expect(r.stderr).toContain('--out.root=DIR');
    expect(readdirSync(cwd)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
    // Every part named: written where named.
    const all = runCli(
      ['generate', '--out', join(dir, 'rules'), `--dashboards.out=${join(dir, 'd')}`, `--mixin.out=${join(dir, 'm')}`, `--deploy.out=${join(dir, 'k')}`, '--log.level=warn'],
      undefined,
      cwd,
    );
    expect(all.code, all.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['d', 'k', 'm', 'rules']);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('`generate` with a file where an output directory goes exits 2 naming the flag, and writes no file', () => {
    const dir = tempDir('zp-pack-');
    const file = join(dir, 'a-file');
    writeFileSync(file, 'kept\n');
    const r = runCli(['generate', '--out.root', dir, '--out', join(dir, 'rules'), `--dashboards.out=${join(file, 'dashboards')}`, '--log.level=warn']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--dashboards.out ${join(file, 'dashboards')}: cannot make the output directory: it is a file, or lies under one, not a directory`);
    expect(readFileSync(file, 'utf8')).toBe('kept\n');
    expect(readdirSync(join(dir, 'rules'))).toEqual([]);
  });

  it('promtool check rules accepts the rules, plain and as a PrometheusRule, with lint fatal', () => {
    const promtool = requireBinary('promtool');
    const count = ruleGroups(defaultConfig()).flatMap((g) => g.rules).length;
    expect(count).toBeGreaterThan(60);
    const plain = run(promtool, ['check', 'rules', '--lint=all', '--lint-fatal', join(ALERTS_DIR, 'zero-plane.rules.yml')]);
    expect(plain.out).toContain(`SUCCESS: ${count} rules found`);
    expect(plain.code).toBe(0);
    const crd = parse(readFileSync(join(ALERTS_DIR, 'kubernetes/prometheusrule.yaml'), 'utf8')) as { kind: string; apiVersion: string; spec: unknown };
    expect(crd.kind).toBe('PrometheusRule');
    expect(crd.apiVersion).toBe('monitoring.coreos.com/v1');
    const extracted = join(tempDir('zp-crd-'), 'rules.yml');
    writeFileSync(extracted, JSON.stringify(crd.spec));
    const fromCrd = run(promtool, ['check', 'rules', extracted]);
    expect(fromCrd.out).toContain(`SUCCESS: ${count} rules found`);
  });

  it('amtool check-config accepts the example Alertmanager config', () => {
    const amtool = requireBinary('amtool');
    const r = run(amtool, ['check-config', join(ALERTS_DIR, 'alertmanager.example.yml')]);
    expect(r.out).toContain('SUCCESS');
    expect(r.out).toContain('3 receivers');
    expect(r.code).toBe(0);
  });

  it('every alert (SPEC §7 names unchanged, then the new ones) has severity, summary, a templated description and a runbook link', () => {
    const alerts = ruleGroups(defaultConfig())
      .flatMap((g) => g.rules)
      .filter((r) => 'alert' in r);
    expect([...new Set(alerts.map((a) => a.alert))]).toEqual([...ALERT_NAMES, ...MORE_ALERT_NAMES, ...EARLY_WARNING_ALERT_NAMES, PROBE_FALLBACK_ALERT]);
    for (const a of alerts) {
      expect(['critical', 'warning']).toContain(a.labels.severity);
      expect(a.annotations.summary).toMatch(/\.$/);
      // absent() has no labels to template: its description names the selector instead.
      if (a.alert !== 'ZeroPlaneExporterAbsent') expect(a.annotations.description).toContain('{{');
      expect(a.annotations.runbook_url).toMatch(new RegExp(`docs/runbook\\.md#${a.alert.toLowerCase()}$`));
    }
    expect(alerts.find((a) => a.alert === 'ZeroPlaneP0DriftWithDegraded')?.labels).toEqual({ severity: 'critical', priority: 'P0' });
    // The burn-rate pairs: page critical, ticket warning, per SLO and window pair.
    const burn = alerts.filter((a) => a.labels.slo !== undefined).map((a) => `${a.alert} ${a.labels.severity} ${a.labels.long_window}/${a.labels.short_window}`);
    expect(burn).toEqual(['ZeroPlaneHitRateBudgetBurn', 'ZeroPlaneLatencyBudgetBurn'].flatMap((n) => [`${n} critical 1h/5m`, `${n} critical 6h/30m`, `${n} warning 1d/2h`, `${n} warning 3d/6h`]));
    // The early warnings are tickets, guarded over their 1h window by alerts.minRequests (200).
    for (const name of EARLY_WARNING_ALERT_NAMES) {
      const a = alerts.find((r) => r.alert === name);
      expect(a?.labels, name).toEqual({ severity: 'warning' });
      expect(a?.expr, name).toMatch(/:rate1h \* 3600 >= 200\)$/);
    }
  });

  it('the traffic guard (alerts.minRequests) sits on the band, P0, canary, hit-rate, warm-up and burn-rate rules, and on no other', () => {
    const specs = alertSpecs(defaultConfig(), groupingOf(defaultConfig()));
    const guarded = [...new Set(specs.filter((s) => s.guards.length > 0).map((s) => s.alert))];
    expect(guarded).toEqual([
      'ZeroPlaneP0DriftWithDegraded',
      'ZeroPlaneP99DriftOutOfBand',
      'ZeroPlaneCanaryRollback',
      'ZeroPlaneHitRateLow',
      'ZeroPlaneWarmupEfficiencyLow',
      'ZeroPlaneHitRateBudgetBurn',
      'ZeroPlaneLatencyBudgetBurn',
    ]);
    for (const s of specs.filter((x) => x.guards.length > 0))
      expect(
        s.guards.map((g) => [g.op, g.value]),
        s.alert,
      ).toEqual([['>=', 200]]);
    const config = parseConfig('alerts:\n  minRequests: 50\n', 'c.yml');
    const text = renderPack(config).get('zero-plane.rules.yml') as string;
    expect(text).toContain('(zero_plane:request_duration_seconds_count:rate5m * 300 >= 50)');
    expect(text).not.toContain('>= 200');
  });

  describe('for pack.aggregationLabels [cluster, namespace, job] and a custom selector', () => {
    const kube = parseConfig('pack:\n  aggregationLabels: [cluster, namespace, job]\n  selector: \'job=~"llm-gateway.*", namespace="llm"\'\n', 'kube.yml');
    const files = renderPack(kube);
    const dir = tempDir('zp-kube-pack-');
    for (const [file, content] of files) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), content);
    }
    const rules = ruleGroups(kube).flatMap((g) => g.rules);

    it('promtool check rules (lint fatal) and amtool check-config accept the pack', () => {
      const plain = run(requireBinary('promtool'), ['check', 'rules', '--lint=all', '--lint-fatal', join(dir, 'zero-plane.rules.yml')]);
      expect(plain.out).toContain(`SUCCESS: ${rules.length} rules found`);
      expect(plain.code).toBe(0);
      const am = run(requireBinary('amtool'), ['check-config', join(dir, 'alertmanager.example.yml')]);
      expect(am.out).toContain('SUCCESS');
      expect(am.code).toBe(0);
    });

    it('every sum by and every on (…) keeps all three labels; every raw series is read through the selector', () => {
      const exprs = rules.map((r) => r.expr).join('\n');
      // Sloth's joins on the SLO's identity (a group's SLI onto the SLO's constant budget) are not per group.
      const lists = [...exprs.matchAll(/\b(?:by|on) \(([^)]*)\)/g)].map((m) => m[1] as string).filter((l) => l !== 'sloth_id, sloth_slo, sloth_service');
      expect(lists.length).toBeGreaterThan(100);
      for (const l of lists) expect(l.startsWith('cluster, namespace, job'), l).toBe(true);
      // A raw series: a metric name not part of a recording rule's level:metric:operations name.
      const raw = [...exprs.matchAll(/(?<![:\w])(zero_plane_[a-z_]+|up)(?![\w:])(\{[^}]*\})?/g)];
      expect(raw.length).toBeGreaterThan(45);
      // The probe's series come from the probe job (docs/probe.md), not the exporter's: found by their name alone.
      for (const m of raw.filter((r) => !(r[1] as string).startsWith('zero_plane_probe_'))) expect(m[2] ?? '', m[0]).toMatch(/^\{job=~"llm-gateway\.\*", namespace="llm"/);
    });

    it('Alertmanager groups by alertname and the three labels, and inhibits on them', () => {
      const am = parse(files.get('alertmanager.example.yml') as string) as { route: { group_by: string[] }; inhibit_rules: { equal: string[] }[] };
      expect(am.route.group_by).toEqual(['alertname', 'cluster', 'namespace', 'job']);
      expect(am.inhibit_rules.map((r) => r.equal)).toEqual([
        ['cluster', 'namespace', 'job'],
        ['alertname', 'cluster', 'namespace', 'job'],
        // A hard alert mutes its early warning.
        ['cluster', 'namespace', 'job'],
        ['cluster', 'namespace', 'job'],
        // No target at all mutes a group's target gone.
        ['cluster', 'namespace', 'job'],
      ]);
    });
  });

  it('thresholds come from the config: another baseline moves every bound', () => {
    const config = parseConfig('signals:\n  baselineSeconds: 0.2\n  tolerance: 0.1\n  hitRateTarget: 0.99\n  stableCohorts: [stable, ga.1]\npack:\n  rateWindow: 2m\n', 'c.yml');
    const text = renderPack(config).get('zero-plane.rules.yml') as string;
    expect(text).toContain('{le="0.22"}');
    expect(text).toContain('{le="0.18"}');
    expect(text).toContain('/ 0.2 - 1');
    expect(text).toContain('zero_plane:hit_rate:ratio_rate2m < 0.99');
    expect(text).toContain('[2m]');
    expect(text).toContain('cohort!~"|stable|ga\\\\.1|__other__"');
    expect(text).not.toContain('0.19425');
  });
});
