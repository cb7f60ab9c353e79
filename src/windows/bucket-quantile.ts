// Prometheus' histogram_quantile on cumulative bucket counts (bucketQuantile in promql/quantile.go, 2.42):
// linear inside the bucket the rank falls in, the highest finite bound when it falls in +Inf. Shared by the
// backtest (src/history, over rates) and report's capacity windows (over counts): the same estimate as
// the recording rules' drift. bucketIndex is the one `le` lookup: the histogram series and the capacity
// windows both count with it.

/** The first bound at or above `v` (buckets are `le`, inclusive); bounds.length when `v` is above every bound (+Inf). */
export function bucketIndex(bounds: readonly number[], v: number): number {
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((bounds[mid] as number) < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The q-quantile of cumulative `counts` per upper bound (the last one +Inf); undefined without observations. */
export function histogramQuantile(q: number, upper: readonly number[], counts: readonly number[]): number | undefined {
  const n = upper.length;
  if (n < 2 || upper[n - 1] !== Infinity) return undefined;
  // ensureMonotonic: a bucket never counts less than the one below it.
  const c = [...counts];
  for (let i = 1; i < n; i++) if ((c[i] as number) < (c[i - 1] as number)) c[i] = c[i - 1] as number;
  const observations = c[n - 1] as number;
  if (!(observations > 0)) return undefined;
  let rank = q * observations;
  let b = 0;
  while (b < n - 1 && (c[b] as number) < rank) b++;
  if (b === n - 1) return upper[n - 2];
  if (b === 0 && (upper[0] as number) <= 0) return upper[0];
  let start = 0;
  let count = c[b] as number;
  if (b > 0) {
    start = upper[b - 1] as number;
    count -= c[b - 1] as number;
    rank -= c[b - 1] as number;
  }
  return start + ((upper[b] as number) - start) * (rank / count);
}
