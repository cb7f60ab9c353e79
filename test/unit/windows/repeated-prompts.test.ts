// The Space-Saving summary of prompt hashes (windows/repeated-prompts.ts): on a stream with a known
// heavy-hitter distribution the top 10 come out in order, every kept count brackets the truth
// (count − error ≤ true ≤ count), memory stays at k hashes for 10⁶ distinct ones while a hash asked more
// than requests/k times is still kept, and two halves merged give the same top 10 as one pass.
import { describe, expect, it } from 'vitest';
import { RepeatedPrompts } from '../../../src/windows/repeated-prompts.js';

/** mulberry32: a seeded stream, so the shuffled order is the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Request {
  hash: string;
  cached: boolean;
}

/**
 * 10 heavy hashes (3000, 2700, … 300 requests; heavy i has i tenths of its answers cached), 20 medium ones
 * (100 each) and 40 000 requests spread over 30 000 one-off or rare hashes, shuffled.
 */
function heavyHitterStream(seed: number): { stream: Request[]; truth: Map<string, { count: number; cached: number }> } {
  const stream: Request[] = [];
  for (let i = 0; i < 10; i++) for (let j = 0; j < 3000 - 300 * i; j++) stream.push({ hash: `heavy-${i}`, cached: j % 10 < i });
  for (let i = 0; i < 20; i++) for (let j = 0; j < 100; j++) stream.push({ hash: `medium-${i}`, cached: false });
  const rnd = random(seed);
  for (let j = 0; j < 40_000; j++) stream.push({ hash: `rare-${Math.floor(rnd() * 30_000)}`, cached: rnd() < 0.5 });
  for (let i = stream.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [stream[i], stream[j]] = [stream[j] as Request, stream[i] as Request];
  }
  const truth = new Map<string, { count: number; cached: number }>();
  for (const r of stream) {
    const t = truth.get(r.hash) ?? { count: 0, cached: 0 };
    t.count++;
    if (r.cached) t.cached++;
    truth.set(r.hash, t);
  }
  return { stream, truth };
}

const HEAVY = Array.from({ length: 10 }, (_, i) => `heavy-${i}`);

describe('RepeatedPrompts (Space-Saving)', () => {
  const { stream, truth } = heavyHitterStream(28);

  it('finds the top 10 of a heavy-hitter stream, in order, with counts that bracket the truth', () => {
    const k = 200;
    const top = new RepeatedPrompts(k);
    for (const r of stream) top.add(r.hash, r.cached);
    expect(top.size).toBe(k);
    expect(top.requests).toBe(stream.length);
    expect(top.cached).toBe(stream.filter((r) => r.cached).length);
    const ten = top.top(10);
    expect(ten.map((e) => e.hash)).toEqual(HEAVY);
    for (const e of top.top(k)) {
      const t = truth.get(e.hash)?.count ?? 0;
      expect(e.count - e.error, e.hash).toBeLessThanOrEqual(t);
      expect(e.count, e.hash).toBeGreaterThanOrEqual(t);
      expect(e.error, e.hash).toBeLessThanOrEqual(stream.length / k);
    }
    // Each heavy hash's cached share, over the requests since it was kept, is near its true i/10.
    ten.forEach((e, i) => expect(e.cached / (e.count - e.error), e.hash).toBeCloseTo(i / 10, 1));
  });

  it('keeps k hashes for 10⁶ distinct ones, and still keeps one asked more than requests/k times', () => {
    const k = 1000;
    const top = new RepeatedPrompts(k);
    const n = 1_000_000;
    for (let i = 0; i < n; i++) {
      top.add(`distinct-${i}`, false);
      if (i % 400 === 0) top.add('asked-often', true);
    }
    expect(top.size).toBe(k);
    expect(top.state().entries).toHaveLength(k);
    // 2500 requests of n/400 + n ≈ 1 002 500: more than requests/k (≈ 1003), so Space-Saving keeps it.
    const often = top.top(k).find((e) => e.hash === 'asked-often');
    expect(often).toBeDefined();
    expect(often?.count).toBeGreaterThanOrEqual(2500);
    expect(top.top(1)[0]?.hash).toBe('asked-often');
  });

  it('two halves merged give the same top 10 as one pass, and the bounds still hold', () => {
    const k = 200;
    const whole = new RepeatedPrompts(k);
    const first = new RepeatedPrompts(k);
    const second = new RepeatedPrompts(k);
    stream.forEach((r, i) => {
      whole.add(r.hash, r.cached);
      (i < stream.length / 2 ? first : second).add(r.hash, r.cached);
    });
    first.mergeState(structuredClone(second.state()));
    expect(first.size).toBe(k);
    expect(first.requests).toBe(whole.requests);
    expect(first.cached).toBe(whole.cached);
    expect(first.top(10).map((e) => e.hash)).toEqual(HEAVY);
    for (const e of first.top(k)) {
      const t = truth.get(e.hash)?.count ?? 0;
      expect(e.count - e.error, e.hash).toBeLessThanOrEqual(t);
      expect(e.count, e.hash).toBeGreaterThanOrEqual(t);
    }
  });

  it('below k, counts are exact and ties are ordered by hash', () => {
    const top = new RepeatedPrompts(10);
    for (const [h, n] of [
      ['b', 3],
      ['a', 3],
      ['c', 5],
    ] as const)
      for (let i = 0; i < n; i++) top.add(h, i === 0);
    expect(top.top(10)).toEqual([
      { hash: 'c', count: 5, error: 0, cached: 1 },
      { hash: 'a', count: 3, error: 0, cached: 1 },
      { hash: 'b', count: 3, error: 0, cached: 1 },
    ]);
    const empty = new RepeatedPrompts(10);
    empty.mergeState(top.state());
    expect(empty.top(10)).toEqual(top.top(10));
  });

  it('refuses a k that is no size', () => {
    for (const k of [0, -1, 1.5, Number.NaN]) expect(() => new RepeatedPrompts(k)).toThrow(RangeError);
  });
});
