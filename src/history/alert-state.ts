// One alert instance (an alerting rule and a label set) evaluated step by step as Prometheus 2.42 does
// (rules/alerting.go): an expression with a result makes an inactive alert pending; pending for `for:`
// it fires; without a result a pending alert is dropped, and a firing one resolves unless it is within
// keep_firing_for of the first step without a result. What it records: each firing interval, from the
// step it fired to the step it resolved, with the extreme value of the expression while it held.

export interface FiringInterval {
  /** The first step of the run of steps with a result that led to firing (Prometheus' activeAt). */
  pendingSinceMs: number;
  /** The step it fired. */
  startMs: number;
  /** The step it resolved; undefined when still firing at the end of the log. */
  endMs: number | undefined;
  /** The most extreme value of the expression while it held (the largest for `>`, the smallest for `<`). */
  peak: number;
  peakAtMs: number;
}

export class AlertState {
  private state: 'inactive' | 'pending' | 'firing' = 'inactive';
  private activeAt = 0;
  private keepFiringSince: number | undefined;
  private current: FiringInterval | undefined;
  readonly intervals: FiringInterval[] = [];

  constructor(
    private readonly forMs: number,
    private readonly keepFiringForMs: number,
    /** Which values are more extreme: `max` for a `>` or `>=` condition, `min` for `<`. */
    private readonly extreme: 'max' | 'min',
  ) {}

  get firing(): boolean {
    return this.state === 'firing';
  }

  /** One evaluation at `timeMs`; `value` is the expression's result, undefined when it has none. */
  step(timeMs: number, value: number | undefined): void {
    if (value === undefined) {
      if (this.state === 'firing' && this.keepFiringForMs > 0) {
        this.keepFiringSince ??= timeMs;
        if (timeMs - this.keepFiringSince < this.keepFiringForMs) return;
      }
      if (this.state === 'firing' && this.current !== undefined) this.current.endMs = timeMs;
      this.state = 'inactive';
      this.current = undefined;
      this.keepFiringSince = undefined;
      return;
    }
    this.keepFiringSince = undefined;
    if (this.state === 'inactive') {
      this.state = 'pending';
      this.activeAt = timeMs;
    }
    if (this.state === 'pending' && timeMs - this.activeAt >= this.forMs) {
      this.state = 'firing';
      this.current = { pendingSinceMs: this.activeAt, startMs: timeMs, endMs: undefined, peak: value, peakAtMs: timeMs };
      this.intervals.push(this.current);
    }
    const c = this.current;
    if (c !== undefined && (this.extreme === 'max' ? value > c.peak : value < c.peak)) {
      c.peak = value;
      c.peakAtMs = timeMs;
    }
  }
}
