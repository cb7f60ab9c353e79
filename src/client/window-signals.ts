// The shapes an instrumented fetch's signals() returns, declared here rather than taken from
// windows/summarize.ts and landing/verdicts.ts: those files' declarations reach the window's DDSketch
// types, which a consumer compiling with skipLibCheck: false cannot check. in-process-signals.ts holds
// these to the pipeline's own types at compile time, so they cannot drift apart.

/** The window's four signals (and what they are made of), as windows/summarize.ts computes them. */
export interface SignalValues {
  requests: number;
  hits: number;
  hitRate: number | null;
  p50Seconds: number | null;
  p99Seconds: number | null;
  p999Seconds: number | null;
  stddevSeconds: number | null;
  p99Drift: number | null;
  degradedCount: number;
  warmupEfficiency: number | null;
}

export type Verdict = 'healthy' | 'unhealthy' | 'nodata';

/** Healthy or not per signal, by the config's thresholds, as landing/verdicts.ts decides them. */
export interface Verdicts {
  hitRate: Verdict;
  p99Drift: Verdict;
  degraded: Verdict;
  warmupEfficiency: Verdict;
  /** The P0 condition: p99 above the band's ceiling and degraded requests, at the same time. */
  p0: boolean;
}

export interface WindowSignals {
  window: SignalValues;
  verdicts: Verdicts;
}
