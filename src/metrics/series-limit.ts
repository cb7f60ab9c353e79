// Keeps one family's series bounded, cross products included. Label limits bound each label's values,
// but 50 models × 50 routes × 50 cohorts is still 125,000 label sets (and twelve times as many request
// series). Past `maxSeries`, a new label set goes to its overflow series instead: the same labels with the
// bounded ones (model, route, cohort, reason) set to __other__, so a sum over the family stays exact. The
// overflow series are few: their other labels (hit, status class, outcome) are closed sets.
import { OVERFLOW_VALUE, type LabelLimiter } from './label-limiter.js';

const SEP = '\u001f';

/** The key a family stores a label set under. */
export function keyOf(values: readonly string[]): string {
  return values.length === 1 ? (values[0] as string) : values.join(SEP);
}

export interface SeriesLimitOptions {
  /** Series the family may hold before new label sets go to their overflow series. */
  maxSeries: number;
  /**
   * The limiter of each bounded label, by label name: these labels become __other__ when the family is
   * full, and restored rows go through them. A family without any folds every label.
   */
  limiters?: Readonly<Record<string, LabelLimiter>>;
  /** Called for each event that went to an overflow series (never for restored rows). */
  onOverflow?: () => void;
}

export class SeriesLimit {
  readonly maxSeries: number;
  /** Indices of the labels that fold to __other__. */
  private readonly folded: readonly number[];
  /** The limiter of each label, by index (undefined for closed-set labels); empty when there are none. */
  private readonly limiters: readonly (LabelLimiter | undefined)[];
  private readonly onOverflow: () => void;

  constructor(family: string, labelNames: readonly string[], opts: SeriesLimitOptions) {
    if (!Number.isInteger(opts.maxSeries) || opts.maxSeries < 1) throw new Error(`${family}: maxSeries must be a positive integer`);
    const byName = opts.limiters ?? {};
    for (const name of Object.keys(byName)) if (!labelNames.includes(name)) throw new Error(`${family} has no label "${name}" to limit`);
    this.maxSeries = opts.maxSeries;
    const limited = labelNames.flatMap((n, i) => (byName[n] === undefined ? [] : [i]));
    this.limiters = limited.length > 0 ? labelNames.map((n) => byName[n]) : [];
    this.folded = limited.length > 0 ? limited : labelNames.map((_, i) => i);
    this.onOverflow = opts.onOverflow ?? (() => {});
  }

  /**
   * Where a new label set goes in a family that holds `size` series: undefined when it gets a series of its
   * own (there is room, or it is an overflow set itself), else its overflow label set.
   */
  overflowFor(values: readonly string[], size: number): string[] | undefined {
    if (size < this.maxSeries || this.isOverflow(values)) return undefined;
    const out = [...values];
    for (const i of this.folded) out[i] = OVERFLOW_VALUE;
    return out;
  }

  /**
   * Whether all of `labelSets` fit a family whose series are `series` (by key): each exists already, is an
   * overflow set, or there is room for all the new ones together.
   */
  admits(series: ReadonlyMap<string, unknown>, labelSets: readonly (readonly string[])[]): boolean {
    let extra = 0;
    for (const values of labelSets) if (!series.has(keyOf(values)) && !this.isOverflow(values)) extra++;
    return extra === 0 || series.size + extra <= this.maxSeries;
  }

  /** Counts one event that went to an overflow series. */
  overflowed(): void {
    this.onOverflow();
  }

  /** A saved row's label values as the limiters bound them now (cut, or __other__ past their limit). */
  restoreLabels(values: readonly string[]): readonly string[] {
    if (this.limiters.length === 0) return values;
    return values.map((v, i) => this.limiters[i]?.restore(v) ?? v);
  }

  private isOverflow(values: readonly string[]): boolean {
    return this.folded.every((i) => values[i] === OVERFLOW_VALUE);
  }
}
