// What `backtest` prints: the per-step table as the steps are evaluated (so memory does not grow with
// the span), then what fired when. `text` for people, `json` for programs, `csv` (the table only) for
// spreadsheets.
import { formatDuration } from '../config/duration.js';
import type { FiringInterval } from './alert-state.js';
import type { AlertOutcome, BacktestResult, BacktestRow, NaiveOutcome } from './backtest.js';
import type { ReplaySummary } from './replay.js';

export type BacktestFormat = 'text' | 'json' | 'csv';
export const BACKTEST_FORMATS: readonly BacktestFormat[] = ['text', 'json', 'csv'];

type Write = (text: string) => void | Promise<void>;

export interface BacktestWriter {
  row(row: BacktestRow): void | Promise<void>;
  end(result: BacktestResult): void | Promise<void>;
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

export function backtestWriter(format: BacktestFormat, write: Write, rateWindowMs: number): BacktestWriter {
  if (format === 'csv') return csvWriter(write);
  if (format === 'json') return jsonWriter(write);
  return textWriter(write, rateWindowMs);
}

const CSV_COLUMNS = ['time', 'requests', 'hit_requests', 'hit_rate', 'above_ceiling', 'p99_drift', 'degraded', 'warmup_efficiency', 'firing'];

function csvWriter(write: Write): BacktestWriter {
  let started = false;
  // 12 digits: what the rules compute, without the float noise of a count from a rate (898.0000000000001).
  const cell = (v: number | undefined) => (v === undefined ? '' : String(Number(v.toPrecision(12))));
  const quoted = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return {
    async row(r) {
      const head = started ? '' : `${CSV_COLUMNS.join(',')}\n`;
      started = true;
      await write(
        `${head}${[iso(r.timeMs), cell(r.requests), cell(r.hitRequests), cell(r.hitRate), cell(r.aboveCeiling), cell(r.p99Drift), cell(r.degraded), cell(r.warmupEfficiency), quoted(r.firing.join(';'))].join(',')}\n`,
      );
    },
    async end() {
      if (!started) await write(`${CSV_COLUMNS.join(',')}\n`);
    },
  };
}

function jsonWriter(write: Write): BacktestWriter {
  let rows = 0;
  const num = (v: number | undefined) => (v === undefined ? null : v);
  const interval = (i: FiringInterval) => ({
    pendingSince: iso(i.pendingSinceMs),
    start: iso(i.startMs),
    end: i.endMs === undefined ? null : iso(i.endMs),
    peak: i.peak,
    peakAt: iso(i.peakAtMs),
  });
  return {
    async row(r) {
      const row = {
        time: iso(r.timeMs),
        requests: num(r.requests),
        hitRequests: num(r.hitRequests),
        hitRate: num(r.hitRate),
        aboveCeiling: num(r.aboveCeiling),
        p99Drift: num(r.p99Drift),
        degraded: num(r.degraded),
        warmupEfficiency: num(r.warmupEfficiency),
        firing: r.firing,
      };
      await write(`${rows++ === 0 ? '{\n  "steps": [\n    ' : ',\n    '}${JSON.stringify(row)}`);
    },
    async end(result) {
      const s = result.summary;
      const rest = {
        step: formatDuration(result.stepMs),
        window: formatDuration(result.rateWindowMs),
        ...summaryJson(s),
        firstP0: result.firstP0 === undefined ? null : interval(result.firstP0),
        alerts: result.alerts.map((a) => ({ name: a.alert, labels: a.labels, for: formatDuration(a.forMs), keepFiringFor: formatDuration(a.keepFiringForMs), intervals: a.intervals.map(interval) })),
        notEvaluated: result.notEvaluated,
        group: result.group,
        ...(result.naive === undefined ? {} : { naive: naiveJson(result.naive, interval) }),
      };
      const tail = JSON.stringify(rest, null, 2).slice(1); // the object's members, after its opening brace
      await write(`${rows === 0 ? '{\n  "steps": []' : '\n  ]'},${tail}\n`);
    },
  };
}

/** --compare-naive in JSON: the naive alert, and each lead alert's first firing and its lead in minutes (null: one of them never fired). */
function naiveJson(n: NaiveOutcome, interval: (i: FiringInterval) => unknown) {
  return {
    factor: n.factor,
    thresholdSeconds: n.thresholdSeconds,
    for: formatDuration(n.forMs),
    intervals: n.intervals.map(interval),
    leads: n.leads.map((l) => ({ alert: l.alert, first: l.firstMs === undefined ? null : iso(l.firstMs), minutesBeforeNaive: l.leadMs === undefined ? null : l.leadMs / 60_000 })),
  };
}

/** The replay's counts as the JSON output has them. */
function summaryJson(s: ReplaySummary) {
  return {
    files: s.files,
    lines: s.lines,
    records: s.records,
    parseErrors: s.parseErrors,
    skipped: s.skipped,
    firstStep: s.firstStepMs === undefined ? null : iso(s.firstStepMs),
    lastStep: s.lastStepMs === undefined ? null : iso(s.lastStepMs),
    firstRecord: s.firstRecordMs === undefined ? null : iso(s.firstRecordMs),
    lastRecord: s.lastRecordMs === undefined ? null : iso(s.lastRecordMs),
    input: s.input,
  };
}

const pct = (x: number | undefined, digits = 2) => (x === undefined ? '-' : `${(x * 100).toFixed(digits)} %`);
const signedPct = (x: number | undefined) => (x === undefined ? '-' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)} %`);
const count = (x: number | undefined) => (x === undefined ? '-' : String(Math.round(x)));

const RATIO_SIGNALS: ReadonlySet<AlertOutcome['signal']> = new Set(['hitRate', 'aboveCeiling', 'atOrBelowFloor', 'warmupEfficiency', 'parseErrorRatio', 'cohortAboveCeiling', 'sloErrorRatio']);

/** An alert's value as its signal is read: a share in %, a burn rate as a factor, a count as a number. */
function peakText(a: AlertOutcome, value: number): string {
  if (RATIO_SIGNALS.has(a.signal)) return pct(value);
  if (a.signal === 'p99Drift') return `${signedPct(value)} p99 drift`;
  if (a.signal === 'burnRate') return `${value.toFixed(1)}× the budget rate`;
  return count(value);
}

function textWriter(write: Write, rateWindowMs: number): BacktestWriter {
  const columns: [string, number][] = [
    ['time', 20],
    ['requests', 9],
    ['hit rate', 10],
    ['p99 drift', 10],
    ['> ceiling', 10],
    ['degraded', 9],
    ['warm-up', 10],
  ];
  let started = false;
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd((columns[i] as [string, number])[1]) : c.padStart((columns[i] as [string, number])[1]))).join(' ');
  return {
    async row(r) {
      const head = started ? '' : `Signals over ${formatDuration(rateWindowMs)} at every step, as the recording rules compute them\n${line(columns.map(([c]) => c))}  firing\n`;
      started = true;
      const cells = [iso(r.timeMs), count(r.requests), pct(r.hitRate), signedPct(r.p99Drift), pct(r.aboveCeiling), count(r.degraded), pct(r.warmupEfficiency, 1)];
      await write(`${head}${line(cells)}  ${r.firing.join(' ')}\n`);
    },
    async end(result) {
      await write(`${started ? '\n' : ''}${summaryText(result)}`);
    },
  };
}

function summaryText(result: BacktestResult): string {
  const s = result.summary;
  const out: string[] = [];
  const span = s.firstStepMs === undefined ? 'nothing on the timeline' : `on the timeline ${iso(s.firstStepMs)} – ${iso(s.lastStepMs as number)}, evaluated every ${formatDuration(result.stepMs)}`;
  out.push(`${s.lines} lines from ${s.files} input${s.files === 1 ? '' : 's'}: ${s.records} records and ${s.parseErrors} parse errors ${span}`);
  out.push(`skipped: ${skippedText(s) ?? 'none'}`);
  out.push(
    `input: ${
      Object.entries(s.input)
        .map(([src, preset]) => `${src} ${preset ?? 'not read by any preset'}`)
        .join(', ') || 'none'
    }`,
  );
  const group = Object.entries(result.group).map(([k, v]) => `${k}="${v}"`);
  out.push(`group: ${group.length === 0 ? 'no aggregation label among the target labels (--label)' : group.join(', ')}`);
  out.push('');
  const p0 = result.firstP0;
  out.push(
    p0 === undefined
      ? 'First P0: never'
      : `First P0: ${iso(p0.startMs)} (its condition held from ${iso(p0.pendingSinceMs)}; peak ${pct(p0.peak)} of Zero-Plane requests above the ceiling at ${iso(p0.peakAtMs)})`,
  );
  out.push('');
  out.push(`Alerts (over ${formatDuration(result.rateWindowMs)}, as the generated rules evaluate them):`);
  const width = Math.max(...result.alerts.map((a) => nameOf(a).length), 10);
  for (const a of result.alerts) {
    if (a.intervals.length === 0) {
      out.push(`  ${nameOf(a).padEnd(width)}  never`);
      continue;
    }
    a.intervals.forEach((i, n) => {
      const end = i.endMs === undefined ? 'still firing at the end' : `${iso(i.endMs)} (${spanText(i.endMs - i.startMs)})`;
      out.push(`  ${(n === 0 ? nameOf(a) : '').padEnd(width)}  ${iso(i.startMs)} – ${end}, peak ${peakText(a, i.peak)} at ${iso(i.peakAtMs)}`);
    });
  }
  if (result.notEvaluated.length > 0) out.push(`Not evaluated (the exporter's own health, not in a log): ${result.notEvaluated.join(', ')}`);
  if (result.naive !== undefined) out.push('', ...naiveText(result.naive));
  return `${out.join('\n')}\n`;
}

/** --compare-naive in text: when the naive alert fired, and how long before it each lead alert did. */
function naiveText(n: NaiveOutcome): string[] {
  const first = n.intervals[0];
  const out = [
    `Naive alert (mean latency of every request over the rate window above ${n.factor} × the baseline, ${Number((n.thresholdSeconds * 1000).toPrecision(10))} ms, for ${formatDuration(n.forMs)}; history.naive): ` +
      (first === undefined ? 'never fired' : `first fired ${iso(first.startMs)}`),
  ];
  const width = Math.max(...n.leads.map((l) => l.alert.length));
  for (const l of n.leads) {
    let what: string;
    if (l.firstMs === undefined) what = 'never fired';
    else if (l.leadMs === undefined) what = `fired ${iso(l.firstMs)}; the naive alert never did`;
    else if (l.leadMs === 0) what = `fired ${iso(l.firstMs)}, with the naive alert`;
    else what = `fired ${iso(l.firstMs)}, ${minutes(Math.abs(l.leadMs))} ${l.leadMs > 0 ? 'before' : 'after'} the naive alert`;
    out.push(`  ${l.alert.padEnd(width)}  ${what}`);
  }
  return out;
}

const minutes = (ms: number) => `${Number((ms / 60_000).toFixed(1))} minute${ms === 60_000 ? '' : 's'}`;

/** "47m30s", "2h5m": how long, in words an SRE reads at a glance. */
function spanText(ms: number): string {
  let rest = Math.round(ms / 1000);
  let out = '';
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out === '' ? '0s' : out;
}

function nameOf(a: AlertOutcome): string {
  const shown = Object.entries(a.labels).filter(([k]) => k === 'cohort' || k === 'long_window' || k === 'short_window');
  return shown.length === 0 ? a.alert : `${a.alert}{${shown.map(([k, v]) => `${k}="${v}"`).join(',')}}`;
}

/** "2 without a timestamp, 1 far-out, …", or undefined when nothing was skipped. */
export function skippedText(s: ReplaySummary): string | undefined {
  const k = s.skipped;
  const parts = [
    k.noTimestamp > 0 ? `${k.noTimestamp} without a timestamp` : '',
    k.farOut > 0 ? `${k.farOut} far-out (before history.notBefore or after now + history.maxAhead)` : '',
    k.outlier > 0 ? `${k.outlier} time outliers (a cluster of fewer than history.minCluster records, more than history.maxGap from the rest of its file)` : '',
    k.late > 0 ? `${k.late} late (more than history.lateness out of order)` : '',
    k.unplaced > 0 ? `${k.unplaced} parse errors of inputs without any record` : '',
  ].filter(Boolean);
  return parts.length === 0 ? undefined : parts.join(', ');
}
