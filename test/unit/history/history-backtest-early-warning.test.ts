// backtest evaluates the early warnings (src/pack/early-warning.ts) on a log, on the article's numbers:
// warm-up efficiency sliding from 91.7 % to 90.9 % while p99 drift is +3.2 %, with no hard alert firing.
// The log is exact, not random: 100 Zero-Plane requests a minute, each 10-minute cycle of 1000 with a
// fixed share of warm-up hits and fixed latency classes, so every 1 h window holds exactly 6 cycles. The
// latency classes follow test/rules/early-warning-drift.test.yml: per 1000, 900 at <= 0.185 s, then 86
// in (0.185, 0.1887], 10 in (0.1887, 0.19425] and 4 above: p99 (rank 990) is 0.4 of the way through
// (0.1887, 0.19425], 0.19092 s, +3.2 %; with 987 / 997 it is 0.3 of the way, +2.9 %.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import { backtest, type BacktestResult } from '../../../src/history/backtest.js';
import { tempDir } from '../../helpers/temp-dir.js';

const START = Date.UTC(2026, 0, 5, 0, 0, 0);
const MINUTE = 60_000;
const PER_MINUTE = 100;

interface Phase {
  minutes: number;
  /** Warm-up hits per 1000 outcomes. */
  warmupHits: number;
  /** Per 1000 requests: cumulative counts at or under 0.185, 0.1887 and 0.19425 s (the rest at 0.2 s). */
  latency: readonly [number, number, number];
  /** Requests a minute (PER_MINUTE unless set): 0 is a quiet night. */
  perMinute?: number;
}

const HEALTHY: Phase = { minutes: 360, warmupHits: 917, latency: [1000, 1000, 1000] };
const SLIDE: Phase = { minutes: 70, warmupHits: 909, latency: [900, 986, 996] };
const NOISE: Phase = { minutes: 70, warmupHits: 915, latency: [900, 987, 997] };
const NIGHT: Phase = { minutes: 180, warmupHits: 917, latency: [1000, 1000, 1000], perMinute: 0 };

function log(phases: Phase[]): { file: string; endMs: number } {
  const lines: string[] = [];
  let at = START;
  for (const p of phases) {
    const perMinute = p.perMinute ?? PER_MINUTE;
    const n = p.minutes * perMinute;
    for (let i = 0; i < n; i++) {
      const k = i % 1000;
      const latencyMs = k < p.latency[0] ? 180 : k < p.latency[1] ? 187 : k < p.latency[2] ? 190 : 200;
      const warmup = k < p.warmupHits ? 'hit' : 'miss';
      lines.push(
        JSON.stringify({
          ts: new Date(at + (i * MINUTE) / perMinute).toISOString(),
          latency_ms: latencyMs,
          status: 200,
          model: 'claude-sonnet-4',
          route: '/v1/messages',
          cohort: 'stable',
          response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': `warmup=${warmup}, degraded=?0, mode=balanced` },
          request_headers: { 'x-anthropic-experimental': 'zero-plane-2024' },
        }),
      );
    }
    at += p.minutes * MINUTE;
  }
  const file = join(tempDir('zp-early-'), 'gateway.log');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, endMs: at };
}

async function run(phases: Phase[]): Promise<BacktestResult> {
  const { file, endMs } = log(phases);
  return backtest(defaultConfig(), [file], { stepMs: 30_000, nowMs: endMs + 3_600_000 }, () => undefined);
}

const outcome = (r: BacktestResult, alert: string) => r.alerts.find((a) => a.alert === alert);
const fired = (r: BacktestResult) => r.alerts.filter((a) => a.intervals.length > 0).map((a) => a.alert);

describe('backtest: the early warnings', () => {
  it("the article's slide: warm-up 91.7 % → 90.9 % and p99 drift +3.2 % fire both early warnings, and nothing else", async () => {
    const r = await run([HEALTHY, SLIDE]);
    expect(r.notEvaluated).not.toContain('ZeroPlaneWarmupEfficiencySliding');
    expect(fired(r).sort()).toEqual(['ZeroPlaneP99DriftCreeping', 'ZeroPlaneWarmupEfficiencySliding']);
    const slideAt = START + HEALTHY.minutes * MINUTE;

    const sliding = outcome(r, 'ZeroPlaneWarmupEfficiencySliding');
    expect(sliding).toMatchObject({ signal: 'warmupEfficiency', labels: { severity: 'warning', job: 'zero-plane-exporter' } });
    const s = sliding?.intervals[0];
    // It needs most of the hour at the new level: the 1 h efficiency (a blend) must fall 0.5 points below the 7 d level (91.7 %).
    expect(s?.startMs).toBeGreaterThan(slideAt + 30 * MINUTE);
    expect(s?.startMs).toBeLessThan(slideAt + 60 * MINUTE);
    // Its lowest: exactly 90.9 % once the hour is all at the new level, still above the 88 % target.
    expect(s?.peak).toBeCloseTo(0.909, 12);
    expect(s?.endMs).toBeUndefined();

    const creeping = outcome(r, 'ZeroPlaneP99DriftCreeping');
    expect(creeping?.signal).toBe('p99Drift');
    const c = creeping?.intervals[0];
    expect(c?.startMs).toBeGreaterThan(slideAt);
    // +3.2 % (0.19092 / 0.185 − 1) once the 1 h window is all drift.
    expect(c?.peak).toBeCloseTo(0.19092 / 0.185 - 1, 12);
    expect(c?.peak).toBeCloseTo(0.032, 4);
  });

  it('noise (warm-up 91.5 %, p99 drift +2.9 %) fires neither, nor anything else', async () => {
    const r = await run([HEALTHY, NOISE]);
    expect(fired(r)).toEqual([]);
    expect(outcome(r, 'ZeroPlaneWarmupEfficiencySliding')?.intervals).toEqual([]);
    expect(outcome(r, 'ZeroPlaneP99DriftCreeping')?.intervals).toEqual([]);
  });

  it('a quiet night inside the 7 days (hours with no warm-up outcome, 0/0) does not mute the sliding warning', async () => {
    const r = await run([HEALTHY, NIGHT, HEALTHY, SLIDE]);
    // (This exact log, 917 hits then 83 misses per 1000, also fires briefly as the night begins: rate()'s
    // extrapolation differs between the hit and miss series of a window that empties. Not what this proves.)
    const slideAt = START + (2 * HEALTHY.minutes + NIGHT.minutes) * MINUTE;
    const s = outcome(r, 'ZeroPlaneWarmupEfficiencySliding')?.intervals.find((i) => i.startMs > slideAt);
    expect(s?.peak).toBeCloseTo(0.909, 12);
    expect(s?.endMs).toBeUndefined();
  });
});
