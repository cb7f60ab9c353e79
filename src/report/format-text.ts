// A short human summary of a Report: the four signals, each with its verdict, then what else was seen.
import type { Report } from './build-report.js';
import { repeatsText } from './repeats.js';

const pct = (x: number | null, digits = 2) => (x === null ? 'n/a' : `${(x * 100).toFixed(digits)} %`);
const ms = (x: number | null) => (x === null ? 'n/a' : `${(x * 1000).toFixed(2)} ms`);
const signed = (x: number | null) => (x === null ? 'n/a' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)} %`);
const verdict = (healthy: boolean | null) => (healthy === null ? 'no data' : healthy ? 'healthy' : 'UNHEALTHY');
const counts = (o: Record<string, number>) =>
  Object.entries(o)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k || '(none)'} ${n}`)
    .join(', ') || 'none';

const BAND: Record<string, string> = {
  null: verdict(null),
  in_band: verdict(true),
  too_slow: `${verdict(false)}, too slow`,
  too_fast: `${verdict(false)}, too fast`,
};

/** Each input with the preset it was read with: "gateway.log nginx-json". */
function inputs(input: Report['input']): string {
  const entries = Object.entries(input);
  if (entries.length === 0) return 'none';
  return entries.map(([source, preset]) => `${source} ${preset ?? 'not read by any preset'}`).join(', ');
}

export function formatText(r: Report): string {
  const t = r.thresholds;
  const firing = r.alerts.filter((a) => a.firing).map((a) => a.name);
  const skipped = Object.values(r.parseErrors).reduce((a, b) => a + b, 0);
  const rows: [string, string, string][] = [
    ['hit rate', pct(r.hitRate), `${verdict(r.hitRate === null ? null : r.hitRate >= t.hitRateTarget)} (target ≥ ${pct(t.hitRateTarget, 1)})`],
    [
      'p99 drift',
      signed(r.p99Drift),
      // The exact bucket decision the alert makes, not the sketch's p99 estimate.
      `${BAND[`${r.p99Band}`]} (p99 ${ms(r.p99Seconds)}, band ${ms(t.floor)} – ${ms(t.ceiling)})`,
    ],
    ['degraded', String(r.degradedCount), `${verdict(r.records === 0 ? null : r.degradedCount === 0)} (target 0)`],
    ['warm-up efficiency', pct(r.warmupEfficiency), `${verdict(r.warmupEfficiency === null ? null : r.warmupEfficiency >= t.warmupEfficiencyTarget)} (target ≥ ${pct(t.warmupEfficiencyTarget, 1)})`],
  ];
  return [
    `${r.lines} lines, ${r.records} records, ${skipped} skipped${skipped ? ` (${counts(r.parseErrors)})` : ''}; ${r.hits} served by Zero-Plane`,
    `input: ${inputs(r.input)}`,
    '',
    ...rows.map(([name, value, v]) => `${name.padEnd(20)}${value.padStart(10)}   ${v}`),
    '',
    `latency (Zero-Plane)  p50 ${ms(r.p50Seconds)}  p99 ${ms(r.p99Seconds)}  p99.9 ${ms(r.p999Seconds)}  σ ${ms(r.stddevSeconds)}`,
    capacityLine(r),
    `status: ${counts(r.statusClasses)}; top codes: ${r.topStatusCodes.map((c) => `${c.code} ×${c.count}`).join(', ') || 'none'}`,
    `cached ${r.cachedCount}; downgrades: ${counts(r.downgrades)}`,
    `opt-in header: ${counts(r.optInHeader)}${r.optInHeader.malformed ? ` (defects: ${counts(r.optInDefects)})` : ''}`,
    ...(r.tokens === undefined
      ? []
      : [
          `tokens: ${Object.entries(r.tokens.total)
            .map(([type, n]) => `${type} ${n}`)
            .join(', ')} (${Object.keys(r.tokens.byModel).length} model${Object.keys(r.tokens.byModel).length === 1 ? '' : 's'})`,
        ]),
    '',
    `alerts firing: ${firing.length ? firing.join(', ') : 'none'}`,
    '',
    ...groupRows(r),
    ...repeatsText(r.repeats),
  ].join('\n');
}

/** `--by`: one row per group, the same figures as above, most requests first; nothing without --by. */
function groupRows(r: Report): string[] {
  if (r.groupBy === undefined || r.groups === undefined) return [];
  const header = [r.groupBy, 'requests', 'hit rate', 'p99 drift', 'degraded', 'warm-up', 'p50', 'p99', 'p99.9', 'σ'];
  const rows = r.groups.map((g) => [
    g.value || '(none)',
    String(g.requests),
    pct(g.hitRate),
    signed(g.p99Drift),
    String(g.degradedCount),
    pct(g.warmupEfficiency),
    ms(g.p50Seconds),
    ms(g.p99Seconds),
    ms(g.p999Seconds),
    ms(g.stddevSeconds),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  // The value column is left-aligned, the figures right-aligned, as in the rows above.
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [`by ${r.groupBy}: ${r.groups.length} group${r.groups.length === 1 ? '' : 's'}, most requests first`, line(header), ...rows.map(line), ''];
}

/** The deterministic bandwidth demand over the input, with what it is made of. */
function capacityLine(r: Report): string {
  const c = r.capacity;
  const rate = c.requestRatePerSecond === null ? 'n/a' : `${c.requestRatePerSecond.toFixed(3)} req/s`;
  const windows = `${c.windowsSpanned} window${c.windowsSpanned === 1 ? '' : 's'} of ${c.windowSeconds} s`;
  if (c.deterministicBandwidthDemand === null || c.maxP99Drift === null) {
    return `capacity: deterministic bandwidth demand n/a (no ${c.windowSeconds} s window with ${c.minHits} Zero-Plane requests; mean ${rate} over ${windows})`;
  }
  return `capacity: deterministic bandwidth demand ${c.deterministicBandwidthDemand.toFixed(3)} baseline req/s = (1 + max p99 drift ${signed(c.maxP99Drift)}, window from ${c.maxP99DriftWindowStart}) × mean ${rate} over ${windows}`;
}
