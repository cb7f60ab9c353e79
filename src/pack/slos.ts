// The two service-level objectives the pack derives from `slos:` (SRE workbook, chapter "Alerting on
// SLOs"): the hit rate (requests served by Zero-Plane) and the latency (Zero-Plane requests at or under
// the ceiling). Each has an error budget over `slos.period` and multi-window burn-rate conditions.
import type { Config } from '../config/schema.js';
import { thresholds } from '../metrics/buckets.js';
import type { SloId } from './conditions.js';

export interface BurnPair {
  tier: 'page' | 'ticket';
  /** The configured factor, or budgetShare × period / long (12 digits: 0.05 × 28 d / 6 h is 5.6, not 5.6000000000000005). */
  factor: number;
  /** ms */
  long: number;
  short: number;
}

export interface Slo {
  id: SloId;
  /** The alert of this SLO's burn-rate pairs. */
  alert: string;
  /** "hit rate", "latency": in alert text. */
  title: string;
  objective: number;
  /** 1 − objective, rounded to 12 digits so 1 − 0.994 prints as 0.006. */
  budget: number;
  /** What one bad event is, in words. */
  bad: string;
  /** What the events are, in words. */
  events: string;
}

export const SLO_ALERTS = { 'hit-rate': 'ZeroPlaneHitRateBudgetBurn', latency: 'ZeroPlaneLatencyBudgetBurn' } as const satisfies Record<SloId, string>;

const round12 = (x: number) => Number(x.toPrecision(12));

export function slos(config: Config): Slo[] {
  const t = thresholds(config.signals);
  return [
    {
      id: 'hit-rate',
      alert: SLO_ALERTS['hit-rate'],
      title: 'hit rate',
      objective: config.slos.hitRate.objective,
      budget: round12(1 - config.slos.hitRate.objective),
      bad: 'requests not served by Zero-Plane',
      events: 'requests',
    },
    {
      id: 'latency',
      alert: SLO_ALERTS.latency,
      title: 'latency',
      objective: config.slos.latency.objective,
      budget: round12(1 - config.slos.latency.objective),
      bad: `Zero-Plane requests slower than the ${t.ceiling} s ceiling`,
      events: 'Zero-Plane requests',
    },
  ];
}

/** Every burn-rate pair, page tier first, in the config's order. */
export function burnPairs(config: Config): BurnPair[] {
  return (['page', 'ticket'] as const).flatMap((tier) =>
    config.slos[tier].map((w) => ({ tier, factor: w.factor ?? round12((w.budgetShare ?? 1) * (config.slos.period / w.long)), long: w.long, short: w.short })),
  );
}

/**
 * The error ratio a pair compares with: factor × budget, rounded to 12 digits so it is the double nearest
 * the decimal (14.4 × 0.01 is 0.14400000000000002 in float64; 0.144 is what 432 bad of 3 000 gives).
 * Comparing the ratio with this, not the ratio / budget with the factor, makes a burn exactly at the
 * factor compare the same for every SLO: 432 / 3 000 / 0.01 is 14.399999999999999, 216 / 2 500 / 0.006
 * is 14.4, so `ratio / budget > 14.4` was false for both but only by luck of the last bit.
 */
export function errorRatioThreshold(slo: Pick<Slo, 'budget'>, pair: Pick<BurnPair, 'factor'>): number {
  return round12(pair.factor * slo.budget);
}

/** The windows the error ratios are recorded over: every pair's short and long window, shortest first. */
export function sloWindows(config: Config): number[] {
  return [...new Set(burnPairs(config).flatMap((p) => [p.short, p.long]))].sort((a, b) => a - b);
}

/** How long the whole budget lasts at `factor` times the sustainable rate: the period / factor, in words. */
export function exhaustion(config: Config, factor: number): string {
  const ms = config.slos.period / factor;
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ];
  const parts: string[] = [];
  let rest = Math.round(ms / 60_000) * 60_000;
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0 || (unit === 'm' && parts.length === 0)) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.slice(0, 2).join(' ');
}

/** One SLO of the config by its id. */
export function sloById(config: Config, id: SloId): Slo {
  const slo = slos(config).find((s) => s.id === id);
  if (!slo) throw new Error(`no SLO ${id}`);
  return slo;
}

/** sloth_id, sloth_service, sloth_slo of an SLO's Sloth-convention series: Sloth's id is `<service>-<slo>`. */
export function slothLabels(config: Config, id: SloId): { sloth_id: string; sloth_service: string; sloth_slo: string } {
  return { sloth_id: `${config.slos.service}-${id}`, sloth_service: config.slos.service, sloth_slo: id };
}

/**
 * A duration as Prometheus spells it (model.Duration, which Sloth's window names use): weeks only when
 * whole, so 28 d is `4w` (slo:sli_error:ratio_rate4w) and 30 d stays `30d`.
 */
export function promDuration(ms: number): string {
  const units: [string, number, boolean][] = [
    ['y', 31_536_000_000, false],
    ['w', 604_800_000, true],
    ['d', 86_400_000, false],
    ['h', 3_600_000, false],
    ['m', 60_000, false],
    ['s', 1000, false],
    ['ms', 1, false],
  ];
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const [unit, size, exact] of units) {
    if (exact && rest % size !== 0) continue;
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return out;
}
