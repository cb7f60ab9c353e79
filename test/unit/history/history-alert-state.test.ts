// An alert instance evaluated step by step as Prometheus 2.42's rules/alerting.go does: pending, `for:`,
// keep_firing_for, and the firing intervals with their peak (src/history/alert-state.ts).
import { describe, expect, it } from 'vitest';
import { AlertState } from '../../../src/history/alert-state.js';

const S = 30_000;

/** Evaluates `values` (undefined: no result) at steps 0, 30 s, 60 s, … */
function run(state: AlertState, values: (number | undefined)[]): AlertState {
  values.forEach((v, i) => state.step(i * S, v));
  return state;
}

describe('history alert states', () => {
  it('fires after its condition held for `for:`, not before; a pending alert that loses its result starts over', () => {
    const s = run(new AlertState(2 * 60_000, 0, 'max'), [1, 1, 1, undefined, 1, 1, 1, 1, 1, undefined]);
    // Pending from step 0, broken at step 3 (never fired); pending again from step 4 (120 s), fires at step 8.
    expect(s.intervals).toEqual([{ pendingSinceMs: 4 * S, startMs: 8 * S, endMs: 9 * S, peak: 1, peakAtMs: 8 * S }]);
  });

  it('fires at the first evaluation with for: 0', () => {
    const s = run(new AlertState(0, 0, 'max'), [undefined, 5, undefined]);
    expect(s.intervals).toEqual([{ pendingSinceMs: S, startMs: S, endMs: 2 * S, peak: 5, peakAtMs: S }]);
  });

  it('keeps firing through a dip shorter than keep_firing_for, and resolves keep_firing_for after the first step without a result', () => {
    const keep = 5 * 60_000;
    // Fires at step 0; no result at steps 2–4 (a dip), back at 5; none from step 7 on.
    const values = [0.2, 0.3, undefined, undefined, undefined, 0.9, 0.4, ...Array<undefined>(12).fill(undefined)];
    const s = run(new AlertState(0, keep, 'max'), values);
    expect(s.intervals).toHaveLength(1);
    expect(s.intervals[0]).toEqual({ pendingSinceMs: 0, startMs: 0, endMs: 7 * S + keep, peak: 0.9, peakAtMs: 5 * S });
  });

  it('still firing at the end of the log has no end; the extreme of a `<` alert is its lowest value', () => {
    const s = run(new AlertState(0, 0, 'min'), [0.99, 0.97, 0.98]);
    expect(s.firing).toBe(true);
    expect(s.intervals).toEqual([{ pendingSinceMs: 0, startMs: 0, endMs: undefined, peak: 0.97, peakAtMs: S }]);
  });

  it('a new incident after a resolve is a new interval, pending again from its first step', () => {
    const s = run(new AlertState(S, 0, 'max'), [1, 1, undefined, 2, 2, 2]);
    expect(s.intervals.map((i) => [i.pendingSinceMs, i.startMs, i.endMs])).toEqual([
      [0, S, 2 * S],
      [3 * S, 4 * S, undefined],
    ]);
  });
});
