// The rules behave as SPEC §4/§7 say, proven by promtool's own unit-test runner (promtool 2.42): the
// committed rules (test/rules/*.test.yml) and the rules generated for the kube-prometheus setting,
// aggregation labels [cluster, namespace, job] and a regex selector (test/rules/clusters/). Every
// alert has its section in docs/runbook.md.
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/load.js';
import { GROUP_NAMES } from '../../../src/pack/rules.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { requireBinary } from '../../helpers/binaries.js';
import { tempDir } from '../../helpers/temp-dir.js';

const RULES = fileURLToPath(new URL('../../../alerts/zero-plane.rules.yml', import.meta.url));
const RULE_TESTS = fileURLToPath(new URL('../../rules/', import.meta.url));
const CLUSTER_TESTS = join(RULE_TESTS, 'clusters');
const RUNBOOK = fileURLToPath(new URL('../../../docs/runbook.md', import.meta.url));

interface AlertRule {
  alert: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface AlertCase {
  eval_time: string;
  alertname: string;
  exp_alerts?: { exp_labels?: Record<string, string>; exp_annotations?: Record<string, string> }[];
}

interface TestFile {
  rule_files: string[];
  group_eval_order?: string[];
  tests: { name?: string; interval?: string; alert_rule_test?: AlertCase[]; promql_expr_test?: { expr: string }[]; [k: string]: unknown }[];
}

function alertRules(text: string): AlertRule[] {
  const rules = parse(text) as { groups: { rules: (AlertRule | { record: string })[] }[] };
  return rules.groups.flatMap((g) => g.rules).filter((r): r is AlertRule => 'alert' in r);
}

const testFilesIn = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.test.yml'))
    .sort();
const testFiles = testFilesIn(RULE_TESTS);
const clusterFiles = testFilesIn(CLUSTER_TESTS);
const parsedIn = (dir: string, files: string[]) => new Map(files.map((f) => [f, parse(readFileSync(join(dir, f), 'utf8')) as TestFile]));
const parsed = parsedIn(RULE_TESTS, testFiles);
const clusterParsed = parsedIn(CLUSTER_TESTS, clusterFiles);
const casesOf = (files: Map<string, TestFile>) => [...files.values()].flatMap((t) => t.tests).flatMap((g) => g.alert_rule_test ?? []);
const allGroups = [...parsed.values()].flatMap((t) => t.tests);
const allCases = casesOf(parsed);

/** The pack generated from test/rules/clusters/zero-plane.yml, beside a copy of the cluster test files. */
function clusterRulesDir(): string {
  const dir = tempDir('zp-cluster-rules-');
  const pack = renderPack(loadConfig(join(CLUSTER_TESTS, 'zero-plane.yml')));
  writeFileSync(join(dir, 'zero-plane.rules.yml'), pack.get('zero-plane.rules.yml') as string);
  for (const f of clusterFiles) copyFileSync(join(CLUSTER_TESTS, f), join(dir, f));
  return dir;
}

function promtoolTest(dir: string, file: string) {
  const promtool = requireBinary('promtool');
  const r = spawnSync(promtool, ['test', 'rules', file], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  const out = `${r.stdout}${r.stderr}`;
  expect(r.status, `promtool test rules ${file} failed:\n${out}`).toBe(0);
  expect(out).toContain('SUCCESS');
}

describe('promtool unit tests of alerts/zero-plane.rules.yml', () => {
  it('the test files load the rules and follow promtool 2.42 (interval in every group, no fuzzy_compare, fixed group order)', () => {
    expect(testFiles.length).toBeGreaterThanOrEqual(9);
    expect(clusterFiles.length).toBeGreaterThanOrEqual(1);
    const ruleGroups = (parse(readFileSync(RULES, 'utf8')) as { groups: { name: string }[] }).groups.map((g) => g.name);
    expect(ruleGroups).toEqual([...GROUP_NAMES]);
    for (const [files, ruleFile, dir] of [
      [parsed, '../../alerts/zero-plane.rules.yml', RULE_TESTS],
      [clusterParsed, 'zero-plane.rules.yml', CLUSTER_TESTS],
    ] as const) {
      for (const [file, t] of files) {
        expect(t.rule_files, file).toEqual([ruleFile]);
        // Without it promtool evaluates the groups in Go map order: alerts would randomly read 30 s old recordings.
        expect(t.group_eval_order, `${file}: group_eval_order`).toEqual(ruleGroups);
        for (const group of t.tests) {
          expect(group.interval, `${file}: "${group.name}" has no interval (a failure on promtool 2.42)`).toBeTruthy();
          expect(group.name, `${file}: a group without a name`).toBeTruthy();
        }
        expect(readFileSync(join(dir, file), 'utf8'), `${file}: fuzzy_compare needs promtool 3.5`).not.toMatch(/^\s*fuzzy_compare:/m);
      }
    }
  });

  it('every alert of the rules has a case where it fires (labels and annotations) and one where it stays quiet', () => {
    const alerts = alertRules(readFileSync(RULES, 'utf8'));
    const names = [...new Set(alerts.map((a) => a.alert))];
    expect(names.length).toBe(19);
    for (const name of names) {
      const cases = allCases.filter((c) => c.alertname === name);
      const firing = cases.filter((c) => (c.exp_alerts ?? []).length > 0);
      const quiet = cases.filter((c) => (c.exp_alerts ?? []).length === 0);
      expect(firing.length, `${name} never fires in test/rules`).toBeGreaterThan(0);
      expect(quiet.length, `${name} is never shown quiet in test/rules`).toBeGreaterThan(0);
      const rules = alerts.filter((a) => a.alert === name);
      for (const c of firing) {
        for (const e of c.exp_alerts ?? []) {
          // A rule of this name whose labels the expected alert carries (the burn-rate rules differ by window).
          const rule = rules.find((r) => Object.entries(r.labels ?? {}).every(([k, v]) => e.exp_labels?.[k] === v));
          expect(rule, `${name} @ ${c.eval_time}: no rule with labels ${JSON.stringify(e.exp_labels)}`).toBeDefined();
          expect(Object.keys(e.exp_annotations ?? {}).sort(), `${name} @ ${c.eval_time}`).toEqual(['description', 'runbook_url', 'summary']);
          expect(e.exp_annotations?.runbook_url).toBe(rule?.annotations?.runbook_url);
        }
      }
    }
  });

  it('each burn-rate rule (SLO, tier and window pair) fires just past its factor and not just under it', () => {
    const alerts = alertRules(readFileSync(RULES, 'utf8')).filter((a) => a.labels?.slo !== undefined);
    expect(alerts).toHaveLength(8);
    const slo = parsed.get('slo.test.yml') as TestFile;
    for (const a of alerts) {
      const pair = (e: { exp_labels?: Record<string, string> }) =>
        e.exp_labels?.slo === a.labels?.slo && e.exp_labels?.long_window === a.labels?.long_window && e.exp_labels?.short_window === a.labels?.short_window;
      const fires = slo.tests.filter((g) => g.name?.startsWith(`${a.labels?.slo} burn just past`) && g.alert_rule_test?.some((c) => c.exp_alerts?.some(pair)));
      const silent = slo.tests.filter((g) => g.name?.startsWith(`${a.labels?.slo} burn just under`) && !g.alert_rule_test?.some((c) => c.exp_alerts?.some(pair)));
      expect(fires.length, `${a.alert} ${a.labels?.long_window}/${a.labels?.short_window} never fires`).toBeGreaterThan(0);
      expect(silent.length, `${a.alert} ${a.labels?.long_window}/${a.labels?.short_window} is never silent just under a factor`).toBeGreaterThan(0);
    }
  });

  it('the P0 is pinned: labels exactly {job, severity: critical, priority: P0}, quiet scenarios, recording rules checked', () => {
    const p0 = allCases.filter((c) => c.alertname === 'ZeroPlaneP0DriftWithDegraded');
    for (const c of p0) for (const e of c.exp_alerts ?? []) expect(Object.keys(e.exp_labels ?? {}).sort()).toEqual(['job', 'priority', 'severity']);
    const names = allGroups.map((g) => g.name);
    for (const n of [
      'P0 quiet with drift alone',
      'P0 quiet with degraded alone',
      'P0 quiet on a healthy series',
      'a quiet window with one slow and one degraded request pages no one',
      'the same at volume fires the P0, which keeps firing 5m after the condition ends',
    ]) {
      expect(names).toContain(n);
    }
    const exprs = allGroups.flatMap((g) => g.promql_expr_test ?? []).map((t) => t.expr);
    for (const rule of [
      'zero_plane:hit_rate:ratio_rate5m',
      'zero_plane:warmup_efficiency:ratio_rate5m',
      'zero_plane:latency_above_ceiling:ratio_rate5m',
      'zero_plane:p99_drift:ratio_rate5m',
      'zero_plane:slo_errors_per_requests:ratio_rate3d',
      'zero_plane:slo_error_budget_remaining:ratio',
      'zero_plane:warmup_efficiency:ratio_rate1h',
      'zero_plane:warmup_efficiency:ratio_rate7d',
      'zero_plane:p99_drift:ratio_rate1h',
      'zero_plane:p99_drift:max24h',
      'zero_plane:deterministic_bandwidth_demand:rate5m',
      'zero_plane:probe_fallback:ratio_avg5m',
    ]) {
      expect(
        exprs.some((e) => e.includes(rule)),
        rule,
      ).toBe(true);
    }
  });

  it('the kube-prometheus pack keeps cluster and namespace in every alert of the cluster tests', () => {
    for (const c of casesOf(clusterParsed)) {
      for (const e of c.exp_alerts ?? []) {
        if (c.alertname === 'ZeroPlaneExporterAbsent') continue; // absent() has no labels to keep
        expect(Object.keys(e.exp_labels ?? {}), `${c.alertname} @ ${c.eval_time}`).toEqual(expect.arrayContaining(['cluster', 'namespace', 'job']));
      }
    }
  });

  it.each(testFiles)('promtool test rules %s', (file) => promtoolTest(RULE_TESTS, file), 60_000);

  it.each(clusterFiles)('promtool test rules clusters/%s (the pack generated from clusters/zero-plane.yml)', (file) => promtoolTest(clusterRulesDir(), file), 60_000);
});

describe('docs/runbook.md', () => {
  it('has exactly one `## AlertName` section for every alert, and no section for an alert that does not exist', () => {
    const runbook = readFileSync(RUNBOOK, 'utf8');
    const headings = [...runbook.matchAll(/^## (.+?)\s*$/gm)].map((m) => m[1] as string);
    const alerts = alertRules(readFileSync(RULES, 'utf8'));
    for (const a of alerts) {
      expect(headings.filter((h) => h === a.alert).length, `## ${a.alert} in docs/runbook.md`).toBe(1);
      // GitHub's anchor for "## ZeroPlaneX" is #zeroplanex: the rules link there.
      expect(a.annotations?.runbook_url).toMatch(new RegExp(`/docs/runbook\\.md#${a.alert.toLowerCase()}$`));
    }
    const names = new Set(alerts.map((a) => a.alert));
    for (const h of headings.filter((x) => x.startsWith('ZeroPlane'))) expect(names.has(h), `runbook section for unknown alert ${h}`).toBe(true);
  });
});
