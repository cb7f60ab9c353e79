// `backtest --compare-naive`: the naive alert on mean latency (history.naive: above 1.1 × the baseline for
// 5m) beside the pack's, and the lead of the P0 and the warm-up alerts over it, on generated timelines where
// the tail drifts long before the mean moves (the naive alert fires late) and where the mean never
// reaches the naive threshold (it never fires).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli-process.js';
import { heldOutLog, HELD_OUT_START_MS, type Phase } from '../../helpers/held-out-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-backtest-naive-');
const MINUTE = 60_000;

interface Interval {
  pendingSince: string;
  start: string;
  end: string | null;
  peak: number;
}
interface NaiveJson {
  firstP0: Interval | null;
  naive: { factor: number; thresholdSeconds: number; for: string; intervals: Interval[]; leads: { alert: string; first: string | null; minutesBeforeNaive: number | null }[] };
}

function logOf(name: string, phases: Phase[]): string {
  const file = join(dir, name);
  writeFileSync(file, `${heldOutLog({ phases, rate: 1 }).lines.join('\n')}\n`);
  return file;
}

// 30 % of Zero-Plane requests at ≈ 205 ms, the rest at 182 ms: p99 is far above the 194.25 ms ceiling
// (the P0, with degraded requests) while the mean is ≈ 189 ms, under 1.1 × 185 = 203.5 ms. Only when
// every request is slow (≈ 205 ms) does the mean cross it.
const HEALTHY: Phase = { minutes: 20, slow: 0, degraded: 0 };
const TAIL: Phase = { minutes: 40, slow: 0.3, degraded: 0.05 };
const ALL_SLOW: Phase = { minutes: 20, slow: 1, degraded: 0.05 };

// Each test runs the CLI's backtest 2–4 times, about a CPU-second each: at load 12 on 2 cores (a sixth of
// a core) that is up to ~25 s, past the default 20 s.
describe('backtest --compare-naive', { timeout: 60_000 }, () => {
  it('the naive alert fires late: the P0 fires ~40 minutes before it (JSON and text)', () => {
    const log = logOf('late.log', [HEALTHY, TAIL, ALL_SLOW]);
    const r = runCli(['backtest', '--compare-naive', '--format', 'json', log]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as NaiveJson;
    expect(j.naive).toMatchObject({ factor: 1.1, thresholdSeconds: 0.2035, for: '5m' });
    const naive = j.naive.intervals[0] as Interval;
    // The mean crosses only in the all-slow phase, then holds for 5m (for:) before it fires.
    const allSlowAt = HELD_OUT_START_MS + 60 * MINUTE;
    expect(Date.parse(naive.pendingSince)).toBeGreaterThan(allSlowAt);
    expect(Date.parse(naive.start) - Date.parse(naive.pendingSince)).toBe(5 * MINUTE);
    expect(naive.peak).toBeGreaterThan(0.2035);
    const p0 = j.naive.leads.find((l) => l.alert === 'ZeroPlaneP0DriftWithDegraded');
    expect(p0?.first).toBe(j.firstP0?.start);
    expect(p0?.minutesBeforeNaive).toBe((Date.parse(naive.start) - Date.parse(j.firstP0?.start as string)) / MINUTE);
    expect(p0?.minutesBeforeNaive).toBeGreaterThan(35);
    expect(p0?.minutesBeforeNaive).toBeLessThan(50);
    // Warm-up efficiency stays at ≈ 92 % here: its alerts never fire, and say so.
    const warmup = j.naive.leads.find((l) => l.alert === 'ZeroPlaneWarmupEfficiencyLow');
    expect(warmup).toEqual({ alert: 'ZeroPlaneWarmupEfficiencyLow', first: null, minutesBeforeNaive: null });

    const t = runCli(['backtest', '--compare-naive', log]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toContain(`Naive alert (mean latency of every request over the rate window above 1.1 × the baseline, 203.5 ms, for 5m; history.naive): first fired ${naive.start}`);
    expect(t.stdout).toMatch(new RegExp(`ZeroPlaneP0DriftWithDegraded +fired ${j.firstP0?.start}, ${p0?.minutesBeforeNaive} minutes before the naive alert`));
    expect(t.stdout).toMatch(/ZeroPlaneWarmupEfficiencyLow +never fired/);
  });

  it('the naive alert never fires: the P0 fired and the naive alert never did; history.naive moves the threshold', () => {
    const log = logOf('never.log', [HEALTHY, TAIL, HEALTHY]);
    const r = runCli(['backtest', '--compare-naive', '--format', 'json', log]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as NaiveJson;
    expect(j.firstP0).not.toBeNull();
    expect(j.naive.intervals).toEqual([]);
    expect(j.naive.leads.find((l) => l.alert === 'ZeroPlaneP0DriftWithDegraded')).toEqual({ alert: 'ZeroPlaneP0DriftWithDegraded', first: j.firstP0?.start, minutesBeforeNaive: null });
    const t = runCli(['backtest', '--compare-naive', log]);
    expect(t.stdout).toContain('history.naive): never fired');
    expect(t.stdout).toMatch(new RegExp(`ZeroPlaneP0DriftWithDegraded +fired ${j.firstP0?.start}; the naive alert never did`));

    // A naive alert at 1.01 × the baseline (186.85 ms) for 1m does see the tail's mean (≈ 189 ms).
    const config = join(dir, 'tight.yml');
    writeFileSync(config, 'history:\n  naive: { factor: 1.01, for: 1m }\n');
    const tight = JSON.parse(runCli(['backtest', '--config.file', config, '--compare-naive', '--format', 'json', log]).stdout) as NaiveJson;
    expect(tight.naive).toMatchObject({ factor: 1.01, thresholdSeconds: 0.18685, for: '1m' });
    expect(tight.naive.intervals.length).toBeGreaterThan(0);
    expect(Date.parse((tight.naive.intervals[0] as Interval).start)).toBeGreaterThan(HELD_OUT_START_MS + 20 * MINUTE);
  });

  it('without --compare-naive nothing naive is printed; a bad history.naive exits 2 naming file, line and key', () => {
    const log = logOf('plain.log', [HEALTHY]);
    const r = runCli(['backtest', '--format', 'json', log]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).not.toHaveProperty('naive');
    expect(runCli(['backtest', log]).stdout).not.toContain('Naive alert');
    const config = join(dir, 'bad.yml');
    writeFileSync(config, 'history:\n  naive:\n    factor: -1\n');
    const bad = runCli(['backtest', '--config.file', config, '--compare-naive', log]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.yml:3: history\.naive\.factor/);
  });
});
