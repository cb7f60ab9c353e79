// Which record times a replay believes (src/history/time-filter.ts): far-out times are skipped without
// moving the timeline, a real jump in a log (confirmed by the records after it) moves it.
import { describe, expect, it } from 'vitest';
import { CONFIRMATIONS, TimeFilter } from '../src/history/time-filter.js';

const H = 3_600_000;
const DAY = 24 * H;
const T0 = Date.UTC(2024, 4, 7);

function run(times: number[]) {
  const believed: number[] = [];
  const rejected: number[] = [];
  const f = new TimeFilter<number>({ maxJumpMs: DAY, notBeforeMs: Date.UTC(2000, 0, 1), notAfterMs: Date.UTC(2030, 0, 1) }, (_t, i) => believed.push(i), (i) => rejected.push(i));
  times.forEach((t, i) => f.offer(t, i));
  f.end();
  return { believed, rejected, position: f.position };
}

describe('history time filter', () => {
  it('believes a log whose records follow each other, slightly out of order, in their order', () => {
    const times = [0, 2_000, 1_000, 3_000, 2_500, 10_000].map((d) => T0 + d);
    expect(run(times)).toEqual({ believed: [0, 1, 2, 3, 4, 5], rejected: [], position: T0 + 3_000 });
  });

  it('skips epoch 0 and the year 3000 in the middle of a log without moving its position', () => {
    const times = [T0, T0 + 1_000, T0 + 2_000, 0, T0 + 3_000, Date.UTC(3000, 0, 1), T0 + 4_000];
    const r = run(times);
    expect(r.rejected).toEqual([3, 5]);
    expect(r.believed).toEqual([0, 1, 2, 4, 6]);
  });

  it('skips a time inside the believable years but a month away, when the next record is back on the timeline', () => {
    const times = [T0, T0 + 1_000, T0 + 2_000, T0 + 30 * DAY, T0 + 3_000];
    expect(run(times).rejected).toEqual([3]);
  });

  it(`moves the timeline when ${CONFIRMATIONS} records in a row agree on a jump (the log was quiet for two days)`, () => {
    const later = T0 + 2 * DAY;
    const times = [T0, T0 + 1_000, T0 + 2_000, later, later + 1_000, later + 2_000, later + 3_000];
    const r = run(times);
    expect(r.rejected).toEqual([]);
    expect(r.believed).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(r.position).toBe(later + 2_000);
  });

  it('does not move the timeline for two agreeing outliers, and skips them once the log is back', () => {
    const far = T0 + 40 * DAY;
    const r = run([T0, T0 + 1_000, T0 + 2_000, far, far + 1, T0 + 3_000]);
    expect(r.rejected).toEqual([3, 4]);
    expect(r.position).toBe(T0 + 2_000);
  });

  it('starts a file at the records that agree, skipping a far-out first line', () => {
    const r = run([T0 + 40 * DAY, T0, T0 + 1_000, T0 + 2_000]);
    expect(r.rejected).toEqual([0]);
    expect(r.believed).toEqual([1, 2, 3]);
  });

  it('believes a file of one or two records (nothing to confirm them against), and skips an unconfirmed jump at the end of a file', () => {
    expect(run([T0]).believed).toEqual([0]);
    expect(run([T0, T0 + 5_000]).believed).toEqual([0, 1]);
    const r = run([T0, T0 + 1_000, T0 + 2_000, T0 + 9 * DAY]);
    expect(r.rejected).toEqual([3]);
  });

  it('has no position before it believed a record; the median of the last three after', () => {
    const f = new TimeFilter<number>({ maxJumpMs: DAY, notBeforeMs: 0, notAfterMs: Infinity }, () => {}, () => {});
    expect(f.position).toBeUndefined();
    for (const t of [10, 30, 20]) f.offer(T0 + t, 0);
    expect(f.position).toBe(T0 + 20);
    f.offer(T0 + 5, 0); // 30, 20, 5 → 20
    expect(f.position).toBe(T0 + 20);
  });
});
