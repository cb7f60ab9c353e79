// `compare`: two groups of requests (two selectors over one input, or two inputs) compared the way the
// article says to: on their convergence radius, not on a t-test. The logs are replayed on their own
// timeline (replay.ts) with the step set to the window, so the windows are backtest's rate windows
// (pack.rateWindow, aligned on the clock) taken end to end: disjoint, so each is one independent unit
// for the bootstrap. Per window and group: the hit requests' p99 drift (the sketch's p99, as `report`)
// and their latency moments. Compared, b against a, each with a seeded bootstrap interval over the
// windows (bootstrap.ts): σ of p99 drift across windows, latency σ over all windows (pooled moments), and
// the mean latency. Only the two σ decide; the mean is shown, never decides.
import type { Config } from '../config/schema.js';
import type { GatewayRecord } from '../record/parse-record.js';
import type { InputEvents } from '../record/source-inputs.js';
import { SignalClassifier } from '../signals/classify.js';
import { Aggregate } from '../windows/aggregate.js';
import { GROUP_LABELS, isGroupLabel, type GroupLabel } from '../windows/grouped-aggregates.js';
import { summarize } from '../windows/summarize.js';
import { bootstrapIntervals, type Interval, type PairStatistic } from './bootstrap.js';
import { replay, type ReplaySummary } from './replay.js';

/** A group's condition: every label must have its value ("" = the record has none). */
export type Selector = { label: GroupLabel; value: string }[];

/** A selector or group that cannot be used: the command's usage error (exit 2). */
export class CompareUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CompareUsageError';
  }
}

/** `cohort=canary` or `cohort=canary,model=m`. */
export function parseSelector(text: string, flag: string): Selector {
  const parts = text.split(',');
  const selector: Selector = [];
  for (const part of parts) {
    const eq = part.indexOf('=');
    const label = eq < 0 ? part : part.slice(0, eq);
    if (eq < 0 || !isGroupLabel(label)) throw new CompareUsageError(`${flag}: "${part}" is not LABEL=VALUE with LABEL one of ${GROUP_LABELS.join(', ')} (e.g. ${flag} cohort=canary)`);
    if (selector.some((s) => s.label === label)) throw new CompareUsageError(`${flag}: ${label} is given twice in "${text}"`);
    selector.push({ label, value: part.slice(eq + 1) });
  }
  return selector;
}

export const selectorText = (s: Selector) => s.map((x) => `${x.label}=${x.value}`).join(',');

const matches = (s: Selector, r: GatewayRecord) => s.every((x) => r[x.label] === x.value);

/** The figures of one group over one window. */
export interface WindowFigures {
  endMs: number;
  requests: number;
  hits: number;
  p99Drift: number;
  /** Hit latency moments (seconds): count, mean, sum of squared deviations. */
  n: number;
  mean: number;
  m2: number;
}

export interface CompareOptions {
  windowMs: number;
  nowMs: number;
  /** Windows with fewer Zero-Plane requests than this are left out (their p99 is a handful of requests). */
  minWindowHits: number;
  minWindows: number;
  iterations: number;
  confidence: number;
  seed: number;
  input?: InputEvents;
  interrupt?: AbortSignal;
  maxSpanMs?: number;
}

/** Either two selectors over the same files, or each group its own files. */
export type CompareInput = { kind: 'selectors'; files: string[]; a: Selector; b: Selector } | { kind: 'files'; a: string; b: string };

export interface GroupResult {
  /** `cohort=stable`, or the file. */
  group: string;
  requests: number;
  hits: number;
  /** Windows used (at least minWindowHits Zero-Plane requests), and windows with requests left out. */
  windows: number;
  thinWindows: number;
  meanLatencySeconds: number | null;
  /** The convergence radius: σ of every hit latency of the windows used. */
  latencyStddevSeconds: number | null;
  p99DriftMean: number | null;
  /** σ of the per-window p99 drift (sample, n − 1). */
  p99DriftStddev: number | null;
}

export interface CompareResult {
  method: string;
  windowSeconds: number;
  minWindowHits: number;
  minWindows: number;
  iterations: number;
  /** For the two deciding intervals together; each interval is at intervalConfidence(confidence). */
  confidence: number;
  intervalConfidence: number;
  seed: number;
  a: GroupResult;
  b: GroupResult;
  /** b / a, with the bootstrap interval; null when there are too few windows. */
  p99DriftStddevRatio: Interval | null;
  latencyStddevRatio: Interval | null;
  /** b / a − 1: shown, never decides. */
  meanLatencyChange: Interval | null;
  /** The group with the narrower convergence radius, or null: no verdict (not an error). */
  tighter: 'a' | 'b' | null;
  verdict: string;
  /** Per replay (one for selectors, two for files). */
  inputs: ReplaySummary[];
}

export const COMPARE_METHOD =
  'percentile bootstrap over disjoint windows (resampled with replacement, seeded): b/a of the σ of per-window p99 drift and of the latency σ (convergence radius) of Zero-Plane requests; ' +
  'a ratio whose interval lies wholly above or below 1 decides, each interval at 1 − (1 − confidence)/2 so that the two together hold the confidence (Bonferroni); ' +
  'the mean latency is shown and never decides; no t-test (on distributions this tight its p-value goes to 0)';

/** Each of the two deciding intervals' confidence: together they hold `confidence` (Bonferroni). */
export const intervalConfidence = (confidence: number) => 1 - (1 - confidence) / 2;

/** Values of each selector label kept for that message. */
const SEEN_VALUES = 20;

interface Collector {
  selector: Selector | undefined;
  current: Aggregate;
  windows: WindowFigures[];
  thin: number;
  requests: number;
  hits: number;
}

export async function compareGroups(config: Config, input: CompareInput, o: CompareOptions): Promise<CompareResult> {
  const classifier = new SignalClassifier(config.headers);
  const accuracy = config.window.quantileRelativeAccuracy;
  const collector = (selector: Selector | undefined): Collector => ({ selector, current: new Aggregate(accuracy), windows: [], thin: 0, requests: 0, hits: 0 });
  const a = collector(input.kind === 'selectors' ? input.a : undefined);
  const b = collector(input.kind === 'selectors' ? input.b : undefined);
  let overlap = 0;
  /** The values of the selectors' labels seen (a few each), to name them when a selector matches nothing. */
  const seen = new Map<GroupLabel, Set<string>>();
  if (input.kind === 'selectors') for (const s of [...input.a, ...input.b]) seen.set(s.label, new Set());

  const run = async (files: string[], groups: Collector[]) => {
    const close = (timeMs: number) => {
      for (const g of groups) {
        const agg = g.current;
        if (agg.requests === 0) continue;
        g.requests += agg.requests;
        g.hits += agg.hits;
        const drift = summarize(agg, config.signals).p99Drift;
        if (agg.hits < o.minWindowHits || drift === null) g.thin++;
        else {
          const m = agg.state().moments;
          g.windows.push({ endMs: timeMs, requests: agg.requests, hits: agg.hits, p99Drift: drift, n: m.n, mean: m.mean, m2: m.m2 });
        }
        g.current = new Aggregate(accuracy);
      }
    };
    return replay(
      config,
      files,
      {
        stepMs: o.windowMs,
        nowMs: o.nowMs,
        input: o.input,
        interrupt: o.interrupt,
        maxSpanMs: o.maxSpanMs,
        onRecord: (r) => {
          for (const [label, values] of seen) if (values.size < SEEN_VALUES) values.add(r[label]);
          let matched = 0;
          for (const g of groups) {
            if (g.selector !== undefined && !matches(g.selector, r)) continue;
            g.current.add(classifier.classify(r), r.latencySeconds);
            matched++;
          }
          if (matched > 1) overlap++;
        },
      },
      (timeMs) => close(timeMs),
    );
  };

  const inputs = input.kind === 'selectors' ? [await run(input.files, [a, b])] : [await run([input.a], [a]), await run([input.b], [b])];
  if (overlap > 0)
    throw new CompareUsageError(
      `--a ${selectorText(input.kind === 'selectors' ? input.a : [])} and --b ${selectorText(input.kind === 'selectors' ? input.b : [])} overlap: ${overlap} records match both`,
    );
  if (input.kind === 'selectors') {
    for (const [flag, g] of [
      ['--a', a],
      ['--b', b],
    ] as const) {
      if (g.requests === 0 && inputs[0] !== undefined && inputs[0].records > 0) {
        const values = [...seen].map(
          ([label, v]) =>
            `${label} ${[...v]
              .sort()
              .map((x) => (x === '' ? '(none)' : x))
              .join(', ')}${v.size >= SEEN_VALUES ? ', …' : ''}`,
        );
        throw new CompareUsageError(`${flag} ${selectorText(g.selector ?? [])} matches no record of the input (${inputs[0].records} records; values seen: ${values.join('; ')})`);
      }
    }
  }

  const titles = input.kind === 'selectors' ? [selectorText(input.a), selectorText(input.b)] : [input.a, input.b];
  const result: CompareResult = {
    method: COMPARE_METHOD,
    windowSeconds: o.windowMs / 1000,
    minWindowHits: o.minWindowHits,
    minWindows: o.minWindows,
    iterations: o.iterations,
    confidence: o.confidence,
    intervalConfidence: intervalConfidence(o.confidence),
    seed: o.seed,
    a: groupResult(titles[0] as string, a),
    b: groupResult(titles[1] as string, b),
    p99DriftStddevRatio: null,
    latencyStddevRatio: null,
    meanLatencyChange: null,
    tighter: null,
    verdict: '',
    inputs,
  };
  const few = [a, b].filter((g) => g.windows.length < o.minWindows);
  if (few.length > 0) {
    result.verdict = `no verdict: too few windows (${few.map((g) => `${g === a ? 'a' : 'b'} has ${g.windows.length}`).join(', ')}; at least ${o.minWindows} each with ${o.minWindowHits} Zero-Plane requests)`;
    return result;
  }
  const stats: PairStatistic<WindowFigures>[] = [(x, y) => driftStddev(y) / driftStddev(x), (x, y) => pooledStddev(y) / pooledStddev(x), (x, y) => pooled(y).mean / pooled(x).mean - 1];
  const [drift, latency, mean] = bootstrapIntervals(a.windows, b.windows, stats, { iterations: o.iterations, confidence: intervalConfidence(o.confidence), seed: o.seed }) as [
    Interval,
    Interval,
    Interval,
  ];
  result.p99DriftStddevRatio = drift;
  result.latencyStddevRatio = latency;
  result.meanLatencyChange = mean;
  const decided = decide(drift, latency);
  result.tighter = decided.tighter;
  result.verdict = decided.verdict;
  return result;
}

/** Which group is tighter: b's radius wider on one σ and not narrower on the other → a, and the other way round. */
function decide(drift: Interval, latency: Interval): { tighter: 'a' | 'b' | null; verdict: string } {
  const side = (i: Interval) => (i.low > 1 ? 'wider' : i.high < 1 ? 'narrower' : 'equal');
  const sides = [side(drift), side(latency)];
  const wider = sides.includes('wider');
  const narrower = sides.includes('narrower');
  if (wider && narrower) return { tighter: null, verdict: "no verdict: b's p99 drift σ and latency σ move in opposite directions" };
  if (wider) return { tighter: 'a', verdict: "a is tighter: b's convergence radius is wider (reject b)" };
  if (narrower) return { tighter: 'b', verdict: "b is tighter: b's convergence radius is narrower" };
  return { tighter: null, verdict: 'no verdict: the two σ are equal within their intervals' };
}

function groupResult(group: string, c: Collector): GroupResult {
  const w = c.windows;
  const p = w.length === 0 ? undefined : pooled(w);
  return {
    group,
    requests: c.requests,
    hits: c.hits,
    windows: w.length,
    thinWindows: c.thin,
    meanLatencySeconds: p === undefined ? null : p.mean,
    latencyStddevSeconds: p === undefined ? null : Math.sqrt(p.m2 / p.n),
    p99DriftMean: w.length === 0 ? null : w.reduce((s, x) => s + x.p99Drift, 0) / w.length,
    p99DriftStddev: w.length < 2 ? null : driftStddev(w),
  };
}

/** Sample σ (n − 1) of the windows' p99 drift. */
function driftStddev(w: readonly WindowFigures[]): number {
  let mean = 0;
  for (const x of w) mean += x.p99Drift;
  mean /= w.length;
  let ss = 0;
  for (const x of w) ss += (x.p99Drift - mean) ** 2;
  return Math.sqrt(ss / (w.length - 1));
}

/** The moments of every hit latency of the windows (Chan et al., as Aggregate.merge). */
function pooled(w: readonly WindowFigures[]): { n: number; mean: number; m2: number } {
  let n = 0;
  let mean = 0;
  let m2 = 0;
  for (const x of w) {
    if (x.n === 0) continue;
    const total = n + x.n;
    const delta = x.mean - mean;
    m2 += x.m2 + (delta * delta * n * x.n) / total;
    mean += (delta * x.n) / total;
    n = total;
  }
  return { n, mean, m2 };
}

const pooledStddev = (w: readonly WindowFigures[]) => {
  const p = pooled(w);
  return Math.sqrt(p.m2 / p.n);
};
