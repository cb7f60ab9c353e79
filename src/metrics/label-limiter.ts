// Keeps one label's values bounded: the first `limit` distinct values pass, later ones become __other__.
// A gateway that suddenly logs request ids as "model" must not take Prometheus down with it.

export const OVERFLOW_VALUE = '__other__';

export class LabelLimiter {
  private readonly seen = new Set<string>();

  constructor(
    private readonly limit: number,
    private readonly onOverflow: () => void = () => {},
  ) {}

  /** The values admitted so far, in the order they were admitted. */
  values(): string[] {
    return [...this.seen];
  }

  /**
   * Admits saved values (a checkpoint) in their order, up to the limit, without counting overflow: after a
   * restart the same values keep their own series and the same later ones still become __other__.
   */
  admit(values: readonly string[]): void {
    for (const v of values) {
      if (this.seen.size >= this.limit) return;
      this.seen.add(v);
    }
  }

  /** Whether these values and the ones admitted so far, together, fit the limit (none would overflow). */
  fitsWith(values: readonly string[]): boolean {
    let extra = 0;
    for (const v of new Set(values)) if (!this.seen.has(v)) extra++;
    return this.seen.size + extra <= this.limit;
  }

  map(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size < this.limit) {
      this.seen.add(value);
      return value;
    }
    this.onOverflow();
    return OVERFLOW_VALUE;
  }
}
