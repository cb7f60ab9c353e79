// The alert conditions of docs/contract.md §7 that a one-shot report can decide from its own numbers: the same specs
// the rules are rendered from (src/pack/alert-specs.ts), comparisons and traffic guards, evaluated over
// the whole input instead of a 5 m window. So a report needs alerts.minRequests events too: one slow
// request in a file of ten is not a P0 here either.
import type { Config } from '../config/schema.js';
import { thresholds } from '../metrics/buckets.js';
import { OVERFLOW_VALUE } from '../metrics/label-limiter.js';
import { alertSpecs, ALERT_NAMES, P0_ALERT } from '../pack/alert-specs.js';
import { holds, type Comparison, type SignalRef } from '../pack/conditions.js';
import { groupingOf } from '../pack/grouping.js';
import type { HistogramFamily } from '../metrics/families.js';
import type { SignalValues } from '../windows/summarize.js';

export interface AlertVerdict {
  name: string;
  firing: boolean;
}

export interface AlertInputs {
  values: SignalValues;
  /** zero_plane_request_duration_seconds: the band is decided from its buckets, as the rules do. */
  latency: HistogramFamily;
  malformedOptIn: number;
  lines: number;
  parseErrors: number;
  /** Zero-Plane requests with a known warm-up outcome (hits + misses). */
  warmupOutcomes: number;
}

export { P0_ALERT };

/** Alerts on the exporter's own health (down, a stalled source): a one-shot report has none to decide. */
const EXPORTER_HEALTH_ALERTS = ['ZeroPlaneExporterDown', 'ZeroPlaneLogSourceStalled'] as const satisfies readonly (typeof ALERT_NAMES)[number][];
type ReportAlert = Exclude<(typeof ALERT_NAMES)[number], (typeof EXPORTER_HEALTH_ALERTS)[number]>;

/** The conditions a report decides, in its output order: the docs/contract.md §7 alerts as the rules list them, but the exporter's health. */
export const REPORT_ALERTS = ALERT_NAMES.filter((name): name is ReportAlert => !(EXPORTER_HEALTH_ALERTS as readonly string[]).includes(name));

/** Where the Zero-Plane p99 sits against the drift band: above the ceiling, at or below the floor, within; null with no hits. */
export type P99Band = 'too_slow' | 'too_fast' | 'in_band' | null;

// Exact, and the same arithmetic as the rules: p99 > ceiling ⟺ more than 1 % of hits above the ceiling
// bucket; p99 ≤ floor ⟺ at least 99 % of hits in the floor bucket. The sketch's p99 is only an estimate.
function aboveCeiling(h: HistogramFamily, ceiling: number, where: Record<string, string>): boolean {
  const { below, count } = h.cumulative(ceiling, where);
  return count > 0 && 100 * (count - below) > count;
}

function atOrBelowFloor(h: HistogramFamily, floor: number, where: Record<string, string>): boolean {
  const { below, count } = h.cumulative(floor, where);
  return count > 0 && 100 * below >= 99 * count;
}

const HITS = { hit: 'true' };

/** The band verdict of the hit latencies, decided from the buckets exactly as ZeroPlaneP99DriftOutOfBand is. */
export function p99Band(latency: HistogramFamily, config: Config): P99Band {
  const t = thresholds(config.signals);
  if (latency.cumulative(t.ceiling, HITS).count === 0) return null;
  if (aboveCeiling(latency, t.ceiling, HITS)) return 'too_slow';
  return atOrBelowFloor(latency, t.floor, HITS) ? 'too_fast' : 'in_band';
}

type Signal = Exclude<SignalRef['signal'], 'burnRate' | 'sloErrorRatio' | 'sloEvents'>;

export function evaluateAlerts(inputs: AlertInputs, config: Config): AlertVerdict[] {
  const t = thresholds(config.signals);
  const v = inputs.values;
  const h = inputs.latency;
  const hits = { hit: 'true' };
  const share = (bound: number, where: Record<string, string>, of: 'below' | 'above') => {
    const { below, count } = h.cumulative(bound, where);
    if (count === 0) return null;
    return of === 'below' ? below / count : (count - below) / count;
  };
  const stable = new Set(['', ...config.signals.stableCohorts, OVERFLOW_VALUE]);
  const canaries = h.labelValues('cohort', hits).filter((c) => !stable.has(c));
  // Whole-input values of each signal; per cohort for the canary signals. null: no denominator.
  const value = (signal: Signal, cohort?: string): number | null => {
    switch (signal) {
      case 'hitRate':
        return v.hitRate;
      case 'aboveCeiling':
        return share(t.ceiling, hits, 'above');
      case 'atOrBelowFloor':
        return share(t.floor, hits, 'below');
      case 'degraded':
        return v.degradedCount;
      case 'warmupEfficiency':
        return v.warmupEfficiency;
      case 'optInMalformed':
        return inputs.malformedOptIn;
      case 'parseErrorRatio':
        return inputs.lines === 0 ? null : inputs.parseErrors / inputs.lines;
      case 'cohortAboveCeiling':
        return share(t.ceiling, { ...hits, cohort: cohort as string }, 'above');
      case 'requests':
        return v.requests;
      case 'hitRequests':
        return v.hits;
      case 'cohortHitRequests':
        return h.cumulative(t.ceiling, { ...hits, cohort: cohort as string }).count;
      case 'warmupOutcomes':
        return inputs.warmupOutcomes;
    }
  };
  const check = (c: Comparison, cohort?: string) => {
    if (c.ref.signal === 'burnRate' || c.ref.signal === 'sloErrorRatio' || c.ref.signal === 'sloEvents') throw new Error('a report has no burn-rate windows');
    const actual = value(c.ref.signal, cohort);
    return actual !== null && holds(c.op, actual, c.value);
  };
  const specs = alertSpecs(config, groupingOf(config));
  const firing = (name: ReportAlert): boolean => {
    const spec = specs.find((s) => s.alert === name);
    if (!spec?.condition) throw new Error(`${name} has no condition a report can decide`);
    const { combine, comparisons } = spec.condition;
    // Per cohort for the canary (per: ['cohort']), once over the input otherwise.
    const scopes = spec.per.includes('cohort') ? canaries : [undefined];
    return scopes.some((cohort) => {
      const met = combine === 'all' ? comparisons.every((c) => check(c, cohort)) : comparisons.some((c) => check(c, cohort));
      return met && spec.guards.every((g) => check(g, cohort));
    });
  };
  return REPORT_ALERTS.map((name) => ({ name, firing: firing(name) }));
}
