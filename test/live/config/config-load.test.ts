import { writeFileSync } from 'node:fs';
import { tempDir } from '../../helpers/temp-dir.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../../src/config/load.js';
import { problemOf } from '../../helpers/config-problem.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { requireBinary } from '../../helpers/binaries.js';
import { spawnSync } from 'node:child_process';

describe('config', () => {
  it('runs with no file at all, on the spec defaults', () => {
    const c = loadConfig(undefined);
    expect(c.signals.baselineSeconds).toBe(0.185);
    expect(c.signals.tolerance).toBe(0.05);
    expect(c.signals.hitRateTarget).toBe(0.994);
    expect(c.signals.warmupEfficiencyTarget).toBe(0.88);
    expect(c.window.duration).toBe(300_000);
    expect(c.headers.layerId.match.test('zero-plane-v12')).toBe(true);
    expect(c.headers.layerId.match.test('zero-plane-v1 ')).toBe(false);
    expect(c.metrics.labelValueLimit).toBe(50);
    expect(c.input.maxLineBytes).toBe(1024 * 1024);
    expect(c.web.listenAddress).toBe(':9185');
  });

  it('overrides any default and keeps the others', () => {
    const c = parseConfig('signals:\n  baselineSeconds: 0.2\nwindow:\n  duration: 1m\n  slot: 5s\nheaders:\n  layerId:\n    match: "^fast$"\n', 'zp.yml');
    expect(c.signals.baselineSeconds).toBe(0.2);
    expect(c.signals.tolerance).toBe(0.05);
    expect(c.window.duration).toBe(60_000);
    expect(c.window.slot).toBe(5_000);
    expect(c.headers.layerId.name).toBe('x-anthropic-layer-id');
    expect(c.headers.layerId.match.test('fast')).toBe(true);
  });

  it('names the file, the line and the key of a bad value', () => {
    expect(problemOf('# comment\nwindow:\n  duration: 5x\n')).toMatch(/^zp\.yml:3: window\.duration: "5x" is not a duration/);
    expect(problemOf('signals:\n  tolerance: 0.05\n  baselineSeconds: -1\n')).toMatch(/^zp\.yml:3: signals\.baselineSeconds: /);
    expect(problemOf('input:\n  preset: caddy\n')).toMatch(/^zp\.yml:2: input\.preset: .*nginx-json/);
    expect(problemOf('headers:\n  layerId:\n    match: "(["\n')).toMatch(/^zp\.yml:3: headers\.layerId\.match: not a valid regular expression/);
  });

  it('validates the bounds on labels, series, the gate and ingest bodies', () => {
    expect(problemOf('metrics:\n  labelValueMaxBytes: 8\n')).toMatch(/^zp\.yml:2: metrics\.labelValueMaxBytes: .*>=16/);
    expect(problemOf('metrics:\n  maxSeriesPerFamily: 10\n')).toMatch(/^zp\.yml:2: metrics\.maxSeriesPerFamily: .*>=100/);
    expect(problemOf('gate:\n  maxAlerts: 0\n')).toMatch(/^zp\.yml:2: gate\.maxAlerts: .*>=1/);
    expect(problemOf('gate:\n  maxBodyBytes: 100\n')).toMatch(/^zp\.yml:2: gate\.maxBodyBytes: .*>=1024/);
    expect(problemOf('ingest:\n  bodyReadTimeout: 10m\n')).toMatch(/^zp\.yml:2: ingest\.bodyReadTimeout: must be at most 5m/);
    expect(problemOf('ingest:\n  bodyReadTimeout: soon\n')).toMatch(/^zp\.yml:2: ingest\.bodyReadTimeout: "soon" is not a duration/);
    const c = parseConfig('metrics:\n  labelValueMaxBytes: 64\ningest:\n  bodyReadTimeout: 2s\n', 'zp.yml');
    expect(c.metrics.labelValueMaxBytes).toBe(64);
    expect(c.ingest.bodyReadTimeout).toBe(2_000);
  });

  it('rejects unknown keys, pointing at the map that holds them', () => {
    expect(problemOf('signals:\n  baselineSeconds: 0.2\n  baselineMs: 185\n')).toMatch(/^zp\.yml:2: signals: .*baselineMs/);
  });

  it('reports YAML syntax errors at the line to fix, not where the parser noticed', () => {
    expect(problemOf('window:\n  duration: 5m\n bad: [\n')).toMatch(/^zp\.yml:\d+: \(top level\): /);
    // An unclosed quote or bracket: the line that opened it (the parser stops at the end of the file).
    expect(problemOf('pack:\n  selector: "a\n  x: 1\n')).toBe('zp.yml:2: (top level): Missing closing "quote');
    expect(problemOf('pack:\n  rateWindow: [5m\n')).toMatch(/^zp\.yml:2: \(top level\): Flow sequence .* end with a \]$/);
    // A key indented onto the line after a value: that line.
    expect(problemOf('pack:\n  rateWindow: 5m\n   bad: 1\n')).toContain('zp.yml:3: (top level): Implicit keys need to be on a single line');
    expect(problemOf('a: 1\na: 2\n')).toBe('zp.yml:2: (top level): Map keys must be unique');
  });

  it('reports an unreadable file by name', () => {
    const dir = tempDir('zp-config-');
    expect(() => loadConfig(join(dir, 'missing.yml'))).toThrow(/missing\.yml: \(top level\): cannot read/);
    writeFileSync(join(dir, 'empty.yml'), '');
    expect(loadConfig(join(dir, 'empty.yml')).signals.baselineSeconds).toBe(0.185);
  });
});

describe("the alerting pack's keys", () => {
  it("defaults: aggregation by job, the exporter's job as selector, 200 events per window, the SRE workbook's burn rates", () => {
    const c = loadConfig(undefined);
    expect(c.pack.aggregationLabels).toEqual(['job']);
    expect(c.pack.selector).toBe('job="zero-plane-exporter"');
    expect(c.alerts.minRequests).toBe(200);
    expect(c.slos).toMatchObject({ period: 28 * 86_400_000, hitRate: { objective: 0.994 }, latency: { objective: 0.99 } });
    // The workbook's budget shares; the factors follow the period (src/pack/slos.ts burnPairs).
    expect(c.slos.page.map((w) => [w.budgetShare, w.long, w.short])).toEqual([
      [0.02, 3_600_000, 300_000],
      [0.05, 21_600_000, 1_800_000],
    ]);
    expect(c.slos.ticket.map((w) => [w.budgetShare, w.long, w.short])).toEqual([
      [0.1, 86_400_000, 7_200_000],
      [0.1, 259_200_000, 21_600_000],
    ]);
    expect(c.dashboards.editable).toBe(false);
  });

  it('a selector that parses is one promtool accepts in every rule (escaped regex, single quotes, backquotes, \\x escapes)', () => {
    const promtool = requireBinary('promtool');
    const dir = tempDir('zp-selector-');
    for (const selector of ['job=~"llm\\\\.gateway.*"', "job=~'a\\\\.b|c'", 'job=~`a\\.b`', 'job="zero\\x2dplane", namespace!~"test|dev"']) {
      const c = parseConfig(`pack:\n  selector: '${selector.replaceAll("'", "''")}'\n`, 'zp.yml');
      const file = join(dir, 'rules.yml');
      writeFileSync(file, renderPack(c).get('zero-plane.rules.yml') as string);
      const r = spawnSync(promtool, ['check', 'rules', file], { encoding: 'utf8' });
      expect(r.status, `${selector}: ${r.stdout}${r.stderr}`).toBe(0);
    }
  });

  it('takes the kube-prometheus setting and a regex selector', () => {
    const c = parseConfig('pack:\n  aggregationLabels: [cluster, namespace, job]\n  selector: \'job=~"llm-gateway.*", namespace!="test"\'\n', 'zp.yml');
    expect(c.pack.aggregationLabels).toEqual(['cluster', 'namespace', 'job']);
    expect(c.pack.selector).toBe('job=~"llm-gateway.*", namespace!="test"');
  });

  it('names the line and the key of every bad value', () => {
    expect(problemOf('pack:\n  aggregationLabels: [cluster, namespace]\n')).toMatch(/^zp\.yml:2: pack\.aggregationLabels: must include job/);
    expect(problemOf('pack:\n  aggregationLabels: [job, instance]\n')).toMatch(/^zp\.yml:2: pack\.aggregationLabels: "instance" cannot be an aggregation label/);
    expect(problemOf('pack:\n  aggregationLabels: [job, job]\n')).toMatch(/^zp\.yml:2: pack\.aggregationLabels: "job" is listed twice/);
    expect(problemOf('pack:\n  aggregationLabels: [job, 9lives]\n')).toMatch(/^zp\.yml:2: pack\.aggregationLabels\.1: not a Prometheus label name/);
    expect(problemOf('pack:\n  selector: job\n')).toMatch(/^zp\.yml:2: pack\.selector: not a list of PromQL label matchers/);
    expect(problemOf('pack:\n  selector: \'job=~"a", \'\n')).toMatch(/^zp\.yml:2: pack\.selector: not a list of PromQL label matchers/);
    // Parsed as PromQL: escapes and regexes as Prometheus reads them, not only the shape.
    expect(problemOf('pack:\n  selector: \'job=~"a\\.b"\'\n')).toMatch(/^zp\.yml:2: pack\.selector: not a list of PromQL label matchers .*: job=~"a\\\.b": unknown escape sequence "\\\."/);
    expect(problemOf('pack:\n  selector: \'job=~"a("\'\n')).toMatch(/^zp\.yml:2: pack\.selector: .*job=~"a\(": not a valid regex/);
    expect(problemOf('pack:\n  selector: \'job=~"(?!test).*"\'\n')).toMatch(/^zp\.yml:2: pack\.selector: .*look-ahead and look-behind are not RE2/);
    expect(problemOf('pack:\n  selector: \'job="x" namespace="y"\'\n')).toMatch(/^zp\.yml:2: pack\.selector: not a list of PromQL label matchers .*: unexpected/);
    expect(problemOf('pack:\n  selector: \'job="x\\q"\'\n')).toMatch(/unknown escape sequence "\\q"/);
    expect(problemOf('pack:\n  selector: \'"job"="x"\'\n')).toMatch(/quoted label names .* need Prometheus 3/);
    expect(problemOf('pack:\n  runbookUrl: docs/runbook.md\n')).toMatch(/^zp\.yml:2: pack\.runbookUrl: not an http\(s\) URL/);
    expect(problemOf('alerts:\n  minRequests: 0\n')).toMatch(/^zp\.yml:2: alerts\.minRequests: /);
    expect(problemOf('slos:\n  latency:\n    objective: 1\n')).toMatch(/^zp\.yml:3: slos\.latency\.objective: /);
    expect(problemOf('slos:\n  page:\n    - { factor: 14.4, long: 5m, short: 1h }\n')).toMatch(/^zp\.yml:3: slos\.page\.0: `short` must be shorter than `long`/);
    expect(problemOf('slos:\n  page:\n    - { factor: 14.4, budgetShare: 0.02, long: 1h, short: 5m }\n')).toMatch(/^zp\.yml:3: slos\.page\.0: give exactly one of `factor` and `budgetShare`/);
    expect(problemOf('slos:\n  page:\n    - { long: 1h, short: 5m }\n')).toMatch(/^zp\.yml:3: slos\.page\.0: give exactly one of `factor` and `budgetShare`/);
    expect(problemOf('slos:\n  period: 1d\n')).toMatch(/slos\.ticket\.1\.long: 3d is longer than slos\.period \(1d\)/);
    expect(problemOf('alertmanager:\n  chat:\n    name: zero-plane-pager\n')).toMatch(/^zp\.yml:\d+: alertmanager: receiver names must differ/);
    expect(problemOf('pack:\n  exporterSelector: \'job="x"\'\n')).toMatch(/^zp\.yml:\d+: pack: .*exporterSelector/);
  });
});

describe('examples/zero-plane.yml', () => {
  it('documents exactly the built-in defaults', () => {
    const documented = loadConfig(new URL('../../../examples/zero-plane.yml', import.meta.url).pathname);
    const defaults = loadConfig(undefined);
    expect(String(documented.headers.layerId.match)).toBe(String(defaults.headers.layerId.match));
    expect({ ...documented, headers: { ...documented.headers, layerId: documented.headers.layerId.name } }).toEqual({
      ...defaults,
      headers: { ...defaults.headers, layerId: defaults.headers.layerId.name },
    });
  });
});
