// V8's young generation, kept at 2 × 4 MiB in every command. Node's default lets it grow to 2 × 16 MiB under
// any steady allocation, which is RSS the exporter gains nothing from: `serve` at 200k lines/s and `report`
// use the same CPU with 4 MiB semi-spaces as with 16, and hold ~24 MiB (`serve`) and ~8 MiB (`report` over
// 30 files) less (bench/RESULTS.md). The limit is a
// command-line flag of V8 (--max-semi-space-size) that a running process cannot change, but the factor
// by which V8 grows the young generation is read each time it grows: it is 2 until the young generation
// has reached the cap, then 1. A user who sets --max-semi-space-size (node's flags or NODE_OPTIONS) is
// left with exactly what they set.
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/** The semi-space size `serve` keeps to, in MiB (V8's own default maximum is 16). */
export const SEMI_SPACE_MIB = 4;

/** Whether node was started with its own --max-semi-space-size (in its flags or in NODE_OPTIONS). */
export function semiSpaceSetByUser(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  const given = (arg: string) => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(arg);
  return execArgv.some(given) || (nodeOptions ?? '').split(/\s+/).some(given);
}

/** Bytes of V8's young generation now (both semi-spaces). */
export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Keeps the young generation at most 2 × semiSpaceMiB from now on (a growth V8 had already made stays until
 * V8 shrinks it, which it does once the process idles). Returns what undoes it. Does nothing when the user
 * set --max-semi-space-size, or when this V8 does not take the flag at run time (it then says so in `why`).
 */
export function capYoungGeneration(semiSpaceMiB = SEMI_SPACE_MIB, why: (text: string) => void = () => {}): () => void {
  if (semiSpaceSetByUser(process.execArgv, process.env.NODE_OPTIONS)) return () => {};
  const cap = 2 * semiSpaceMiB * 1024 * 1024;
  let factor = 0;
  const grow = (f: number) => {
    if (f === factor) return;
    v8.setFlagsFromString(`--semi-space-growth-factor=${f}`);
    factor = f;
  };
  // Checked after every collection: V8 grows the young generation at the end of one, by one step, and only
  // once survivors as large as it have accumulated, so the next check comes long before the next step.
  const check = () => grow(youngGenerationBytes() >= cap ? 1 : 2);
  try {
    check();
  } catch (err) {
    why(`young generation left to V8: ${(err as Error).message}`);
    return () => {};
  }
  const observer = new PerformanceObserver(check);
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    grow(2);
  };
}
