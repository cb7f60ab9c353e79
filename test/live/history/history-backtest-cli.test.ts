// `backtest` as users run it: the built CLI on a held-out log (a healthy stretch, drift with degraded
// requests, recovery), in its three formats, from files and from stdin, and its exit codes.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../../helpers/cli-process.js';
import { heldOutLog, HELD_OUT_START_MS } from '../../helpers/held-out-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-backtest-');
const log = join(dir, 'gateway.log');
const PHASES = [
  { minutes: 20, slow: 0, degraded: 0 },
  { minutes: 20, slow: 0.3, degraded: 0.05 },
  { minutes: 20, slow: 0, degraded: 0 },
];
let text = '';

interface Json {
  steps: { time: string; hitRate: number | null; degraded: number | null; firing: string[] }[];
  step: string;
  window: string;
  records: number;
  skipped: Record<string, number>;
  firstP0: { pendingSince: string; start: string; end: string | null; peak: number } | null;
  alerts: { name: string; labels: Record<string, string>; for: string; keepFiringFor: string; intervals: { start: string; end: string | null }[] }[];
  notEvaluated: string[];
}

beforeAll(() => {
  text = `${heldOutLog({ phases: PHASES, rate: 1 }).lines.join('\n')}\n`;
  writeFileSync(log, text);
});

describe('backtest', () => {
  it('--format json: a row per 30 s step of the log, the P0 firing in the drift, for: and keep_firing_for: from the pack', () => {
    const r = runCli(['backtest', '--format', 'json', log]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as Json;
    expect(j.step).toBe('30s');
    expect(j.window).toBe('5m');
    expect(j.steps[0]?.time).toBe(new Date(HELD_OUT_START_MS).toISOString().replace('.000Z', 'Z'));
    expect(j.steps).toHaveLength(60 * 2 + 1);
    const drift = HELD_OUT_START_MS + 20 * 60_000;
    const p0 = j.firstP0;
    expect(p0).not.toBeNull();
    // Pending from the first step with the drift in its window, firing 2 m (for:) later.
    expect(Date.parse(p0?.pendingSince as string)).toBeGreaterThan(drift);
    expect(Date.parse(p0?.start as string) - Date.parse(p0?.pendingSince as string)).toBe(120_000);
    expect(p0?.peak).toBeGreaterThan(0.01);
    const alert = j.alerts.find((a) => a.name === 'ZeroPlaneP0DriftWithDegraded');
    expect(alert).toMatchObject({ for: '2m', keepFiringFor: '5m', labels: { severity: 'critical', priority: 'P0' } });
    // Quiet in the healthy first 20 minutes: nothing fires there.
    expect(j.steps.filter((s) => Date.parse(s.time) < drift).every((s) => s.firing.length === 0)).toBe(true);
    expect(j.steps.some((s) => s.firing.includes('ZeroPlaneP0DriftWithDegraded'))).toBe(true);
    expect(j.notEvaluated).toEqual(['ZeroPlaneExporterDown', 'ZeroPlaneLogSourceStalled', 'ZeroPlaneExporterAbsent', 'ZeroPlaneExporterGone', 'ZeroPlaneRequestsStopped', 'ZeroPlaneHeadersNotFound']);
    // At 1 request/s the canary cohort never has alerts.minRequests in a window: its guard keeps it quiet.
    expect(j.alerts.find((a) => a.name === 'ZeroPlaneCanaryRollback')?.intervals).toEqual([]);
  });

  it('--format csv: the per-step table only, one row per step, the firing alerts in the last column', () => {
    const r = runCli(['backtest', '--format', 'csv', log]);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows[0]).toBe('time,requests,hit_requests,hit_rate,above_ceiling,p99_drift,degraded,warmup_efficiency,firing');
    expect(rows).toHaveLength(1 + 121);
    expect(rows[1]).toBe(`${new Date(HELD_OUT_START_MS).toISOString().replace('.000Z', 'Z')},,,,,,,,`);
    // The firing column is the rest of the row after eight cells (quoted when an alert's labels hold commas).
    const firing = rows.slice(1).map((row) => row.split(',').slice(8).join(','));
    const names = (f: string) => (f.startsWith('"') ? f.slice(1, -1).replace(/""/g, '"') : f).split(';');
    expect(firing.some((f) => names(f).includes('ZeroPlaneP0DriftWithDegraded'))).toBe(true);
    expect(rows.some((row) => /,\d+,\d+,0\.\d+,/.test(row))).toBe(true); // counts as whole numbers
    expect(firing.filter((f) => f.includes(',')).every((f) => f.startsWith('"') && f.endsWith('"'))).toBe(true);
  });

  it('--format text: the per-step table, then when each alert fired and the first P0', () => {
    const r = runCli(['backtest', log]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Signals over 5m at every step/);
    expect(r.stdout).toMatch(/\nFirst P0: 2024-05-07T00:2\d:\d0Z \(its condition held from 2024-05-07T00:2\d:\d0Z; peak \d+\.\d\d % of Zero-Plane requests above the ceiling/);
    expect(r.stdout).toMatch(/\n {2}ZeroPlaneP0DriftWithDegraded +2024-05-07T00:2\d:\d0Z – 2024-05-07T00:[45]\d:\d0Z \(\d+m(\d+s)?\), peak/);
    expect(r.stdout).toMatch(/\n {2}ZeroPlaneHitRateLow +never\n/);
    expect(r.stdout).toContain("Not evaluated (the exporter's own health, not in a log)");
  });

  it('reads stdin (-) as it reads a file', () => {
    const fromFile = runCli(['backtest', '--format', 'json', log]);
    const fromStdin = runCli(['backtest', '--format', 'json', '-'], text);
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    const a = JSON.parse(fromFile.stdout) as Json & { input: unknown };
    const b = JSON.parse(fromStdin.stdout) as Json & { input: unknown };
    expect(b.steps).toEqual(a.steps);
    expect(b.alerts).toEqual(a.alerts);
    expect(b.input).toEqual({ stdin: 'default' });
  });

  it('reads a FIFO and a process substitution of a gzip stream as it reads a file (they cannot be read by position)', () => {
    const fromFile = JSON.parse(runCli(['backtest', '--format', 'json', log]).stdout) as Json;
    const fifo = join(dir, 'gateway.fifo');
    const q = (x: string) => `'${x}'`;
    const shell = (script: string) => spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 20_000, maxBuffer: 256 << 20 });
    const cli = `${q(process.execPath)} ${q(BIN)} backtest --format json`;
    const viaFifo = shell(`mkfifo ${q(fifo)} && { cat ${q(log)} > ${q(fifo)} & } && ${cli} ${q(fifo)}; r=$?; rm -f ${q(fifo)}; exit $r`);
    const viaGzipPipe = shell(`${cli} <(gzip -c ${q(log)})`);
    for (const r of [viaFifo, viaGzipPipe]) {
      expect(r.status, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as Json;
      expect(j.steps).toEqual(fromFile.steps);
      expect(j.alerts).toEqual(fromFile.alerts);
    }
    const exported = shell(`${q(process.execPath)} ${q(BIN)} export <(cat ${q(log)})`);
    expect(exported.status, exported.stderr).toBe(0);
    // The same samples; only the source label names the input as it was given.
    const unsourced = (text: string) => text.replace(/source="[^"]*"/g, 'source=""');
    expect(unsourced(exported.stdout)).toBe(unsourced(shell(`${q(process.execPath)} ${q(BIN)} export ${q(log)}`).stdout));
    expect(exported.stdout).toMatch(/source="\/dev\/fd\/\d+"/);
  });

  it('--step must divide the rate window and every SLO window (exit 2); 1m is evaluated every minute', () => {
    const bad = runCli(['backtest', '--step', '7s', log]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--step 7s must divide every window the alerts read; it does not divide 5m/);
    const minute = runCli(['backtest', '--format', 'json', '--step', '1m', log]);
    expect(minute.code, minute.stderr).toBe(0);
    expect((JSON.parse(minute.stdout) as Json).steps).toHaveLength(61);
  });

  it('says how many lines were skipped and why on stderr, and exits 1 when no line became a record on the timeline', () => {
    const bad = join(dir, 'bad.log');
    writeFileSync(bad, `${JSON.stringify({ latency_ms: 180, response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } })}\nnot json\n`);
    const r = runCli(['backtest', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('skipped 1 without a timestamp');
    expect(r.stderr).toContain('no line of the input became a record on the timeline (2 lines read); exit 1');
  });

  // Four backtests of about a CPU-second each: at load 12 on 2 cores, past the default 20 s.
  it('--label NAME=VALUE: the target labels that are aggregation labels name the group on every alert (JSON labels, text "group:")', { timeout: 60_000 }, () => {
    const config = join(dir, 'clusters.yml');
    writeFileSync(config, 'pack:\n  aggregationLabels: [cluster, job]\n  selector: job="llm-gateway"\n');
    const r = runCli(['backtest', '--config.file', config, '--format', 'json', '--label', 'cluster=eu-1', '--label', 'region=west', log]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as Json & { group: Record<string, string> };
    // job from pack.selector, as `export` labels it; region is a target label but not an aggregation label.
    expect(j.group).toEqual({ cluster: 'eu-1', job: 'llm-gateway' });
    expect(Object.keys(j.group)).toEqual(['cluster', 'job']);
    for (const a of j.alerts) expect(a.labels, a.name).toMatchObject({ cluster: 'eu-1', job: 'llm-gateway' });
    expect(j.alerts.every((a) => !('region' in a.labels))).toBe(true);
    // The same P0 as without labels: the group's labels change no value.
    const plain = JSON.parse(runCli(['backtest', '--format', 'json', log]).stdout) as Json & { group: Record<string, string> };
    expect(plain.group).toEqual({ job: 'zero-plane-exporter' });
    expect(j.firstP0).toEqual(plain.firstP0);
    const t = runCli(['backtest', '--config.file', config, '--label', 'cluster=eu-1', log]);
    expect(t.stdout).toContain('group: cluster="eu-1", job="llm-gateway"');
    expect(runCli(['backtest', '--label', 'job=other', log]).stdout).toContain('group: job="other"');
  });

  it('--label refuses what is not NAME=VALUE, a __ name, or a label of the metrics themselves (exit 2, nothing printed)', { timeout: 60_000 }, () => {
    for (const [label, message] of [
      ['cluster', '--label: "cluster" is not NAME=VALUE with a Prometheus label name'],
      ['1cluster=a', '--label: "1cluster=a" is not NAME=VALUE with a Prometheus label name'],
      ['__name__=x', '--label: "__name__=x" is not NAME=VALUE with a Prometheus label name'],
      ['le=1', '--label: le is a label of the exported metrics themselves'],
      ['cohort=x', '--label: cohort is a label of the exported metrics themselves'],
    ] as const) {
      const r = runCli(['backtest', '--label', label, log]);
      expect(r.code, label).toBe(2);
      expect(r.stderr, label).toContain(message);
      expect(r.stdout, label).toBe('');
    }
  });

  it('refuses bad usage with exit 2 and documents itself in --help', () => {
    expect(runCli(['backtest']).code).toBe(2);
    expect(runCli(['backtest', '--format', 'yaml', log]).stderr).toMatch(/--format must be one of text, json, csv/);
    const help = runCli(['backtest', '--help']);
    expect(help.code).toBe(0);
    // Help text wraps under its column: read each flag's row as one line.
    const unwrapped = (text: string) => text.replace(/\n {4,}/g, ' ');
    expect(help.stdout).toMatch(/usage: zero-plane-exporter backtest/);
    expect(help.stdout).toMatch(/--step=DURATION/);
    expect(unwrapped(help.stdout)).toMatch(/--format=FORMAT +Output format: text .* \(default: text\)/);
    expect(unwrapped(runCli(['export', '--help']).stdout)).toMatch(/--format=FORMAT +Output format: openmetrics .*\(default: openmetrics\)/);
  });
});
