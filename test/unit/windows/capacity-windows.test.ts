// report's capacity figure (src/windows/capacity-windows.ts): (1 + the largest per-window p99 drift) × the
// mean request rate over the windows the input spans, the rule's deterministic bandwidth demand over a file.
// The p99 is histogram_quantile over the exporter's buckets, as zero_plane:p99_drift:ratio_rate5m has it.
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import { histogramBuckets } from '../../../src/metrics/buckets.js';
import { CapacityWindows } from '../../../src/windows/capacity-windows.js';

const config = defaultConfig();
const BOUNDS = histogramBuckets(config);
const W = 300_000;
const T0 = Date.UTC(2026, 0, 1, 12);

/** Adds `n` Zero-Plane requests at `seconds` latency, spread over window `w`. */
function fill(c: CapacityWindows, w: number, n: number, seconds: number, hit = true): void {
  for (let i = 0; i < n; i++) c.add(T0 + w * W + Math.floor((i * W) / n), hit, seconds);
}

/**
 * Window 0, the article's +3.2 %: per 5 m, 4500 requests at ≤ 0.185 s, 430 in (0.185, 0.1887], 50 in
 * (0.1887, 0.19425], 20 in (0.19425, 0.2035]: rank 4950 is 20/50 of the way through the third, p99
 * 0.1887 + 0.00555 × 0.4 = 0.19092 s, drift +3.2 %. Window 1: 5000 at 0.18 s, p99 0.17575 + 0.00555 × 0.99,
 * drift −2.03 %. Window 2 empty. Window 3: 100 at 0.25 s (drift +35 %), fewer than the guard's 200.
 */
function article(c: CapacityWindows): void {
  fill(c, 0, 4500, 0.18);
  fill(c, 0, 430, 0.187);
  fill(c, 0, 50, 0.19);
  fill(c, 0, 20, 0.2);
  fill(c, 1, 5000, 0.18);
  fill(c, 3, 100, 0.25);
}

describe('capacity windows', () => {
  it('takes the largest p99 drift of the windows with traffic, times the mean rate over the windows spanned', () => {
    const c = new CapacityWindows(W, BOUNDS);
    article(c);
    // Records without a time are in no window and no rate.
    c.add(undefined, true, 5);
    const f = c.figure(0.185, 200);
    expect(f.windowsSpanned).toBe(4);
    expect(f.windowsWithTraffic).toBe(2);
    expect(f.maxP99Drift).toBeCloseTo(0.032, 12);
    expect(f.maxP99DriftWindowStart).toBe(new Date(T0).toISOString());
    // 10 100 requests over 4 × 300 s.
    expect(f.requestRatePerSecond).toBeCloseTo(10_100 / 1200, 12);
    expect(f.deterministicBandwidthDemand).toBeCloseTo(1.032 * (10_100 / 1200), 12);
    expect(new CapacityWindows(W, BOUNDS).figure(0.185, 1).maxP99Drift).toBeNull();
    // With a guard of 100, the thin window's +35 % is the maximum: 0.25 s is in (0.23125, 0.2775].
    const loose = new CapacityWindows(W, BOUNDS);
    article(loose);
    expect(loose.figure(0.185, 100).maxP99Drift).toBeCloseTo((0.23125 + 0.04625 * 0.99) / 0.185 - 1, 12);
    expect(loose.figure(0.185, 100).maxP99DriftWindowStart).toBe(new Date(T0 + 3 * W).toISOString());
  });

  it("a single window of the rule test's 1000 requests a minute at +3.2 % is 1.032 × 16.67 = 17.2", () => {
    const c = new CapacityWindows(W, BOUNDS);
    fill(c, 0, 4500, 0.18);
    fill(c, 0, 430, 0.187);
    fill(c, 0, 50, 0.19);
    fill(c, 0, 20, 0.2);
    expect(c.figure(0.185, 200).deterministicBandwidthDemand).toBeCloseTo(17.2, 12);
  });

  it('non-hit requests count in the rate, not in the p99', () => {
    const c = new CapacityWindows(W, BOUNDS);
    fill(c, 0, 300, 0.18);
    fill(c, 0, 300, 5, false);
    const f = c.figure(0.185, 200);
    expect(f.requestRatePerSecond).toBeCloseTo(2, 12);
    expect(f.maxP99Drift).toBeCloseTo((0.17575 + 0.00555 * 0.99) / 0.185 - 1, 12);
  });

  it('no window with traffic: no drift and no demand, the rate still', () => {
    const c = new CapacityWindows(W, BOUNDS);
    fill(c, 0, 10, 0.18);
    const f = c.figure(0.185, 200);
    expect(f).toMatchObject({ windowsSpanned: 1, windowsWithTraffic: 0, maxP99Drift: null, maxP99DriftWindowStart: null, deterministicBandwidthDemand: null });
    expect(f.requestRatePerSecond).toBeCloseTo(10 / 300, 12);
    expect(new CapacityWindows(W, BOUNDS).figure(0.185, 200)).toMatchObject({ windowsSpanned: 0, requestRatePerSecond: null, deterministicBandwidthDemand: null });
  });

  it('two halves read apart and merged give the same figure as one reader (report on two threads)', () => {
    const one = new CapacityWindows(W, BOUNDS);
    article(one);
    const first = new CapacityWindows(W, BOUNDS);
    const second = new CapacityWindows(W, BOUNDS);
    fill(first, 0, 4500, 0.18);
    fill(first, 0, 430, 0.187);
    fill(second, 0, 50, 0.19);
    fill(second, 0, 20, 0.2);
    fill(second, 1, 5000, 0.18);
    fill(first, 3, 100, 0.25);
    first.mergeState(structuredClone(second.state()));
    expect(first.figure(0.185, 200)).toEqual(one.figure(0.185, 200));
  });
});
