// The committed rules behave as SPEC §4/§7 say, proven by promtool's own unit-test runner
// (test/rules/*.test.yml, promtool 2.42), and every alert has its section in docs/runbook.md.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { requireBinary } from './helpers/binaries.js';

const RULES = fileURLToPath(new URL('../alerts/zero-plane.rules.yml', import.meta.url));
const RULE_TESTS = fileURLToPath(new URL('./rules/', import.meta.url));
const RUNBOOK = fileURLToPath(new URL('../docs/runbook.md', import.meta.url));

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

function alertRules(): AlertRule[] {
  const rules = parse(readFileSync(RULES, 'utf8')) as { groups: { rules: (AlertRule | { record: string })[] }[] };
  return rules.groups.flatMap((g) => g.rules).filter((r): r is AlertRule => 'alert' in r);
}

const testFiles = readdirSync(RULE_TESTS)
  .filter((f) => f.endsWith('.test.yml'))
  .sort();
const parsed = new Map(testFiles.map((f) => [f, parse(readFileSync(join(RULE_TESTS, f), 'utf8')) as TestFile]));
const allGroups = [...parsed.values()].flatMap((t) => t.tests);
const allCases = allGroups.flatMap((g) => g.alert_rule_test ?? []);

describe('promtool unit tests of alerts/zero-plane.rules.yml', () => {
  it('the test files load the committed rules and follow promtool 2.42 (interval in every group, no fuzzy_compare, fixed group order)', () => {
    expect(testFiles.length).toBeGreaterThanOrEqual(5);
    const ruleGroups = (parse(readFileSync(RULES, 'utf8')) as { groups: { name: string }[] }).groups.map((g) => g.name);
    for (const [file, t] of parsed) {
      expect(t.rule_files, file).toEqual(['../../alerts/zero-plane.rules.yml']);
      // Without it promtool evaluates the groups in Go map order: alerts would randomly read 30 s old recordings.
      expect(t.group_eval_order, `${file}: group_eval_order`).toEqual(ruleGroups);
      for (const group of t.tests) {
        expect(group.interval, `${file}: "${group.name}" has no interval (a failure on promtool 2.42)`).toBeTruthy();
        expect(group.name, `${file}: a group without a name`).toBeTruthy();
      }
      expect(readFileSync(join(RULE_TESTS, file), 'utf8'), `${file}: fuzzy_compare needs promtool 3.5`).not.toMatch(/^\s*fuzzy_compare:/m);
    }
  });

  it('every alert of the rules has a case where it fires (labels and annotations) and one where it stays quiet', () => {
    const alerts = alertRules();
    expect(alerts.length).toBe(10);
    for (const a of alerts) {
      const cases = allCases.filter((c) => c.alertname === a.alert);
      const firing = cases.filter((c) => (c.exp_alerts ?? []).length > 0);
      const quiet = cases.filter((c) => (c.exp_alerts ?? []).length === 0);
      expect(firing.length, `${a.alert} never fires in test/rules`).toBeGreaterThan(0);
      expect(quiet.length, `${a.alert} is never shown quiet in test/rules`).toBeGreaterThan(0);
      for (const c of firing) {
        for (const e of c.exp_alerts ?? []) {
          expect(e.exp_labels?.severity, `${a.alert} @ ${c.eval_time}`).toBe(a.labels?.severity);
          expect(Object.keys(e.exp_annotations ?? {}).sort(), `${a.alert} @ ${c.eval_time}`).toEqual(['description', 'runbook_url', 'summary']);
          expect(e.exp_annotations?.runbook_url).toBe(a.annotations?.runbook_url);
        }
      }
    }
  });

  it('the P0 is pinned: labels exactly {job, severity: critical, priority: P0}, four quiet scenarios, recording rules checked', () => {
    const p0 = allCases.filter((c) => c.alertname === 'ZeroPlaneP0DriftWithDegraded');
    for (const c of p0) for (const e of c.exp_alerts ?? []) expect(Object.keys(e.exp_labels ?? {}).sort()).toEqual(['job', 'priority', 'severity']);
    const names = allGroups.map((g) => g.name);
    for (const n of ['P0 quiet with drift alone', 'P0 quiet with degraded alone', 'P0 quiet on a healthy series']) expect(names).toContain(n);
    const exprs = allGroups.flatMap((g) => g.promql_expr_test ?? []).map((t) => t.expr);
    for (const rule of [
      'zero_plane:hit_rate:ratio_rate5m',
      'zero_plane:warmup_efficiency:ratio_rate5m',
      'zero_plane:latency_above_ceiling:ratio_rate5m',
      'zero_plane:p99_drift:ratio_rate5m',
    ]) {
      expect(exprs.some((e) => e.includes(rule)), rule).toBe(true);
    }
  });

  it.each(testFiles)('promtool test rules %s', (file) => {
    const promtool = requireBinary('promtool');
    const r = spawnSync(promtool, ['test', 'rules', file], { cwd: RULE_TESTS, encoding: 'utf8', timeout: 20_000 });
    const out = `${r.stdout}${r.stderr}`;
    expect(r.status, `promtool test rules ${file} failed:\n${out}`).toBe(0);
    expect(out).toContain('SUCCESS');
  });
});

describe('docs/runbook.md', () => {
  it('has exactly one `## AlertName` section for every alert, and no section for an alert that does not exist', () => {
    const runbook = readFileSync(RUNBOOK, 'utf8');
    const headings = [...runbook.matchAll(/^## (.+?)\s*$/gm)].map((m) => m[1] as string);
    const alerts = alertRules();
    for (const a of alerts) {
      expect(headings.filter((h) => h === a.alert).length, `## ${a.alert} in docs/runbook.md`).toBe(1);
      // GitHub's anchor for "## ZeroPlaneX" is #zeroplanex: the rules link there.
      expect(a.annotations?.runbook_url).toMatch(new RegExp(`/docs/runbook\\.md#${a.alert.toLowerCase()}$`));
    }
    const names = new Set(alerts.map((a) => a.alert));
    for (const h of headings.filter((x) => x.startsWith('ZeroPlane'))) expect(names.has(h), `runbook section for unknown alert ${h}`).toBe(true);
  });
});
