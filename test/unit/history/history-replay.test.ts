// Old logs on their own timeline (src/history/replay.ts), through the backtest: the order of the lines
// and of the files does not matter within history.lateness, gzip and many files read as one, bad times
// are counted and skipped without stretching the timeline, parse errors land at their file's position,
// and what is held in memory does not grow with the span.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { backtest, type BacktestResult, type BacktestRow } from '../../../src/history/backtest.js';
import { replay } from '../../../src/history/replay.js';
import { compareLabels, extrapolatedRate, storedLabels } from '../../../src/history/prometheus-rate.js';
import { SeriesTotals } from '../../../src/history/series-totals.js';
import { histogramBuckets } from '../../../src/metrics/buckets.js';
import { ExporterMetrics } from '../../../src/metrics/exporter-metrics.js';
import { createRng } from '../../../src/simulate/random.js';
import { heldOutLog, HELD_OUT_START_MS } from '../../helpers/held-out-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-replay-');
const NOW = Date.UTC(2026, 0, 1);
const STEP = 30_000;
/** 40 minutes: healthy, drift with degraded requests, recovery (enough for the P0). */
const SHORT = {
  phases: [
    { minutes: 10, slow: 0, degraded: 0 },
    { minutes: 15, slow: 0.3, degraded: 0.05 },
    { minutes: 15, slow: 0, degraded: 0 },
  ],
  rate: 2,
};
let n = 0;

function file(lines: string[], gzip = false): string {
  const path = join(dir, `log-${n++}${gzip ? '.gz' : ''}`);
  const text = `${lines.join('\n')}\n`;
  writeFileSync(path, gzip ? gzipSync(text) : text);
  return path;
}

async function run(files: string[], config = defaultConfig()): Promise<{ rows: BacktestRow[]; result: BacktestResult }> {
  const rows: BacktestRow[] = [];
  const result = await backtest(config, files, { stepMs: STEP, nowMs: NOW }, (r) => void rows.push(r));
  return { rows, result };
}

const tsOf = (line: string) => Date.parse((JSON.parse(line) as { ts: string }).ts);
const sorted = (lines: string[]) => [...lines].sort((a, b) => tsOf(a) - tsOf(b));

describe('history replay', () => {
  const log = heldOutLog(SHORT);

  it('gives the same timeline for records out of order within history.lateness as for the sorted log', async () => {
    const rng = createRng(7);
    // Each line moved by up to ±50 s in the file: a gateway that logs start times of requests up to 100 s long.
    const shuffled = log.lines
      .map((l, i) => ({ l, k: i + (rng() - 0.5) * 2 * 50 * SHORT.rate }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.l);
    expect(shuffled).not.toEqual(sorted(log.lines));
    const a = await run([file(sorted(log.lines))]);
    const b = await run([file(shuffled)]);
    expect(b.result.summary.skipped.late).toBe(0);
    expect(b.rows).toEqual(a.rows);
    expect(b.result.alerts).toEqual(a.result.alerts);
    expect(a.result.firstP0).toBeDefined();
  });

  it('counts a record whose step was already counted (it came more than history.lateness out of order) as late and leaves it out', async () => {
    const lines = sorted(log.lines);
    // A record of minute 0 written at the end, 40 minutes later: its step was counted long before. (Lines
    // are read a chunk at a time, so a record less late than a chunk may still find its step open.)
    const moved = lines.splice(100, 1)[0] as string;
    const late = [...lines, moved];
    const a = await run([file(lines)]);
    const b = await run([file(late)]);
    expect(b.result.summary.skipped).toMatchObject({ late: 1, farOut: 0, noTimestamp: 0 });
    expect(b.result.summary.records).toBe(a.result.summary.records);
    expect(b.rows).toEqual(a.rows);
  });

  it('reads files in any order, gzip among them, and logs of two gateways over the same hours, as one log', async () => {
    const lines = sorted(log.lines);
    const whole = await run([file(lines)]);
    const third = Math.floor(lines.length / 3);
    const rotated = [file(lines.slice(2 * third)), file(lines.slice(0, third), true), file(lines.slice(third, 2 * third))];
    expect((await run(rotated)).rows).toEqual(whole.rows);
    const twoGateways = [
      file(
        lines.filter((_, i) => i % 2 === 0),
        true,
      ),
      file(lines.filter((_, i) => i % 2 === 1)),
    ];
    const both = await run(twoGateways);
    expect(both.rows).toEqual(whole.rows);
    expect(both.result.summary.files).toBe(2);
  });

  it('counts and skips records without a time and far-out times (1970, 3000), and they do not stretch the timeline', async () => {
    const clean = await run([file(sorted(log.lines))]);
    const bad = heldOutLog({ ...SHORT, bad: true });
    const r = await run([file(bad.lines)]);
    expect(r.result.summary.skipped).toEqual({ noTimestamp: 3, farOut: 2, outlier: 0, late: 0, unplaced: 0 });
    expect(r.result.summary.firstStepMs).toBe(HELD_OUT_START_MS);
    expect(r.result.summary.firstStepMs).toBe(clean.result.summary.firstStepMs);
    expect(r.result.summary.lastStepMs).toBe(clean.result.summary.lastStepMs);
    expect(r.result.summary.parseErrors).toBe(2);
    expect(r.result.summary.lines).toBe(bad.lines.length);
    expect(r.result.summary.records + r.result.summary.parseErrors + 3 + 2).toBe(bad.lines.length);
  });

  it('counts a parse error at the time of the record before it in its file', async () => {
    const lines = sorted(log.lines);
    const i = lines.findIndex((l) => tsOf(l) >= HELD_OUT_START_MS + 20 * 60_000);
    const before = tsOf(lines[i - 1] as string);
    lines.splice(i, 0, 'this line is not JSON');
    const errorsAt: [number, number][] = [];
    await replay(defaultConfig(), [file(lines)], { stepMs: STEP, nowMs: NOW }, (t, p) => void errorsAt.push([t, p.metrics.parseErrors.sum()]));
    const first = errorsAt.find(([, errors]) => errors > 0);
    // Counted in the step that holds the record before it: visible from the step after that one's end.
    expect(first?.[0]).toBe((Math.floor(before / STEP) + 1) * STEP);
  });

  it('holds at most a chunk of lines and history.lateness of records in memory, however long the span (30 days, one record a minute)', async () => {
    const month = heldOutLog({ phases: [{ minutes: 30 * 24 * 60, slow: 0, degraded: 0 }], rate: 1 / 60 });
    const r = await run([file(month.lines)]);
    expect(r.result.summary.records).toBe(month.lines.length);
    expect((r.result.summary.lastStepMs as number) - (r.result.summary.firstStepMs as number)).toBeGreaterThan(29 * 86_400_000);
    // A 64 KiB read holds ~200 of these lines, history.lateness two; the whole month is 43,200.
    expect(r.result.summary.peakHeld).toBeLessThan(400);
  });

  it('a config with a shorter lateness skips what the default places', async () => {
    const rng = createRng(9);
    // One record in 20 written 30 s late (a long request logged at its start time), the others in order.
    const shuffled = sorted(log.lines)
      .map((l, i) => ({ l, k: i + (rng() < 0.05 ? 30 * SHORT.rate : 0) }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.l);
    const r = await run([file(shuffled)], parseConfig('history:\n  lateness: 1s\n', 'h.yml'));
    expect(r.result.summary.skipped.late).toBeGreaterThan(0);
    expect((await run([file(shuffled)])).result.summary.skipped.late).toBe(0);
  });
});

describe('step totals ring', () => {
  it("gives every window each series' increase now minus one window ago, long after it wrapped around, with fewer samples before the first step", () => {
    const config = defaultConfig();
    const m = new ExporterMetrics(histogramBuckets(config), config.metrics);
    const ring = new SeriesTotals({
      bounds: histogramBuckets(config),
      ceiling: 0.19425,
      stepMs: STEP,
      longestWindowMs: 3_600_000,
      rateWindowMs: 300_000,
      stableCohorts: ['stable'],
      targetLabelNames: ['job', 'instance'],
    });
    const totals: number[] = [];
    for (let i = 0; i < 500; i++) {
      // The first step is the timeline's start, before any record, as a replay has it.
      if (i > 0) m.requests.inc(['true', '2xx', 'm', 'r', ''], (i % 7) + 1);
      // A second series from step 100: 0 in the windows before it existed.
      if (i >= 100) m.requests.inc(['false', '5xx', 'm', 'r', ''], 1);
      ring.push(i * STEP, m);
      totals.push(m.requests.sum());
      for (const windowMs of [300_000, 3_600_000]) {
        const back = i - windowMs / STEP;
        const w = ring.window(windowMs);
        if (i === 0) {
          expect(w.sum('requests', false)).toBeUndefined();
          continue;
        }
        // Integer counts and a 0 sample at the start: increase() is exact whatever the order.
        expect(w.sum('requests', false)).toBe((totals[i] as number) - (back < 0 ? 0 : (totals[back] as number)));
        expect(w.sum('notHitRequests', false)).toBe(Math.max(0, i - Math.max(back, 99)));
      }
    }
  });
});

describe('extrapolatedRate (Prometheus 2.42 rate() and increase() of one series)', () => {
  const at = (firstS: number, first: number, lastS: number, last: number, count: number) => ({ firstMs: firstS * 1000, first, lastMs: lastS * 1000, last, count });
  it('is the plain difference when samples sit on both ends of the range, per second for rate()', () => {
    expect(extrapolatedRate(at(0, 10, 300, 40, 21), 0, 300_000, false)).toBe(30);
    expect(extrapolatedRate(at(0, 10, 300, 40, 21), 0, 300_000, true)).toBe(30 * (1 / 300));
  });
  it('extrapolates to a boundary within 1.1 sample spacings, else by half a spacing', () => {
    // Samples at 30 s … 270 s every 30 s: 30 s to each end, within 33 s: the 240 s seen stand for 300 s.
    expect(extrapolatedRate(at(30, 100, 270, 180, 9), 0, 300_000, false)).toBe(80 * (300 / 240));
    // Samples from 150 s: 150 s to the start, more than 33 s: only half a spacing (15 s) is added there.
    expect(extrapolatedRate(at(150, 1000, 300, 1050, 6), 0, 300_000, false)).toBe(50 * (165 / 150));
  });
  it('does not extrapolate a counter below 0, and not at all from a 0 sample', () => {
    // The line through (30 s, 5) and (270 s, 85) reaches 0 at 15 s: extrapolated 15 s towards the start.
    expect(extrapolatedRate(at(30, 5, 270, 85, 9), 0, 300_000, false)).toBe(80 * (285 / 240));
    expect(extrapolatedRate(at(120, 0, 300, 7, 7), 0, 300_000, false)).toBe(7);
  });
  it('has no value from one sample', () => {
    expect(extrapolatedRate(at(300, 5, 300, 5, 1), 0, 300_000, true)).toBeUndefined();
  });
});

describe('compareLabels (Prometheus 2.42 labels.Compare, as the TSDB orders series)', () => {
  const sorted = (sets: [string, string][][]) =>
    sets
      .map((s) => storedLabels(s))
      .sort(compareLabels)
      .map((s) => s.map(([k, v]) => `${k.toString()}=${v.toString()}`).join(','));
  it('compares names, then values byte by byte, a prefix first, and leaves empty values out', () => {
    expect(
      sorted([
        [['b', '1']],
        [
          ['a', 'x'],
          ['b', '2'],
        ],
        [
          ['a', ''],
          ['b', '0'],
        ],
        [
          ['b', '1'],
          ['c', ''],
        ],
        [
          ['b', '1'],
          ['c', 'z'],
        ],
      ]),
    ).toEqual(['a=x,b=2', 'b=0', 'b=1', 'b=1', 'b=1,c=z']);
    // UTF-8 bytes, not UTF-16 units: U+FF5E (EF BD 9E) sorts before U+1F600 (F0 9F 98 80), though its unit is larger.
    expect(sorted([[['m', '😀']], [['m', '～']]])).toEqual(['m=～', 'm=😀']);
  });
});
