// Every alert of the pack as data: what it compares over which window, its traffic guard, `for` and
// keep_firing_for. The rules render these into PromQL over recording rules, the dashboards over raw
// series, and `report` (and a backtest) evaluate the same comparisons over a log, so a threshold or a
// guard is written once.

/** A value computed over one window, per aggregation group (per cohort for the cohort signals). */
export type SignalName =
  /** Zero-Plane requests / all requests. */
  | 'hitRate'
  /** Share of Zero-Plane requests slower than the ceiling (exact, from the bucket at the ceiling). */
  | 'aboveCeiling'
  /** Share of Zero-Plane requests at or under the floor. */
  | 'atOrBelowFloor'
  /** Degraded requests (a count). */
  | 'degraded'
  /** Warm-up hits / warm-up outcomes. */
  | 'warmupEfficiency'
  /** Malformed opt-in headers (a count). */
  | 'optInMalformed'
  /** Skipped lines / lines read. */
  | 'parseErrorRatio'
  /** A canary cohort's share of Zero-Plane requests slower than the ceiling. */
  | 'cohortAboveCeiling'
  /** Counts, for the traffic guards: requests, Zero-Plane requests, a cohort's Zero-Plane requests, warm-up outcomes. */
  | 'requests'
  | 'hitRequests'
  | 'cohortHitRequests'
  | 'warmupOutcomes';

export type SloId = 'hit-rate' | 'latency';

export type SignalRef =
  | { signal: SignalName; window: number }
  /** (bad events / events) / (1 − objective) of an SLO: 1 spends the budget exactly over the period. */
  | { signal: 'burnRate'; slo: SloId; window: number }
  /** bad events / events of an SLO: what the burn-rate alerts compare with factor × budget. */
  | { signal: 'sloErrorRatio'; slo: SloId; window: number }
  /** An SLO's events (requests for hit-rate, Zero-Plane requests for latency), a count. */
  | { signal: 'sloEvents'; slo: SloId; window: number };

export type Operator = '>' | '>=' | '<';

export interface Comparison {
  ref: SignalRef;
  op: Operator;
  value: number;
}

export interface Condition {
  /** `all`: every comparison holds (joined with `and on`); `any`: at least one (`or`). */
  combine: 'all' | 'any';
  comparisons: Comparison[];
}

/** One alerting rule, as data. Conditions over the log's own signals; `expr` only for the exporter's health. */
export interface AlertSpec {
  alert: string;
  /** `severity`, `priority`, and the SLO alerts' `slo`, `long_window`, `short_window`. */
  labels: Record<string, string>;
  /** The log-derived condition; undefined for alerts on the exporter itself (scrapes, absent series). */
  condition?: Condition;
  /** Every guard must hold too: enough events in the window for the ratio to mean something. */
  guards: Comparison[];
  /** Extra labels the condition is per (the canary: `cohort`), besides the aggregation labels. */
  per: string[];
  /** PromQL of an exporter-health alert (no condition). */
  expr?: string;
  /** ms; 0 = none. */
  for: number;
  keepFiringFor: number;
  summary: string;
  description: string;
}

export function holds(op: Operator, actual: number, value: number): boolean {
  switch (op) {
    case '>':
      return actual > value;
    case '>=':
      return actual >= value;
    case '<':
      return actual < value;
  }
}

/**
 * A condition and its guards as PromQL: each comparison parenthesised, an `any` joined by `or`, then
 * `andOn` (`and on (job)`) before each further `all` comparison and each guard. `query` names a signal's series.
 */
export function renderCondition(spec: Pick<AlertSpec, 'condition' | 'guards'>, query: (ref: SignalRef) => string, andOn: string): string {
  if (!spec.condition) throw new Error('an exporter-health alert has no condition to render');
  const one = (c: Comparison) => `(${query(c.ref)} ${c.op} ${c.value})`;
  const [first, ...rest] = spec.condition.comparisons;
  if (!first) throw new Error('a condition needs a comparison');
  const head =
    spec.condition.combine === 'any'
      ? spec.condition.comparisons.length === 1 || spec.guards.length === 0
        ? spec.condition.comparisons.map(one).join('\nor\n')
        : `(\n${spec.condition.comparisons.map(one).join('\nor\n')}\n)`
      : [one(first), ...rest.map((c) => `${andOn}\n${one(c)}`)].join('\n');
  return [head, ...spec.guards.map((g) => `${andOn}\n${one(g)}`)].join('\n');
}
