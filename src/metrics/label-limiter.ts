// Keeps one label's values bounded, in count and in length: a value longer than `maxValueBytes` is cut at
// a UTF-8 boundary and marked with CUT_MARK; the first `limit` distinct (cut) values pass, later ones
// become __other__. A gateway that suddenly logs request ids, or whole prompts, as "model" must not take
// Prometheus (or our own /metrics) down with it.

export const OVERFLOW_VALUE = '__other__';
/** Ends a value that was cut to `maxValueBytes`; counted in the value's bytes. */
export const CUT_MARK = '…';
const CUT_MARK_BYTES = Buffer.byteLength(CUT_MARK);

/** Why a label value was not kept as logged: too many distinct values, or too long (then cut, not replaced). */
export type LabelOverflowReason = 'too_many_values' | 'too_long';
export const LABEL_OVERFLOW_REASONS: readonly LabelOverflowReason[] = ['too_many_values', 'too_long'];

export class LabelLimiter {
  private readonly seen = new Set<string>();

  constructor(
    private readonly limit: number,
    private readonly onOverflow: (reason: LabelOverflowReason) => void = () => {},
    private readonly maxValueBytes = Number.POSITIVE_INFINITY,
  ) {
    if (maxValueBytes <= CUT_MARK_BYTES) throw new Error(`a label value limit must be more than ${CUT_MARK_BYTES} bytes`);
  }

  /** How many values were admitted so far. */
  get size(): number {
    return this.seen.size;
  }

  /** The values admitted so far, in the order they were admitted. */
  values(): string[] {
    return [...this.seen];
  }

  /**
   * Admits saved values (a checkpoint) in their order, up to the limit, without counting overflow: after a
   * restart the same values keep their own series and the same later ones still become __other__. Values
   * saved by a version without the length bound are cut as a line's would be.
   */
  admit(values: readonly string[]): void {
    for (const v of values) {
      if (this.seen.size >= this.limit) return;
      this.seen.add(this.cut(v));
    }
  }

  /** Whether these values and the ones admitted so far, together, fit the limit (none would overflow). */
  fitsWith(values: readonly string[]): boolean {
    let extra = 0;
    for (const v of new Set(values)) if (!this.seen.has(v)) extra++;
    return this.seen.size + extra <= this.limit;
  }

  /** The value a line's label gets. Each call counts at most one reason: cut (too_long) or replaced (too_many_values). */
  map(value: string): string {
    if (this.seen.has(value)) return value;
    const cut = this.cut(value);
    if (this.seen.has(cut) || this.seen.size < this.limit) {
      this.seen.add(cut);
      if (cut !== value) this.onOverflow('too_long');
      return cut;
    }
    this.onOverflow('too_many_values');
    return OVERFLOW_VALUE;
  }

  /**
   * A saved series' value (a checkpoint row) as this limiter bounds it now: cut, admitted while there is
   * room, else __other__. Nothing is counted: the lines behind the row were counted when they were read.
   */
  restore(value: string): string {
    if (value === OVERFLOW_VALUE) return value;
    const cut = this.cut(value);
    if (this.seen.has(cut)) return cut;
    if (this.seen.size < this.limit) {
      this.seen.add(cut);
      return cut;
    }
    return OVERFLOW_VALUE;
  }

  /** The value itself when it fits maxValueBytes, else its longest prefix that fits with CUT_MARK after it. */
  cut(value: string): string {
    return cutToBytes(value, this.maxValueBytes);
  }
}

/** `value` when its UTF-8 encoding fits `maxBytes`, else its longest prefix that fits with CUT_MARK after it. */
export function cutToBytes(value: string, maxBytes: number): string {
  // UTF-8 needs at most 3 bytes per UTF-16 unit: short values (almost all) skip the byte count.
  if (value.length * 3 <= maxBytes || Buffer.byteLength(value) <= maxBytes) return value;
  return cutUtf8(value, maxBytes - CUT_MARK_BYTES) + CUT_MARK;
}

/** The longest prefix of `value` whose UTF-8 encoding fits `maxBytes`, never splitting a code point. */
export function cutUtf8(value: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < value.length) {
    const cp = value.codePointAt(i) as number;
    // A lone surrogate is written as U+FFFD: 3 bytes, like any other unit below U+10000.
    const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += cp < 0x10000 ? 1 : 2;
  }
  return value.slice(0, i);
}
