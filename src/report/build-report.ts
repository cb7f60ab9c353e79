// The `report` JSON (docs/contract.md §6): the same numbers the exporter exposes, over everything read.
import { byCodeUnits } from '../code-unit-order.js';
import type { Config } from '../config/schema.js';
import { thresholds, type Thresholds } from '../metrics/buckets.js';
import type { Pipeline } from '../pipeline.js';
import { summarize, type SignalValues } from '../windows/summarize.js';
import type { GroupedAggregates, GroupLabel } from '../windows/grouped-aggregates.js';
import { TOKEN_TYPES, type PresetName, type TokenType } from '../record/presets.js';
import type { CapacityFigure } from '../windows/capacity-windows.js';
import type { HeadersHint } from '../record/headers-hint.js';
import { evaluateAlerts, p99Band, type AlertVerdict, type P99Band } from './alerts.js';
import { repeatsSection, type ReportRepeats } from './repeats.js';

/** Status codes listed in topStatusCodes at most. */
export const TOP_STATUS_CODES = 10;

export interface Report extends SignalValues {
  lines: number;
  records: number;
  parseErrors: Record<string, number>;
  headerParseErrors: Record<string, number>;
  cachedCount: number;
  downgrades: Record<string, number>;
  throttleModes: Record<string, number>;
  optInHeader: Record<string, number>;
  optInDefects: Record<string, number>;
  warmupHits: number;
  warmupMisses: number;
  /** Requests by status class (`2xx` …, `unknown` when the line had no status). */
  statusClasses: Record<string, number>;
  /** The most frequent status codes, most frequent first. */
  topStatusCodes: { code: number; count: number }[];
  /** Where the p99 sits against the band, decided exactly from the buckets (as the alert is). */
  p99Band: P99Band;
  /** Each input (file, or stdin) → the preset it was read with (null: no preset read any of its lines). */
  input: Record<string, PresetName | null>;
  /**
   * Inputs none of whose first records (input.headerWatch.records, or all of them when fewer) carried a
   * wanted response header field where their preset looks: what was said on stderr. `seenAfter`: the
   * number of records before one did after all, null when not one did (report then exits 1).
   */
  inputHeadersUnseen: (HeadersHint & { source: string; seenAfter: number | null })[];
  thresholds: Thresholds & { hitRateTarget: number; warmupEfficiencyTarget: number };
  alerts: AlertVerdict[];
  /** Only when the input logged token usage (input.fields.tokens*, zero_plane_tokens_total): the tokens by type, overall and per model. */
  tokens?: ReportTokens;
  /** The deterministic bandwidth demand over the whole input (docs/cli.md "Capacity in report"). */
  capacity: CapacityFigure;
  /** With `--by`: the label grouped by. */
  groupBy?: GroupLabel;
  /** With `--by`: the same signals per value of that label, most requests first. */
  groups?: ReportGroup[];
  /** The most repeated prompts, when some record carried a prompt hash (report/repeats.ts). */
  repeats?: ReportRepeats;
}

/** zero_plane_tokens_total over the input: every type (0 when none logged), and by model label (bounded as the metric's). */
export interface ReportTokens {
  total: Record<TokenType, number>;
  byModel: Record<string, Record<TokenType, number>>;
}

/** One group of `report --by`: its label value ("" when the record had none, as the metric label is) and its signals. */
export interface ReportGroup extends SignalValues {
  value: string;
  warmupHits: number;
  warmupMisses: number;
}

export function buildReport(pipeline: Pipeline, config: Config): Report {
  const m = pipeline.metrics;
  const total = pipeline.total;
  if (total === undefined) throw new Error('buildReport needs a pipeline created with keepTotals');
  const values = summarize(total, config.signals);
  const optInHeader = { valid: m.optIn.sum({ state: 'valid' }), missing: m.optIn.sum({ state: 'missing' }), malformed: m.optIn.sum({ state: 'malformed' }) };
  const parseErrors = byFirstLabel(m.parseErrors.entries());
  const lines = m.lines.sum();
  const parseErrorCount = Object.values(parseErrors).reduce((a, b) => a + b, 0);
  return {
    lines,
    records: m.requests.sum(),
    parseErrors,
    headerParseErrors: byFirstLabel(m.headerParseErrors.entries()),
    ...values,
    warmupHits: total.warmupHits,
    warmupMisses: total.warmupMisses,
    statusClasses: byLabel(m.requests.entries(), m.requests.labelNames.indexOf('status_class')),
    topStatusCodes: topCodes(pipeline.statusCodes ?? []),
    p99Band: p99Band(m.duration, config),
    input: pipeline.presets(),
    inputHeadersUnseen: pipeline.headerHints().map(([source, h]) => ({ source, ...h })),
    cachedCount: m.cached.sum(),
    downgrades: byFirstLabel(m.downgrades.entries()),
    throttleModes: byFirstLabel(m.throttleModes.entries()),
    optInHeader,
    optInDefects: byFirstLabel(
      m.optIn
        .entries()
        .filter(([labels]) => labels[0] === 'malformed')
        .map(([l, v]) => [l.slice(1), v]),
    ),
    thresholds: { ...thresholds(config.signals), hitRateTarget: config.signals.hitRateTarget, warmupEfficiencyTarget: config.signals.warmupEfficiencyTarget },
    alerts: evaluateAlerts({ values, latency: m.duration, malformedOptIn: optInHeader.malformed, lines, parseErrors: parseErrorCount, warmupOutcomes: total.warmupHits + total.warmupMisses }, config),
    ...reportTokens(m.tokens.entries(), m.tokens.labelNames),
    capacity: (pipeline.capacity as NonNullable<Pipeline['capacity']>).figure(config.signals.baselineSeconds, config.alerts.minRequests),
    ...(pipeline.groups === undefined ? {} : { groupBy: pipeline.groups.label, groups: reportGroups(pipeline.groups, config) }),
    ...repeatsSection(pipeline.repeats, config.repeats.top),
  };
}

/** The `tokens` key, or nothing when no record carried a token count (the key is additive: absent before). */
function reportTokens(entries: [readonly string[], number][], labelNames: readonly string[]): { tokens?: ReportTokens } {
  if (entries.length === 0) return {};
  const [typeAt, modelAt] = [labelNames.indexOf('type'), labelNames.indexOf('model')];
  const zero = (): Record<TokenType, number> => Object.fromEntries(TOKEN_TYPES.map((t) => [t, 0])) as Record<TokenType, number>;
  const total = zero();
  const byModel: Record<string, Record<TokenType, number>> = {};
  for (const [labels, value] of entries) {
    const type = labels[typeAt] as TokenType;
    const model = labels[modelAt] as string;
    total[type] += value;
    (byModel[model] ??= zero())[type] += value;
  }
  return { tokens: { total, byModel: Object.fromEntries(Object.entries(byModel).sort(([a], [b]) => byCodeUnits(a, b))) } };
}

/** Each group summarized as the whole input is (the same summarize), most requests first, ties by value. */
function reportGroups(groups: GroupedAggregates, config: Config): ReportGroup[] {
  return groups
    .entries()
    .map(([value, agg]) => ({ value, ...summarize(agg, config.signals), warmupHits: agg.warmupHits, warmupMisses: agg.warmupMisses }))
    .sort((a, b) => b.requests - a.requests || byCodeUnits(a.value, b.value));
}

/** Sums series by their first label value, sorted by that value for stable output. */
function byFirstLabel(entries: [readonly string[], number][]): Record<string, number> {
  return byLabel(entries, 0);
}

/** Sums series by the value of label `at`, sorted by that value for stable output. */
function byLabel(entries: [readonly string[], number][], at: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [labels, value] of entries) {
    const key = labels[at] as string;
    out[key] = (out[key] ?? 0) + value;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => byCodeUnits(a, b)));
}

/** The most frequent codes of a count-per-code array; ties in code order. */
function topCodes(counts: readonly number[]): { code: number; count: number }[] {
  return counts
    .flatMap((count, code) => (count > 0 ? [{ code, count }] : []))
    .sort((a, b) => b.count - a.count || a.code - b.code)
    .slice(0, TOP_STATUS_CODES);
}
