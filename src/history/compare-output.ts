// `compare --format text`: the method first (what decides and how), each group's figures, b against a with
// the intervals, then the verdict. `--format json` is the CompareResult itself.
import type { Interval } from './bootstrap.js';
import type { CompareResult, GroupResult } from './compare.js';

const ms = (s: number | null) => (s === null ? 'n/a' : `${(s * 1000).toFixed(3)} ms`);
const signedPct = (x: number | null) => (x === null ? 'n/a' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)} %`);
const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(3)} %`);
const times = (x: number) => `×${x.toFixed(3)}`;

function ratioRow(name: string, i: Interval | null, confidence: number, show: (x: number) => string = times): string {
  if (i === null) return `${name.padEnd(24)}n/a`;
  return `${name.padEnd(24)}${show(i.estimate).padStart(10)}   ${Number((confidence * 100).toFixed(2))} % interval ${show(i.low)} – ${show(i.high)}`;
}

function groupRows(key: 'a' | 'b', g: GroupResult): string[] {
  return [
    `${key}: ${g.group}`,
    `   ${g.requests} requests, ${g.hits} Zero-Plane; ${g.windows} windows used, ${g.thinWindows} left out (too few Zero-Plane requests)`,
    `   p99 drift mean ${signedPct(g.p99DriftMean)}, σ across windows ${pct(g.p99DriftStddev)}; latency mean ${ms(g.meanLatencySeconds)}, σ ${ms(g.latencyStddevSeconds)}`,
  ];
}

export function formatCompareText(r: CompareResult): string {
  return [
    `method: ${r.method}`,
    `windows: ${r.windowSeconds} s end to end, each with at least ${r.minWindowHits} Zero-Plane requests; ${r.iterations} resamples, seed ${r.seed}`,
    '',
    ...groupRows('a', r.a),
    ...groupRows('b', r.b),
    '',
    `b against a (each interval ${Number((r.intervalConfidence * 100).toFixed(2))} %, the two σ together ${Number((r.confidence * 100).toFixed(2))} %)`,
    ratioRow('σ of p99 drift', r.p99DriftStddevRatio, r.intervalConfidence),
    ratioRow('latency σ', r.latencyStddevRatio, r.intervalConfidence),
    ratioRow('mean latency', r.meanLatencyChange, r.intervalConfidence, (x) => signedPct(x)) + (r.meanLatencyChange === null ? '' : '   (shown, does not decide)'),
    '',
    `verdict: ${r.verdict}`,
    '',
  ].join('\n');
}
