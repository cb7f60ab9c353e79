// `backtest`: the pack's alerts evaluated on a log's own timeline. The logs are replayed (replay.ts) at the
// rule evaluation step; after each step the counters are kept series by series (series-totals.ts), every
// alert of src/pack/alert-specs.ts with a condition over the log is evaluated from them as Prometheus
// evaluates the recording rules over an export (recorded-signals.ts): the same comparisons, thresholds, windows and traffic guards, from the
// same specs the rules are rendered from, and the same pending/for/keep_firing_for states as Prometheus
// (alert-state.ts). The whole input is one aggregation group (one job); the canary is per cohort. The two
// early warnings of early-warning.ts are PromQL, not conditions: earlyWarnings() reads their rules.
import type { Config } from '../config/schema.js';
import type { InputEvents } from '../record/source-inputs.js';
import { histogramBuckets, thresholds } from '../metrics/buckets.js';
import { alertSpecs, P0_ALERT } from '../pack/alert-specs.js';
import { DRIFT_CREEPING_ALERT, earlyWarningSpecs, WARMUP_SLIDING_ALERT } from '../pack/early-warning.js';
import { holds, type AlertSpec, type Comparison, type SignalRef } from '../pack/conditions.js';
import { groupingOf } from '../pack/grouping.js';
import { sloWindows } from '../pack/slos.js';
import { AlertState, type FiringInterval } from './alert-state.js';
import { hitQuantile, signalContext, signalValue, type SignalContext } from './recorded-signals.js';
import { replay, type ReplaySummary } from './replay.js';
import { SeriesTotals, type WindowSums } from './series-totals.js';

export interface BacktestOptions {
  /** The evaluation step (pack.evaluationInterval unless --step says otherwise). */
  stepMs: number;
  nowMs: number;
  /** Told what the first lines of each input showed. */
  input?: InputEvents;
  /** Aborted, the replay stops (rejecting with its reason). */
  interrupt?: AbortSignal;
  /** The longest timeline (ReplayOptions.maxSpanMs). */
  maxSpanMs?: number;
  /**
   * The target labels of the export this backtest is to agree with (`--label`, as `export --label`;
   * default job and instance): their names can change the order Prometheus sums series in, so the last
   * bit, and those that are aggregation labels name the group every alert is of.
   */
  targetLabels?: readonly (readonly [string, string])[];
  /** Also evaluate the naive mean-latency alert (history.naive) and how much earlier the pack's fired (--compare-naive). */
  compareNaive?: boolean;
}

/** The alerts whose lead over the naive alert `--compare-naive` reports: the P0 and the warm-up alerts. */
export const LEAD_ALERTS = [P0_ALERT, 'ZeroPlaneWarmupEfficiencyLow', WARMUP_SLIDING_ALERT] as const;

export interface NaiveOutcome {
  /** factor × baseline, seconds: the mean latency it fires above. */
  thresholdSeconds: number;
  factor: number;
  forMs: number;
  intervals: FiringInterval[];
  /** Per LEAD_ALERTS alert that was evaluated: its first firing and how long before the naive alert's first (negative: after). */
  leads: { alert: string; firstMs: number | undefined; leadMs: number | undefined }[];
}

/** The target labels an export writes unless told otherwise (their values only name the group). */
const DEFAULT_TARGET_LABELS: readonly (readonly [string, string])[] = [
  ['job', 'zero-plane-exporter'],
  ['instance', 'backfill'],
];

/** The four signals (and the share above the ceiling) over the rate window at one step, as the recording rules have them. */
export interface BacktestRow {
  timeMs: number;
  /** Requests in the window (undefined before the first line). */
  requests: number | undefined;
  hitRequests: number | undefined;
  hitRate: number | undefined;
  aboveCeiling: number | undefined;
  p99Drift: number | undefined;
  degraded: number | undefined;
  warmupEfficiency: number | undefined;
  /** Alert instances firing after this step's evaluation (keep_firing_for included). */
  firing: string[];
}

export interface AlertOutcome {
  alert: string;
  /** What the alert's value is: its first comparison's signal (the peak is one of these), or the early warning's p99 drift. */
  signal: SignalRef['signal'] | 'p99Drift';
  /** The group's labels (BacktestResult.group), the rule's, and `cohort` for the canary. */
  labels: Record<string, string>;
  forMs: number;
  keepFiringForMs: number;
  intervals: FiringInterval[];
}

export interface BacktestResult {
  summary: ReplaySummary;
  stepMs: number;
  rateWindowMs: number;
  /** Every alert evaluated, in the pack's order; an alert per cohort for the canary. */
  alerts: AlertOutcome[];
  /** The first firing of the P0, if it fired. */
  firstP0: FiringInterval | undefined;
  /** Alerts on the exporter itself (scrapes, absent targets, stalled sources): not in a log. */
  notEvaluated: string[];
  /** The aggregation group the whole input is: the target labels that are pack.aggregationLabels, in their order. */
  group: Record<string, string>;
  /** With compareNaive. */
  naive?: NaiveOutcome;
}

/** Every window an evaluated alert reads: the rate window, each SLO burn-rate window, the early warnings' window. */
export function backtestWindows(config: Config): number[] {
  return [...new Set([config.pack.rateWindow, ...sloWindows(config), config.pack.earlyWarning.window])];
}

interface Instance {
  spec: AlertSpec;
  cohort: string | undefined;
  name: string;
  state: AlertState;
  /** What the alert's value is (AlertOutcome.signal). */
  signal: AlertOutcome['signal'];
  /** The early warnings (PromQL `expr`, no condition): their value at this step, from early-warnings.ts. */
  value?: (win: (ms: number) => WindowSums) => number | undefined;
}

export async function backtest(config: Config, files: readonly string[], opts: BacktestOptions, onRow: (row: BacktestRow) => void | Promise<void>): Promise<BacktestResult> {
  const step = opts.stepMs;
  const windows = backtestWindows(config);
  const bad = windows.find((w) => w % step !== 0);
  if (bad !== undefined) throw new Error(`the step (${step} ms) must divide every window the alerts read (${bad} ms does not)`);
  const bounds = histogramBuckets(config);
  const t = thresholds(config.signals);
  const target = opts.targetLabels ?? DEFAULT_TARGET_LABELS;
  const group = groupOf(config, target);
  const ring = new SeriesTotals({
    bounds,
    ceiling: t.ceiling,
    stepMs: step,
    longestWindowMs: Math.max(...windows),
    // The rate window's series are kept for the early warnings' window too (hourly warm-up and buckets).
    rateWindowMs: Math.max(config.pack.rateWindow, config.pack.earlyWarning.window),
    stableCohorts: config.signals.stableCohorts,
    targetLabelNames: target.map(([name]) => name),
    naive: opts.compareNaive === true,
  });
  const naiveThreshold = Number((config.history.naive.factor * t.baseline).toPrecision(12));
  const naiveState = opts.compareNaive === true ? new AlertState(config.history.naive.for, 0, 'max') : undefined;
  const ctx: SignalContext = signalContext(config, bounds);
  const specs = alertSpecs(config, groupingOf(config));
  const evaluated = specs.filter((s) => s.condition !== undefined);
  const instances: Instance[] = [];
  const instanceOf = (spec: AlertSpec, cohort: string | undefined): Instance => {
    let i = instances.find((x) => x.spec === spec && x.cohort === cohort);
    if (i === undefined) {
      const first = spec.condition?.comparisons[0] as Comparison;
      const labels = { ...instanceLabels(spec), ...(cohort === undefined ? {} : { cohort }) };
      const shown = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
      const name = shown.length === 0 ? spec.alert : `${spec.alert}{${shown.join(',')}}`;
      i = { spec, cohort, name, state: new AlertState(spec.for, spec.keepFiringFor, first.op === '<' ? 'min' : 'max'), signal: first.ref.signal };
      instances.push(i);
    }
    return i;
  };
  for (const spec of evaluated) if (!spec.per.includes('cohort')) instanceOf(spec, undefined);
  const early = earlyWarnings(config, ctx, t.baseline);
  for (const spec of earlyWarningSpecs(config, groupingOf(config))) {
    const e = early.get(spec.alert);
    if (e === undefined) continue;
    instances.push({ spec, cohort: undefined, name: spec.alert, state: new AlertState(spec.for, spec.keepFiringFor, e.extreme), signal: e.signal, value: e.value });
  }

  const summary = await replay(config, files, { stepMs: step, nowMs: opts.nowMs, input: opts.input, interrupt: opts.interrupt, maxSpanMs: opts.maxSpanMs }, async (timeMs, pipeline) => {
    ring.push(timeMs, pipeline.metrics);
    const cache = new Map<number, WindowSums>();
    const win = (ms: number) => {
      let w = cache.get(ms);
      if (w === undefined) cache.set(ms, (w = ring.window(ms)));
      return w;
    };
    const rate = win(config.pack.rateWindow);
    for (const spec of evaluated) if (spec.per.includes('cohort')) for (const cohort of ring.cohorts) instanceOf(spec, cohort);
    early.record(timeMs, win);
    for (const i of instances) i.state.step(timeMs, i.value === undefined ? evaluate(i.spec, i.cohort, win, ctx) : i.value(win));
    if (naiveState !== undefined) {
      // sum(rate(…_sum[w])) / sum(rate(…_count[w])) > factor × baseline: every request, hit or not.
      const mean = rate.linesNow === 0 ? undefined : (rate.sum('durationSum', true) ?? NaN) / (rate.sum('durationCount', true) ?? NaN);
      naiveState.step(timeMs, mean !== undefined && mean > naiveThreshold ? mean : undefined);
    }
    const value = (signal: 'hitRate' | 'aboveCeiling' | 'degraded' | 'warmupEfficiency' | 'requests' | 'hitRequests') => signalValue({ signal, window: config.pack.rateWindow }, rate, ctx);
    const p99 = hitQuantile(0.99, rate, bounds);
    await onRow({
      timeMs,
      requests: value('requests'),
      hitRequests: value('hitRequests'),
      hitRate: value('hitRate'),
      aboveCeiling: value('aboveCeiling'),
      p99Drift: p99 === undefined ? undefined : p99 / t.baseline - 1,
      degraded: value('degraded'),
      warmupEfficiency: value('warmupEfficiency'),
      firing: instances.filter((i) => i.state.firing).map((i) => i.name),
    });
  });

  const alerts = instances.map((i) => ({
    alert: i.spec.alert,
    signal: i.signal,
    labels: { ...group, ...i.spec.labels, ...(i.cohort === undefined ? {} : { cohort: i.cohort }) },
    forMs: i.spec.for,
    keepFiringForMs: i.spec.keepFiringFor,
    intervals: i.state.intervals,
  }));
  const p0 = alerts.filter((a) => a.alert === P0_ALERT).flatMap((a) => a.intervals);
  const firstP0 = p0.reduce<FiringInterval | undefined>((first, x) => (first === undefined || x.startMs < first.startMs ? x : first), undefined);
  return {
    summary,
    stepMs: step,
    rateWindowMs: config.pack.rateWindow,
    alerts,
    firstP0,
    notEvaluated: specs.filter((s) => s.condition === undefined).map((s) => s.alert),
    group,
    ...(naiveState === undefined ? {} : { naive: naiveOutcome(config, naiveThreshold, naiveState.intervals, alerts) }),
  };
}

function naiveOutcome(config: Config, thresholdSeconds: number, intervals: FiringInterval[], alerts: AlertOutcome[]): NaiveOutcome {
  const naiveFirst = intervals[0]?.startMs;
  const leads = LEAD_ALERTS.filter((name) => alerts.some((a) => a.alert === name)).map((alert) => {
    const starts = alerts.filter((a) => a.alert === alert).flatMap((a) => a.intervals.map((i) => i.startMs));
    const firstMs = starts.length === 0 ? undefined : Math.min(...starts);
    return { alert, firstMs, leadMs: firstMs === undefined || naiveFirst === undefined ? undefined : naiveFirst - firstMs };
  });
  return { thresholdSeconds, factor: config.history.naive.factor, forMs: config.history.naive.for, intervals, leads };
}

/** The aggregation labels the target labels give a value (Prometheus drops an empty one), in pack.aggregationLabels' order. */
function groupOf(config: Config, target: readonly (readonly [string, string])[]): Record<string, string> {
  const values = new Map(target);
  const group: Record<string, string> = {};
  for (const name of config.pack.aggregationLabels) {
    const v = values.get(name);
    if (v !== undefined && v !== '') group[name] = v;
  }
  return group;
}

interface EarlyWarning {
  signal: AlertOutcome['signal'];
  extreme: 'max' | 'min';
  value: (win: (ms: number) => WindowSums) => number | undefined;
}

/**
 * ZeroPlaneWarmupEfficiencySliding and ZeroPlaneP99DriftCreeping (early-warning.ts) as Prometheus 2.42
 * evaluates their rules over an export: the 1 h warm-up efficiency and p99 drift as the 5 m ones (the same
 * arithmetic over the early-warning window), and the 7 d level as its subquery has it,
 * sum_over_time((eff1h × warmup1h)[7d:1h]) / sum_over_time(warmup1h[7d:1h]): the recorded 1 h values at
 * each multiple of the window (Prometheus aligns subquery steps to the epoch) from the level's start to
 * now, both ends included, summed in time order. An hour whose 1 h efficiency is 0/0 (no warm-up
 * outcome, while the series exist) is NaN; the rule drops it (`>= 0`), so it adds nothing to the level,
 * and the level has no value only when every hour is such an hour.
 * `record` is told every step before the alerts read the level.
 */
function earlyWarnings(config: Config, ctx: SignalContext, baseline: number): Map<string, EarlyWarning> & { record(timeMs: number, win: (ms: number) => WindowSums): void } {
  const e = config.pack.earlyWarning;
  const s = config.signals;
  const min = config.alerts.minRequests;
  const window = e.window;
  const hourly: { timeMs: number; product: number; outcomes: number }[] = [];
  let level: number | undefined;
  const efficiency = (w: WindowSums): number | undefined => {
    if (w.linesNow === 0) return undefined;
    const outcomes = w.sum('warmup', true);
    const hits = w.sum('warmupHits', true);
    return outcomes === undefined || hits === undefined ? undefined : hits / outcomes;
  };
  const map = new Map<string, EarlyWarning>([
    [
      WARMUP_SLIDING_ALERT,
      {
        signal: 'warmupEfficiency',
        extreme: 'min',
        value: (win) => {
          const w = win(window);
          const eff = efficiency(w);
          const outcomes = signalValue({ signal: 'warmupOutcomes', window }, w, ctx);
          if (eff === undefined || level === undefined || outcomes === undefined) return undefined;
          return eff < level - e.warmupDrop && eff >= s.warmupEfficiencyTarget && outcomes >= min ? eff : undefined;
        },
      },
    ],
    [
      DRIFT_CREEPING_ALERT,
      {
        signal: 'p99Drift',
        extreme: 'max',
        value: (win) => {
          const w = win(window);
          const p99 = hitQuantile(0.99, w, ctx.bounds);
          const requests = signalValue({ signal: 'hitRequests', window }, w, ctx);
          if (p99 === undefined || requests === undefined) return undefined;
          const drift = p99 / baseline - 1;
          return drift > e.driftAbove && drift <= s.tolerance && requests >= min ? drift : undefined;
        },
      },
    ],
  ]);
  return Object.assign(map, {
    record(timeMs: number, win: (ms: number) => WindowSums) {
      const w = win(window);
      if (timeMs % window === 0) {
        const eff = efficiency(w);
        const outcomes = w.linesNow === 0 ? undefined : w.sum('warmup', true);
        if (eff !== undefined && outcomes !== undefined) hourly.push({ timeMs, product: eff * outcomes, outcomes });
      }
      while (hourly.length > 0 && (hourly[0] as { timeMs: number }).timeMs < timeMs - e.baselineWindow) hourly.shift();
      if (hourly.length === 0) {
        level = undefined;
        return;
      }
      let product = 0;
      let outcomes = 0;
      let products = 0;
      for (const h of hourly) {
        if (!Number.isNaN(h.product)) {
          product += h.product;
          products += 1;
        }
        outcomes += h.outcomes;
      }
      level = products === 0 ? undefined : product / outcomes;
    },
  });
}

/** The labels that tell a rule's instances apart in output (the SLO pairs' windows), not severity or priority. */
function instanceLabels(spec: AlertSpec): Record<string, string> {
  return Object.fromEntries(Object.entries(spec.labels).filter(([k]) => k !== 'severity' && k !== 'priority' && k !== 'slo'));
}

/**
 * The value the alert's expression has at this step, undefined when it has no result: as renderCondition
 * writes it, `all` is the first comparison's value when every one holds, `any` the first that holds
 * (PromQL's `or` keeps its left side), and every guard must hold too.
 */
function evaluate(spec: AlertSpec, cohort: string | undefined, win: (ms: number) => WindowSums, ctx: SignalContext): number | undefined {
  const condition = spec.condition;
  if (condition === undefined) return undefined;
  const held = (c: Comparison): number | undefined => {
    const v = signalValue(c.ref, win(c.ref.window), ctx, cohort);
    return v !== undefined && holds(c.op, v, c.value) ? v : undefined;
  };
  let value: number | undefined;
  if (condition.combine === 'all') {
    for (const c of condition.comparisons) {
      const v = held(c);
      if (v === undefined) return undefined;
      value ??= v;
    }
  } else {
    for (const c of condition.comparisons) {
      value = held(c);
      if (value !== undefined) break;
    }
    if (value === undefined) return undefined;
  }
  for (const g of spec.guards) if (held(g) === undefined) return undefined;
  return value;
}
