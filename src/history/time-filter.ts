// Which record times of one source are believed. A log's records come in the order they were written,
// each near the one before; a time far from that (epoch 0 from an unset clock, a year 3000 from a test
// fixture) must not stretch the timeline, and must not move it either, or every record after it would
// look late. So a source has a position, the median of its last three believed times, and a time more
// than maxJump from it is held until the records after it tell: if CONFIRMATIONS of them in a row agree
// (each within maxJump of the one before), the log really jumped (a quiet night, a restart of the
// gateway) and they are all believed; as soon as one is near the old position again, the held ones are
// far-out. Times outside [notBefore, notAfter] are far-out at once.

/** Records in a row that make a jump believed (the first of them included). */
export const CONFIRMATIONS = 3;

export interface TimeFilterOptions {
  maxJumpMs: number;
  notBeforeMs: number;
  notAfterMs: number;
}

export class TimeFilter<T> {
  /** The last three believed times, oldest first (fewer at the start). */
  private readonly recent: number[] = [];
  /** Times held since the last believed one, each within maxJump of the one before. */
  private held: { timeMs: number; item: T }[] = [];

  constructor(
    private readonly opts: TimeFilterOptions,
    /** A believed record, in the order they are believed. */
    private readonly believe: (timeMs: number, item: T) => void,
    /** A far-out record. */
    private readonly reject: (item: T) => void,
  ) {}

  /** Where the source is on the timeline: the median of its last three believed times (the least of fewer). */
  get position(): number | undefined {
    const r = this.recent;
    if (r.length < 3) return r.length === 0 ? undefined : Math.min(...r);
    const [a, b, c] = r as [number, number, number];
    return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
  }

  offer(timeMs: number, item: T): void {
    if (timeMs < this.opts.notBeforeMs || timeMs > this.opts.notAfterMs) {
      this.reject(item);
      return;
    }
    const at = this.position;
    if (at !== undefined && Math.abs(timeMs - at) <= this.opts.maxJumpMs) {
      this.rejectHeld();
      this.accept(timeMs, item);
      return;
    }
    const last = this.held.at(-1);
    if (last !== undefined && Math.abs(timeMs - last.timeMs) > this.opts.maxJumpMs) this.rejectHeld();
    this.held.push({ timeMs, item });
    if (this.held.length >= CONFIRMATIONS) this.acceptHeld();
  }

  /**
   * The source ended. Held times of a source that never had a position are believed (a file of one or two
   * records); held times that left a position were never confirmed, so they are far-out.
   */
  end(): void {
    if (this.position === undefined) this.acceptHeld();
    else this.rejectHeld();
  }

  private accept(timeMs: number, item: T): void {
    this.recent.push(timeMs);
    if (this.recent.length > 3) this.recent.shift();
    this.believe(timeMs, item);
  }

  private acceptHeld(): void {
    const held = this.held;
    this.held = [];
    for (const h of held) this.accept(h.timeMs, h.item);
  }

  private rejectHeld(): void {
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    for (const h of held) this.reject(h.item);
  }
}
