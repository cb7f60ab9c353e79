// `generate --format sloth`: the pack's SLOs as a Sloth prometheus/v1 spec. The output is checked against
// Sloth's own rules (github.com/slok/sloth, pkg/prometheus/api/v1 and pkg/common/validation: version, names,
// objective in (0, 100], a `{{ .window }}` in both queries and not the same query twice, an alert name,
// valid labels and non-empty annotations), each query with the window filled as Sloth validates it is
// valid PromQL for promtool, and the objective and queries are those of the pack's own slo:* rules.
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { formatDuration } from '../../../src/config/duration.js';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig, type Config } from '../../../src/config/schema.js';
import { groupingOf, on } from '../../../src/pack/grouping.js';
import { ruleNames } from '../../../src/pack/recording-rules.js';
import { ruleGroups } from '../../../src/pack/rules.js';
import { sloWindows } from '../../../src/pack/slos.js';
import type { SlothSpec } from '../../../src/pack/sloth-spec.js';
import { requireBinary } from '../../helpers/binaries.js';
import { runCli } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

// Sloth's conventions.NameRegexp and TplSLIQueryWindowVarRegex; Prometheus' label name rule.
const NAME = /^[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]$/;
const WINDOW_VAR = /{{ *\.window *}}/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Sloth's validation of a prometheus/v1 spec (ValidateSLO with the PromQL dialect, minus the PromQL parse promtool does below): its complaints. */
function slothComplaints(spec: SlothSpec): string[] {
  const bad: string[] = [];
  if (spec.version !== 'prometheus/v1') bad.push(`version ${String(spec.version)}`);
  if (!NAME.test(spec.service)) bad.push(`service ${spec.service}`);
  if (!Array.isArray(spec.slos) || spec.slos.length === 0) bad.push('no slos');
  const labels = (where: string, l: Record<string, string> | undefined) => {
    for (const [k, v] of Object.entries(l ?? {})) if (k === '__name__' || !LABEL_NAME.test(k) || typeof v !== 'string' || v === '') bad.push(`${where} label ${k}=${v}`);
  };
  labels('spec', spec.labels);
  for (const slo of spec.slos) {
    if (!NAME.test(slo.name)) bad.push(`slo name ${slo.name}`);
    if (!NAME.test(`${spec.service}-${slo.name}`)) bad.push(`slo id ${spec.service}-${slo.name}`);
    if (!(typeof slo.objective === 'number' && slo.objective > 0 && slo.objective <= 100)) bad.push(`${slo.name} objective ${slo.objective}`);
    const e = slo.sli?.events;
    if (e === undefined) bad.push(`${slo.name}: no events SLI`);
    else {
      if (e.error_query === e.total_query) bad.push(`${slo.name}: error and total queries are the same`);
      for (const q of [e.error_query, e.total_query]) if (typeof q !== 'string' || !WINDOW_VAR.test(q)) bad.push(`${slo.name}: query without {{.window}}: ${q}`);
    }
    if (!slo.alerting?.name) bad.push(`${slo.name}: no alert name`);
    labels(slo.name, slo.alerting?.labels);
    for (const alert of [slo.alerting?.page_alert, slo.alerting?.ticket_alert]) {
      if (alert?.disable === true) continue;
      labels(slo.name, alert?.labels);
      for (const [k, v] of Object.entries({ ...slo.alerting?.annotations, ...alert?.annotations })) if (!LABEL_NAME.test(k) || v === '') bad.push(`${slo.name} annotation ${k}`);
    }
  }
  return bad;
}

/** `generate --format sloth` with `configText` (default config when undefined), run where nothing may be written. */
function generateSloth(configText?: string): { spec: SlothSpec; text: string } {
  const cwd = tempDir('zp-sloth-cwd-');
  const args = ['generate', '--format', 'sloth', '--log.level=warn'];
  if (configText !== undefined) {
    const file = join(tempDir('zp-sloth-config-'), 'config.yml');
    writeFileSync(file, configText);
    args.push('--config.file', file);
  }
  const r = runCli(args, undefined, cwd);
  expect(r.code, r.stderr).toBe(0);
  expect(readdirSync(cwd), 'generate --format sloth writes nothing').toEqual([]);
  return { spec: parse(r.stdout) as SlothSpec, text: r.stdout };
}

/** promtool accepts every query with `{{.window}}` as 5m, and Sloth's SLI expression `(error)\n/\n(total)` built from them. */
function checkPromql(spec: SlothSpec): void {
  const rules = spec.slos.flatMap((slo, i) => {
    const e = slo.sli.events;
    const fill = (q: string) => q.replace(/{{ *\.window *}}/g, '5m');
    return [fill(e.error_query), fill(e.total_query), fill(`(${e.error_query})\n/\n(${e.total_query})\n`)].map((expr, j) => ({ record: `sloth_check:q${i}_${j}`, expr }));
  });
  const file = join(tempDir('zp-sloth-promql-'), 'rules.yml');
  writeFileSync(file, stringify({ groups: [{ name: 'sloth-queries', rules }] }));
  const r = spawnSync(requireBinary('promtool'), ['check', 'rules', file], { encoding: 'utf8', timeout: 30_000 });
  expect(`${r.stdout}${r.stderr}`).toContain(`SUCCESS: ${rules.length} rules found`);
}

/** The objectives and queries equal the pack's rules: its error-ratio rule per window is Sloth's SLI with the recorded events inlined. */
function checkAgainstPack(spec: SlothSpec, config: Config): void {
  const rules = ruleGroups(config).flatMap((g) => g.rules) as { record?: string; expr: string; labels?: Record<string, string> }[];
  const n = ruleNames(config);
  const join = on(groupingOf(config));
  expect(spec.slos.map((s) => s.name)).toEqual(['hit-rate', 'latency']);
  for (const slo of spec.slos) {
    const objective = rules.find((r) => r.record === 'slo:objective:ratio' && r.labels?.sloth_slo === slo.name);
    expect(objective?.expr).toBe(`vector(${Number((slo.objective / 100).toPrecision(12))})`);
    expect(rules.find((r) => r.record === 'sloth_slo_info' && r.labels?.sloth_slo === slo.name)?.labels?.sloth_id).toBe(`${spec.service}-${slo.name}`);
    for (const window of sloWindows(config)) {
      const w = formatDuration(window);
      const fill = (q: string) => q.replaceAll('{{.window}}', w);
      const events = rules.find((r) => r.record === n.sloEvents(window) && r.labels?.slo === slo.name);
      const ratio = rules.find((r) => r.record === n.sloErrorRatio(window) && r.labels?.slo === slo.name);
      expect(events?.expr, `${slo.name} ${w} events`).toBe(fill(slo.sli.events.total_query));
      const inlined = ratio?.expr.replaceAll(`${n.sloEvents(window)}{slo="${slo.name}"}`, events?.expr ?? '');
      expect(inlined, `${slo.name} ${w} error ratio`).toBe(`${fill(slo.sli.events.error_query)}\n/ ${join}\n${fill(slo.sli.events.total_query)}`);
    }
  }
}

describe('generate --format sloth', () => {
  it("the default config's SLOs: a valid Sloth spec, valid PromQL, the pack's objectives and queries", () => {
    const { spec, text } = generateSloth();
    expect(slothComplaints(spec)).toEqual([]);
    expect(spec).toMatchObject({ version: 'prometheus/v1', service: 'zero-plane' });
    expect(spec.slos.map((s) => s.objective)).toEqual([99.4, 99]);
    expect(spec.slos.map((s) => s.alerting.name)).toEqual(['ZeroPlaneHitRateBudgetBurn', 'ZeroPlaneLatencyBudgetBurn']);
    expect(spec.slos[0]?.alerting.page_alert).toEqual({ labels: { severity: 'critical' } });
    expect(spec.slos[0]?.alerting.ticket_alert).toEqual({ labels: { severity: 'warning' } });
    expect(text).toContain('sloth generate --default-slo-period=28d');
    expect(text).toContain("Sloth's catalog windows for 28d are this config's burn-rate pairs");
    checkPromql(spec);
    checkAgainstPack(spec, defaultConfig());
  });

  it('a tuned config (cluster/job groups, other objectives, 30d, one ticket pair) gives its own spec, still valid and equal to its pack', () => {
    const configText =
      'pack:\n  aggregationLabels: [cluster, job]\nslos:\n  service: llm-gateway\n  period: 30d\n  hitRate: { objective: 0.995 }\n  latency: { objective: 0.999 }\n  ticket: [{ budgetShare: 0.1, long: 1d, short: 2h }]\n';
    const { spec, text } = generateSloth(configText);
    expect(slothComplaints(spec)).toEqual([]);
    expect(spec.service).toBe('llm-gateway');
    expect(spec.slos.map((s) => s.objective)).toEqual([99.5, 99.9]);
    expect(spec.slos[1]?.sli.events.total_query).toContain('sum by (cluster, job) (rate(');
    expect(text).toContain('--default-slo-period=30d');
    expect(text).toContain('--slo-period-windows-path');
    checkPromql(spec);
    checkAgainstPack(spec, parseConfig(configText, 'tuned.yml'));
  });

  it('the validator above is not toothless: it refuses what Sloth refuses', () => {
    const { spec } = generateSloth();
    const broken = structuredClone(spec);
    const first = broken.slos[0] as SlothSpec['slos'][number];
    first.objective = 100.5;
    first.sli.events.error_query = first.sli.events.error_query.replaceAll('{{.window}}', '5m');
    first.alerting.name = '';
    expect(slothComplaints(broken)).toHaveLength(3);
  });

  it('an unknown --format exits 2 and writes nothing', () => {
    const cwd = tempDir('zp-sloth-bad-');
    const r = runCli(['generate', '--format', 'pyrra'], undefined, cwd);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--format must be files or sloth, not "pyrra"');
    expect(readdirSync(cwd)).toEqual([]);
  });
});
