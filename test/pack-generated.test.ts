// The committed alerting pack is exactly what the generator makes from the default config, and it is
// valid for the real tools: promtool for the rules (plain and as a PrometheusRule), amtool for routing.
import { spawnSync } from 'node:child_process';
import { tempDir } from './helpers/temp-dir.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../src/config/load.js';
import { defaultConfig } from '../src/config/schema.js';
import { ALERT_NAMES, ruleGroups } from '../src/pack/rules.js';
import { renderPack } from '../src/pack/write-pack.js';
import { renderDashboards } from '../src/dashboards/render-dashboards.js';
import { requireBinary } from './helpers/binaries.js';
import { runCli } from './helpers/cli-process.js';

const ALERTS_DIR = fileURLToPath(new URL('../alerts/', import.meta.url));

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

  it('`generate --out DIR` writes the same files', () => {
    const dir = tempDir('zp-pack-');
    const r = runCli(['generate', '--out', dir, `--dashboards.out=${join(dir, 'dashboards')}`, '--log.level=warn']);
    expect(r.code).toBe(0);
    for (const [file, content] of renderPack(defaultConfig())) expect(readFileSync(join(dir, file), 'utf8')).toBe(content);
    for (const [file, content] of renderDashboards(defaultConfig())) expect(readFileSync(join(dir, 'dashboards', file), 'utf8')).toBe(content);
  });

  it('promtool check rules accepts the rules, plain and as a PrometheusRule, with lint fatal', () => {
    const promtool = requireBinary('promtool');
    const plain = run(promtool, ['check', 'rules', '--lint=all', '--lint-fatal', join(ALERTS_DIR, 'zero-plane.rules.yml')]);
    expect(plain.out).toContain('SUCCESS: 28 rules found');
    expect(plain.code).toBe(0);
    const crd = parse(readFileSync(join(ALERTS_DIR, 'kubernetes/prometheusrule.yaml'), 'utf8')) as { kind: string; apiVersion: string; spec: unknown };
    expect(crd.kind).toBe('PrometheusRule');
    expect(crd.apiVersion).toBe('monitoring.coreos.com/v1');
    const extracted = join(tempDir('zp-crd-'), 'rules.yml');
    writeFileSync(extracted, JSON.stringify(crd.spec));
    const fromCrd = run(promtool, ['check', 'rules', extracted]);
    expect(fromCrd.out).toContain('SUCCESS: 28 rules found');
  });

  it('amtool check-config accepts the example Alertmanager config', () => {
    const amtool = requireBinary('amtool');
    const r = run(amtool, ['check-config', join(ALERTS_DIR, 'alertmanager.example.yml')]);
    expect(r.out).toContain('SUCCESS');
    expect(r.out).toContain('3 receivers');
    expect(r.code).toBe(0);
  });

  it('every alert of SPEC §7 has severity, summary, a templated description and a runbook link', () => {
    const alerts = ruleGroups(defaultConfig()).flatMap((g) => g.rules).filter((r) => 'alert' in r);
    expect(alerts.map((a) => a.alert)).toEqual([...ALERT_NAMES]);
    for (const a of alerts) {
      expect(['critical', 'warning']).toContain(a.labels.severity);
      expect(a.annotations.summary).toMatch(/\.$/);
      expect(a.annotations.description).toContain('{{');
      expect(a.annotations.runbook_url).toMatch(new RegExp(`docs/runbook\\.md#${a.alert.toLowerCase()}$`));
    }
    expect(alerts.find((a) => a.alert === 'ZeroPlaneP0DriftWithDegraded')?.labels).toEqual({ severity: 'critical', priority: 'P0' });
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
