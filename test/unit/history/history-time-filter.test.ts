// Which record times a replay believes (src/history/time-filter.ts): a file's times are clusters; one of
// at least minCluster records is believed, a smaller one is outliers (unless the file has nothing larger),
// times outside [notBefore, notAfter] are far-out, and two clocks in one file are both kept.
import { describe, expect, it } from 'vitest';
import { MAX_TRACKS, TimeFilter, type RejectReason } from '../../../src/history/time-filter.js';

const H = 3_600_000;
const DAY = 24 * H;
const T0 = Date.UTC(2024, 4, 7);
const MIN = 3;

function run(times: number[], minCluster = MIN) {
  const believed: number[] = [];
  const rejected: number[] = [];
  const reasons: RejectReason[] = [];
  const f = new TimeFilter<number>(
    { maxGapMs: DAY, minCluster, notBeforeMs: Date.UTC(2000, 0, 1), notAfterMs: Date.UTC(2030, 0, 1) },
    (_t, i) => believed.push(i),
    (i, why) => {
      rejected.push(i);
      reasons.push(why);
    },
  );
  const positions: (number | undefined)[] = [];
  times.forEach((t, i) => {
    f.offer(t, i);
    positions.push(f.position);
  });
  f.end();
  return { believed, rejected, reasons, positions };
}

describe('history time filter', () => {
  it('believes a log whose records follow each other, slightly out of order, in their order', () => {
    const times = [0, 2_000, 1_000, 3_000, 2_500, 10_000].map((d) => T0 + d);
    const r = run(times);
    expect(r.believed).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.rejected).toEqual([]);
    // Nothing believed before the cluster has MIN records; then the least of its recent times.
    expect(r.positions).toEqual([undefined, undefined, T0, T0, T0, T0]);
  });

  it('skips epoch 0 and the year 3000 as far-out, and a lone time a month away as an outlier', () => {
    const times = [T0, T0 + 1_000, T0 + 2_000, 0, T0 + 3_000, Date.UTC(3000, 0, 1), T0 + 30 * DAY, T0 + 4_000];
    const r = run(times);
    expect(r.rejected).toEqual([3, 5, 6]);
    expect(r.reasons).toEqual(['farOut', 'farOut', 'outlier']);
    expect(r.believed).toEqual([0, 1, 2, 4, 7]);
  });

  it("a stale clock's burst before the real records (three lines of 2000-01-01): outliers, never believed, never the position", () => {
    const stale = [0, 1, 2].map((s) => Date.UTC(2000, 0, 1, 0, 0, 5 + s));
    const real = Array.from({ length: 100 }, (_, i) => T0 + i * 1_000);
    const r = run([...stale, ...real], 20);
    expect(r.rejected).toEqual([0, 1, 2]);
    expect(r.reasons).toEqual(['outlier', 'outlier', 'outlier']);
    expect(r.believed).toEqual(real.map((_, i) => i + 3));
    // Once quiet (4 × minCluster records without one), the stale cluster no longer holds the position.
    expect(r.positions.at(-1)).toBeGreaterThanOrEqual(T0);
  });

  it(`believes a jump once ${MIN} records are there (the log was quiet for two days), and the old cluster, once quiet, stops holding the position`, () => {
    const later = T0 + 2 * DAY;
    const times = [T0, T0 + 1_000, T0 + 2_000, ...Array.from({ length: 20 }, (_, i) => later + i * 1_000)];
    const r = run(times);
    expect(r.rejected).toEqual([]);
    expect(r.believed).toEqual(times.map((_, i) => i));
    expect(r.positions[5]).toBe(T0);
    expect(r.positions.at(-1)).toBeGreaterThanOrEqual(later);
  });

  it('two clocks days apart, one line each in turn (two hosts into one file): every record believed', () => {
    const times = Array.from({ length: 400 }, (_, i) => T0 + i * 1_000 + (i % 2 === 1 ? 3 * DAY : 0));
    const r = run(times, 20);
    expect(r.rejected).toEqual([]);
    expect(r.believed).toHaveLength(400);
    // The clock behind holds the position: the records ahead wait for it instead of making it late.
    expect(r.positions.at(-1)).toBeLessThan(T0 + DAY);
  });

  it('believes a file of one or two records, the largest cluster of a small file, and skips the others', () => {
    expect(run([T0]).believed).toEqual([0]);
    expect(run([T0, T0 + 5_000]).believed).toEqual([0, 1]);
    const r = run([T0 + 40 * DAY, T0, T0 + 1_000]);
    expect(r.believed).toEqual([1, 2]);
    expect(r.rejected).toEqual([0]);
    const end = run([T0, T0 + 1_000, T0 + 2_000, T0 + 9 * DAY]);
    expect(end.rejected).toEqual([3]);
  });

  it(`holds at most ${MAX_TRACKS} clusters: a record scattered over more years is an outlier, the memory stays bounded`, () => {
    const head = Array.from({ length: 10 }, (_, i) => T0 + i * 1_000);
    const times = [...head, ...Array.from({ length: 100 }, (_, i) => Date.UTC(2001 + (i % 25), 0, 1)), T0 + 20_000];
    const r = run(times, 10);
    expect(r.believed).toEqual([...head.map((_, i) => i), 110]);
    expect(r.rejected).toHaveLength(100);
    expect(new Set(r.reasons)).toEqual(new Set(['outlier']));
  });
});
