// Small formatting helpers shared by the three dashboards.
import type { Thresholds } from '../metrics/buckets.js';
import { ms, pct } from '../pack/figures.js';
import type { Step } from './panels.js';

// The pack's figures (pack/figures.ts): the mixin finds the dashboards' thresholds by the same digits.
export { ms, pct };

/** Every dashboard carries these tags; the dashboard links list the others by the first one. */
export const TAGS = ['zero-plane', 'generated'];

/** "[175.75 ms, 194.25 ms] (baseline 185 ms ± 5 %)". */
export function describeBand(t: Thresholds, tolerance: number): string {
  return `[${ms(t.floor)}, ${ms(t.ceiling)}] (baseline ${ms(t.baseline)} ± ${pct(tolerance)})`;
}

/** Dashed lines at the floor (green above it) and the ceiling (red above it); nothing below the floor. */
export function bandSteps(t: Thresholds): Step[] {
  return [
    { value: null, color: 'transparent' },
    { value: t.floor, color: 'green' },
    { value: t.ceiling, color: 'red' },
  ];
}
