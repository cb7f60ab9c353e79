// Timelines that defend themselves (issue 24): a stale clock's burst before an hour of real records, an
// impossible date, two hosts' clocks three days apart alternating in one file, and a huge --step. Each
// gives backtest and export exactly what the real records alone give, with every outlier counted, in
// bounded time and memory; what cannot be bounded (a timeline of years, a step of years) is refused up
// front with exit 2 and the figure; SIGTERM in the middle of a long export ends it within a second.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import { backtest, type BacktestRow } from '../../../src/history/backtest.js';
import { exportOpenMetrics } from '../../../src/history/openmetrics-export.js';
import { BIN, runCli, runCliToFile } from '../../helpers/cli-process.js';
import { heldOutLog, HELD_OUT_START_MS } from '../../helpers/held-out-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-hostile-');
const NOW = Date.UTC(2026, 0, 1);
const STEP = 30_000;
const DAY = 86_400_000;
/** An hour of real records, one a second. */
const real = heldOutLog({ rate: 1, phases: [{ minutes: 60, slow: 0, degraded: 0 }] }).lines;
let n = 0;

function file(lines: string[]): string {
  const path = join(dir, `log-${n++}.jsonl`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** The line with its time moved by `ms` (another host's clock), or set to `iso`. */
function retimed(line: string, to: number | string): string {
  const o = JSON.parse(line) as { ts: string };
  o.ts = typeof to === 'string' ? to : new Date(Date.parse(o.ts) + to).toISOString();
  return JSON.stringify(o);
}

/** Three lines stamped 2000-01-01 (a host booted with the wrong clock), then the real hour. */
const staleBurst = [0, 1, 2].map((i) => retimed(real[i] as string, `2000-01-01T00:00:0${5 + i}.000Z`));

async function rowsOf(files: string[]) {
  const rows: BacktestRow[] = [];
  const result = await backtest(defaultConfig(), files, { stepMs: STEP, nowMs: NOW }, (r) => void rows.push(r));
  return { rows, result };
}

async function exportText(files: string[]) {
  let text = '';
  const result = await exportOpenMetrics(defaultConfig(), files, { stepMs: 15_000, nowMs: NOW, labels: [['job', 'j']], to: { write: (t) => void (text += t) }, version: 'test' });
  return { text, result };
}

describe('hostile timelines', () => {
  it("a stale clock's three lines before the real hour: skipped as time outliers; backtest and export exactly as for the real hour alone", async () => {
    const clean = file(real);
    const stale = file([...staleBurst, ...real]);
    const a = await rowsOf([clean]);
    const started = Date.now();
    const b = await rowsOf([stale]);
    expect(b.result.summary.skipped).toEqual({ noTimestamp: 0, farOut: 0, outlier: 3, late: 0, unplaced: 0 });
    expect(b.result.summary.records).toBe(real.length);
    expect(b.result.summary.firstStepMs).toBe(HELD_OUT_START_MS);
    expect(b.rows).toEqual(a.rows);
    expect(b.result.summary.peakHeld).toBeLessThan(400);
    const ea = await exportText([clean]);
    const eb = await exportText([stale]);
    // The same text but for the file's name in the source label.
    const unnamed = (text: string) => text.replaceAll(/source="[^"]*"/g, 'source="F"');
    expect(ea.result.samples).toBeGreaterThan(1000);
    expect(unnamed(eb.text)).toBe(unnamed(ea.text));
    expect(eb.result.summary.skipped.outlier).toBe(3);
    // Not 27 years of steps: the whole of it takes what an hour takes (seconds, on a loaded machine).
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('impossible dates (February 30th, 25:00, month 13) are parse errors, not records on another day', async () => {
    const bad = ['2026-02-30T10:00:00.000Z', '2024-05-07T25:00:00.000Z', '2024-13-07T00:10:00.000Z', '2023-02-29T00:00:00Z'].map((ts, i) => retimed(real[i] as string, ts));
    const withBad = [...real.slice(0, 600), ...bad, ...real.slice(600)];
    const a = await rowsOf([file(real)]);
    const b = await rowsOf([file(withBad)]);
    expect(b.result.summary.parseErrors).toBe(4);
    expect(b.result.summary.records).toBe(real.length);
    expect(b.result.summary.lastStepMs).toBe(a.result.summary.lastStepMs);
    expect(b.rows).toEqual(a.rows);
    const r = runCli(['report', '--format', 'json', file(bad)]);
    expect((JSON.parse(r.stdout) as { parseErrors: Record<string, number> }).parseErrors.bad_timestamp).toBe(4);
  });

  it("two hosts whose clocks are 3 days apart, one line each in turn in one file: all 400 kept, as the two hosts' logs read as two files", async () => {
    const lines = real.slice(0, 400).map((l, i) => (i % 2 === 1 ? retimed(l, 3 * DAY) : l));
    const merged = await rowsOf([file(lines)]);
    expect(merged.result.summary.records).toBe(400);
    expect(merged.result.summary.skipped).toEqual({ noTimestamp: 0, farOut: 0, outlier: 0, late: 0, unplaced: 0 });
    const apart = await rowsOf([file(lines.filter((_, i) => i % 2 === 0)), file(lines.filter((_, i) => i % 2 === 1))]);
    expect(merged.rows).toEqual(apart.rows);
    expect(merged.result.summary.peakHeld).toBeLessThanOrEqual(400);
  });

  it('a huge --step, or one under a second, is refused with exit 2 and the allowed range (export and backtest)', () => {
    const log = file(real.slice(0, 100));
    for (const step of ['100000000s', '1h', '500ms']) {
      const e = runCli(['export', '--step', step, log]);
      expect(e.code, e.stderr).toBe(2);
      expect(e.stderr).toMatch(/--step: .* out of range: allowed from 1s to 5m, in whole seconds/);
      const b = runCli(['backtest', '--step', step, log]);
      expect(b.code, b.stderr).toBe(2);
      expect(b.stderr).toMatch(/--step: .* out of range: allowed from 1s to 5m, in whole seconds/);
    }
    const ok = runCli(['export', '--step', '5m', log]);
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('a stale cluster large enough to be believed (30 lines of 2000): refused at once with exit 2 and the span, nothing written to --out', () => {
    const lines = [...real.slice(0, 30).map((l, i) => retimed(l, `2000-01-01T00:00:${String(10 + i).padStart(2, '0')}.000Z`)), ...real];
    const log = file(lines);
    const out = join(dir, 'out-refused');
    mkdirSync(out);
    const started = Date.now();
    const e = runCli(['export', '--out', out, log]);
    expect(e.code, e.stderr).toBe(2);
    expect(e.stderr).toMatch(/export: the timeline would span 24\.3 years \(2000-01-01T00:00:00\.000Z to 2024-05-07T.*\): at least 10\d{4} blocks of 2h, more than --max-blocks 1200/);
    expect(readdirSync(out)).toEqual([]);
    const b = runCli(['backtest', log]);
    expect(b.code, b.stderr).toBe(2);
    expect(b.stderr).toMatch(/backtest: the timeline would span 24\.3 years .* more than --max-blocks 1200/);
    expect(Date.now() - started).toBeLessThan(15_000);
    // Within the bound, it runs: the real hour is one block and a half.
    const fits = runCliToFile(['export', '--max-blocks', '2', join(dir, 'log-0.jsonl')], join(dir, 'fits.om'));
    expect(fits.code, fits.stderr).toBe(0);
    expect(runCli(['export', '--max-blocks', '0', log]).stderr).toMatch(/--max-blocks: "0" is not a whole number of 2h blocks/);
  });

  it('--max-scratch: an export to stdout whose scratch file would grow past it is refused with exit 2 and the figure, its scratch removed', () => {
    const tmp = join(dir, 'tmp-scratch');
    mkdirSync(tmp);
    const r = spawnCli(['export', '--max-scratch', '64KiB', file(real)], tmp);
    return r.then((end) => {
      expect(end.code, end.stderr).toBe(2);
      expect(end.stderr).toMatch(/export: the scratch file would take at least \d+ bytes, more than --max-scratch \(65536 bytes\)/);
      expect(readdirSync(tmp)).toEqual([]);
    });
  });

  it('--max-scratch is projected from the known span: two hours 20 days apart are refused at the first block, not after gigabytes', async () => {
    const tmp = join(dir, 'tmp-projected');
    mkdirSync(tmp);
    const later = real.map((l) => retimed(l, 20 * DAY));
    const started = Date.now();
    const end = await spawnCli(['export', '--max-scratch', '64MiB', file(real), file(later)], tmp);
    expect(end.code, end.stderr).toBe(2);
    const bytes = Number(/the scratch file would take at least (\d+) bytes, more than --max-scratch \(67108864 bytes\)/.exec(end.stderr)?.[1]);
    // 20 days of 15 s steps of every series: ~200 MB, refused before the first block is written.
    expect(bytes).toBeGreaterThan(100 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('SIGTERM in the middle of a long export (years of steps, --max-blocks raised): exit 143 within a second, its scratch removed', async () => {
    const lines = [...real.slice(0, 30).map((l, i) => retimed(l, `2000-01-01T00:00:${String(10 + i).padStart(2, '0')}.000Z`)), ...real];
    const tmp = join(dir, 'tmp-term');
    mkdirSync(tmp);
    const child = spawn(process.execPath, [BIN, 'export', '--max-blocks', '1000000', '--max-scratch', '1TiB', file(lines)], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, TMPDIR: tmp },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const ended = new Promise<number | null>((resolve) => child.once('exit', (code, sig) => resolve(code ?? (sig === null ? null : 128 + constants.signals[sig]))));
    // Well into the steps: its scratch file exists and has grown.
    const deadline = Date.now() + 20_000;
    while (readdirSync(tmp).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(readdirSync(tmp)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_000));
    const at = Date.now();
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await ended;
    clearTimeout(timer);
    expect(code, stderr).toBe(143);
    expect(Date.now() - at).toBeLessThan(1_000);
    expect(stderr).toContain('"msg":"export interrupted","signal":"SIGTERM"');
    expect(readdirSync(tmp)).toEqual([]);
  });
});

function spawnCli(args: string[], tmp: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, TMPDIR: tmp } });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}
