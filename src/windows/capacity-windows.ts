// `report`'s capacity figure over a whole file: the deterministic bandwidth demand of the pack's rule
// ((1 + the maximum p99 drift) × the request rate), with the file in place of the last 24 h. Records are
// put in windows of their own time (pack.rateWindow, aligned on the clock, as the rules' 5 m windows), each
// window keeping its request count and its Zero-Plane latency histogram (the exporter's buckets): the p99
// of a window is histogram_quantile over them, the same estimate as zero_plane:p99_drift:ratio_rate5m.
// Memory: one row of bucket counts per window with records (a day of 5 m windows is 288 rows).
import { bucketIndex, histogramQuantile } from './bucket-quantile.js';

/** As plain data that crosses threads: [window index, requests, hit counts per bucket (the last +Inf)]. */
export interface CapacityWindowsState {
  windows: [number, number, number[]][];
}

export interface CapacityFigure {
  windowSeconds: number;
  /** Windows from the first record's to the last's (records without a time are in none). */
  windowsSpanned: number;
  /** Zero-Plane requests a window needs to count (alerts.minRequests, the rules' traffic guard). */
  minHits: number;
  /** Windows with at least minHits Zero-Plane requests: the ones the maximum is taken over. */
  windowsWithTraffic: number;
  /** The largest p99 drift of those windows, and where that window starts; null when there is none. */
  maxP99Drift: number | null;
  maxP99DriftWindowStart: string | null;
  /** Requests with a time / (windowsSpanned × windowSeconds): the mean of the rule's request rate over the file. */
  requestRatePerSecond: number | null;
  /** (1 + maxP99Drift) × requestRatePerSecond, in baseline requests per second. */
  deterministicBandwidthDemand: number | null;
}

interface Row {
  requests: number;
  /** Per bucket (not cumulative), the last for +Inf. */
  hits: number[];
}

export class CapacityWindows {
  private readonly rows = new Map<number, Row>();
  /** The row of the last record: most records fall in the window of the one before. */
  private lastIndex = Number.NaN;
  private lastRow: Row | undefined;

  constructor(
    private readonly windowMs: number,
    /** The histogram's finite upper bounds, ascending. */
    private readonly bounds: readonly number[],
  ) {}

  /** `bucket`: bucketIndex(bounds, latencySeconds) when the caller has it already (the histogram's observe, same bounds). */
  add(timeMs: number | undefined, hit: boolean, latencySeconds: number, bucket?: number): void {
    if (timeMs === undefined) return;
    const index = Math.floor(timeMs / this.windowMs);
    let row = index === this.lastIndex ? this.lastRow : this.rows.get(index);
    if (row === undefined) {
      row = { requests: 0, hits: new Array<number>(this.bounds.length + 1).fill(0) };
      this.rows.set(index, row);
    }
    this.lastIndex = index;
    this.lastRow = row;
    row.requests++;
    if (hit) {
      const b = bucket ?? bucketIndex(this.bounds, latencySeconds);
      row.hits[b] = (row.hits[b] as number) + 1;
    }
  }

  state(): CapacityWindowsState {
    return { windows: [...this.rows].map(([i, r]) => [i, r.requests, [...r.hits]]) };
  }

  /** Adds the windows of a pipeline that read other lines of the input (counts add up: exact). */
  mergeState(other: CapacityWindowsState): void {
    for (const [i, requests, hits] of other.windows) {
      let row = this.rows.get(i);
      if (row === undefined) this.rows.set(i, (row = { requests: 0, hits: new Array<number>(this.bounds.length + 1).fill(0) }));
      row.requests += requests;
      const counts = row.hits;
      hits.forEach((n, b) => (counts[b] = (counts[b] as number) + n));
    }
  }

  figure(baselineSeconds: number, minHits: number): CapacityFigure {
    const upper = [...this.bounds, Infinity];
    let first = Infinity;
    let last = -Infinity;
    let requests = 0;
    let withTraffic = 0;
    let max: number | null = null;
    let maxAt: number | null = null;
    for (const [i, row] of this.rows) {
      if (i < first) first = i;
      if (i > last) last = i;
      requests += row.requests;
      let total = 0;
      const cumulative = row.hits.map((n) => (total += n));
      if (total < minHits) continue;
      withTraffic++;
      const p99 = histogramQuantile(0.99, upper, cumulative);
      if (p99 === undefined) continue;
      const drift = p99 / baselineSeconds - 1;
      // Ties go to the earliest window, so the answer does not depend on the order windows were seen.
      if (max === null || drift > max || (drift === max && i < (maxAt as number))) [max, maxAt] = [drift, i];
    }
    const spanned = this.rows.size === 0 ? 0 : last - first + 1;
    const rate = spanned === 0 ? null : requests / ((spanned * this.windowMs) / 1000);
    return {
      windowSeconds: this.windowMs / 1000,
      windowsSpanned: spanned,
      minHits,
      windowsWithTraffic: withTraffic,
      maxP99Drift: max,
      maxP99DriftWindowStart: maxAt === null ? null : new Date(maxAt * this.windowMs).toISOString(),
      requestRatePerSecond: rate,
      deterministicBandwidthDemand: max === null || rate === null ? null : (1 + max) * rate,
    };
  }
}
