// How far V8 lets the heap grow before it collects. Node's defaults trade memory for nothing the exporter
// needs. The young generation grows to 2 × 16 MiB under any steady allocation: every command holds it at
// 2 × 4 MiB, which costs `serve` (at 100k–200k lines/s) and `report` no CPU and saves them 8–24 MiB. The
// old generation may grow to up to 4× what the last full collection left, so garbage that a long one-shot
// run promotes (`report` over 150 files: a pipeline per file in the worker) piles up for tens of MiB: the
// one-shot commands let it grow by half instead (112 → 95 MiB over 150 files, same CPU). `serve` keeps
// V8's own old-generation heuristics, which favour short pauses: with the tighter bound, back-to-back
// scrapes of 46k series met a full collection more often (p99 75–85 → 110–145 ms). bench/RESULTS.md.
//
// Both bounds are V8 flags. The young generation's maximum (--max-semi-space-size) is read only when the
// heap is set up, but the factor V8 grows it by is read each time it grows: it is 2 until the young
// generation has reached the cap, then 1. --heap-growing-percent is read whenever V8 sets the next limit of
// the old generation, so it is set once. A flag the user gives node (its arguments or NODE_OPTIONS) is
// theirs: that bound is then left alone.
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/** The semi-space size the young generation is held to, in MiB (V8's own default maximum is 16). */
export const SEMI_SPACE_MIB = 4;
/** In one-shot commands, the old generation may grow by this share of what a full collection left before the next one. */
export const HEAP_GROWING_PERCENT = 50;

/** Whether node was started with the V8 flag `name` (in its arguments or in NODE_OPTIONS), in either spelling. */
export function nodeFlagGiven(name: string, execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  const pattern = new RegExp(`^--${name.replace(/[-_]/g, '[-_]')}(=|$)`);
  return execArgv.some((a) => pattern.test(a)) || (nodeOptions ?? '').split(/\s+/).some((a) => pattern.test(a));
}

/** Bytes of V8's young generation now (both semi-spaces). */
export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Holds this process's heap to the bounds above from now on (a young generation V8 had already grown stays
 * until V8 shrinks it, which it does once the process idles); `oneShot` adds the old generation's bound.
 * Returns what undoes it. A bound the user set is left alone; if this V8 refuses a flag at run time, `why`
 * is told and that bound is left to V8.
 */
export function limitHeap(opts: { oneShot: boolean; headroom?: boolean }, why: (text: string) => void = () => {}): () => void {
  const given = (flag: string) => nodeFlagGiven(flag, process.execArgv, process.env.NODE_OPTIONS);
  const undo: (() => void)[] = [];
  try {
    if (opts.oneShot && !given('heap-growing-percent')) {
      v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
      undo.push(() => v8.setFlagsFromString('--heap-growing-percent=0'));
    }
    if (!given('max-semi-space-size')) undo.push(capYoungGeneration(2 * SEMI_SPACE_MIB * 1024 * 1024, opts.headroom === true));
  } catch (err) {
    why(`heap left to V8's defaults: ${(err as Error).message}`);
  }
  return () => {
    for (const u of undo) u();
  };
}

/** The check of the cap in force, if any (see recheckHeapLimits). */
let heldCheck: (() => void) | undefined;

/**
 * Sets the young generation's growth factor again for this thread's heap. V8's flags are per process: a
 * worker thread starting (serve's parse workers) puts the factor back to V8's default behind our back,
 * and the next collection here then doubled the young generation past the cap (8 → 16 MiB, one run in
 * three). Called once a worker is online.
 */
export function recheckHeapLimits(): void {
  heldCheck?.();
}

/**
 * Keeps the young generation at most `cap` bytes; returns what undoes it. With `headroom`, growth stops one
 * step early (at cap / 2), so one more step taken before the check runs still ends at the cap: `serve`,
 * whose serving thread parses nothing with parse workers on and whose workers, starting, put V8's growth
 * factor back (recheckHeapLimits), so two collections could come before a check.
 */
function capYoungGeneration(cap: number, headroom: boolean): () => void {
  const stopAt = headroom ? cap / 2 : cap;
  let factor = 0;
  const grow = (f: number) => {
    if (f === factor) return;
    v8.setFlagsFromString(`--semi-space-growth-factor=${f}`);
    factor = f;
  };
  // Checked after every collection: V8 grows the young generation at the end of one, by one step, and only
  // once survivors as large as it have accumulated, so the next check comes long before the next step.
  const check = () => grow(youngGenerationBytes() >= stopAt ? 1 : 2);
  check();
  // A worker may have set the flag since: set it whatever it was last set to here.
  heldCheck = () => {
    factor = 0;
    check();
  };
  const observer = new PerformanceObserver(check);
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    heldCheck = undefined;
    grow(2);
  };
}
