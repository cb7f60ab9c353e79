import { describe, expect, it } from 'vitest';
import type { Signals } from '../../../src/signals/classify.js';
import { Aggregate } from '../../../src/windows/aggregate.js';
import { SlidingWindow } from '../../../src/windows/sliding-window.js';
import { summarize } from '../../../src/windows/summarize.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { createRng } from '../../../src/simulate/random.js';

const HIT: Signals = { hit: true, degraded: false, warmup: 'hit', mode: undefined, cached: false, downgradeReason: undefined, optIn: undefined, delayProfileInvalid: false };
const MISS_WARM: Signals = { ...HIT, warmup: 'miss' };
const FALLBACK: Signals = { ...HIT, hit: false, warmup: undefined };
const DEGRADED: Signals = { ...HIT, degraded: true };

function lognormal(rand: () => number, medianSeconds: number, sigma: number): number {
  const z = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  return medianSeconds * Math.exp(sigma * z);
}

const nearestRank = (sorted: Float64Array, q: number) => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number;

describe('quantile accuracy against exact nearest-rank sorting', () => {
  it.each([
    ['lognormal σ=0.35 with 0.5 % ×20 outliers', 1, 0.35],
    ['lognormal σ=1.0 with 0.5 % ×20 outliers', 2, 1.0],
  ])('%s, 200k values, p50/p99/p999 within 0.5 %%', (_name, seed, sigma) => {
    const rand = createRng(seed);
    const n = 200_000;
    const values = new Float64Array(n);
    const agg = new Aggregate(defaultConfig().window.quantileRelativeAccuracy);
    for (let i = 0; i < n; i++) {
      let v = lognormal(rand, 0.15, sigma);
      if (rand() < 0.005) v *= 20;
      values[i] = v;
      agg.add(HIT, v);
    }
    const sorted = values.slice().sort();
    for (const q of [0.5, 0.99, 0.999]) {
      const exact = nearestRank(sorted, q);
      const estimate = agg.quantile(q) as number;
      expect(Math.abs(estimate - exact) / exact, `q=${q} exact=${exact} estimate=${estimate}`).toBeLessThanOrEqual(0.005);
    }
  });

  it('stays within 0.5 % after merging 8 shards (a window of slots)', () => {
    const rand = createRng(7);
    const shards = Array.from({ length: 8 }, () => new Aggregate(0.0025));
    const all: number[] = [];
    for (let i = 0; i < 120_000; i++) {
      const v = i % 2 ? lognormal(rand, 0.04, 0.2) : lognormal(rand, 0.18, 0.05); // bimodal: fast hits and slow hits
      all.push(v);
      (shards[i % 8] as Aggregate).add(HIT, v);
    }
    const merged = new Aggregate(0.0025);
    for (const s of shards) merged.merge(s);
    const sorted = Float64Array.from(all).sort();
    for (const q of [0.5, 0.99, 0.999]) {
      const exact = nearestRank(sorted, q);
      expect(Math.abs((merged.quantile(q) as number) - exact) / exact).toBeLessThanOrEqual(0.005);
    }
  });

  it('σ from merged moments equals the two-pass population σ', () => {
    const rand = createRng(3);
    const a = new Aggregate(0.0025);
    const b = new Aggregate(0.0025);
    const xs: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      const v = 0.1 + rand() * 0.2;
      xs.push(v);
      (i < 3000 ? a : b).add(HIT, v);
    }
    a.merge(b);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length);
    expect(a.stddev()).toBeCloseTo(sd, 12);
  });

  it('quantiles are over hit requests only, and a single value is exact', () => {
    const agg = new Aggregate(0.0025);
    agg.add(FALLBACK, 5);
    agg.add(HIT, 0.183);
    expect(agg.quantile(0.99)).toBe(0.183);
    expect(agg.requests).toBe(2);
    expect(agg.hits).toBe(1);
  });
});

describe('the four signals', () => {
  const signals = defaultConfig().signals;
  it('hit rate, drift, degraded and warm-up efficiency follow SPEC §4', () => {
    const agg = new Aggregate(0.0025);
    for (let i = 0; i < 996; i++) agg.add(i < 900 ? HIT : MISS_WARM, 0.1);
    for (let i = 0; i < 4; i++) agg.add(FALLBACK, 0.3);
    agg.add(DEGRADED, 0.2); // the 1001st request, a hit; pushes nothing above p99 (rank 991)
    const v = summarize(agg, signals);
    expect(v.requests).toBe(1001);
    expect(v.hits).toBe(997);
    expect(v.hitRate).toBeCloseTo(997 / 1001, 12);
    expect(v.degradedCount).toBe(1);
    expect(v.warmupEfficiency).toBeCloseTo(901 / 997, 12);
    expect(v.p99Seconds).toBeCloseTo(0.1, 3);
    expect(v.p99Drift).toBeCloseTo((0.1 - 0.185) / 0.185, 2);
  });

  it('ratios without a denominator are null, not 0', () => {
    const v = summarize(new Aggregate(0.0025), signals);
    expect(v).toMatchObject({ requests: 0, hitRate: null, p99Seconds: null, p99Drift: null, warmupEfficiency: null, stddevSeconds: null, degradedCount: 0 });
    const onlyFallback = new Aggregate(0.0025);
    onlyFallback.add(FALLBACK, 0.1);
    expect(summarize(onlyFallback, signals)).toMatchObject({ hitRate: 0, p99Drift: null, warmupEfficiency: null });
  });
});

describe('sliding window (injectable clock, no sleeping)', () => {
  function windowAt(start: number) {
    let now = start;
    const w = new SlidingWindow({ durationMs: 300_000, slotMs: 10_000, relativeAccuracy: 0.0025, clock: () => now });
    return { w, advance: (ms: number) => (now += ms), now: () => now };
  }

  it('places records by event time and forgets them once the window has passed', () => {
    const t0 = Date.UTC(2026, 10, 29, 12, 0, 0);
    const { w, advance, now } = windowAt(t0);
    w.add(HIT, 0.1, now() - 60_000);
    w.add(HIT, 0.2, undefined); // arrival time
    w.add(HIT, 0.3, now() - 400_000); // older than the window: ignored by the window
    expect(w.snapshot().requests).toBe(2);
    advance(250_000);
    expect(w.snapshot().requests).toBe(1); // the one at t0−60 s has left
    advance(60_000);
    expect(w.snapshot().requests).toBe(0);
  });

  it('reuses a ring slot for a later time without mixing the old records in', () => {
    const { w, advance } = windowAt(Date.UTC(2026, 10, 29, 12, 0, 5));
    w.add(DEGRADED, 0.1, undefined);
    advance(300_000); // same ring index, next lap
    w.add(HIT, 0.1, undefined);
    const s = w.snapshot();
    expect(s.requests).toBe(1);
    expect(s.degraded).toBe(0);
  });

  it('a record from a gateway clock running ahead counts now, not in a future slot', () => {
    const { w, now } = windowAt(Date.UTC(2026, 10, 29, 12, 0, 0));
    w.add(HIT, 0.1, now() + 3_600_000);
    expect(w.snapshot().requests).toBe(1);
  });
});
