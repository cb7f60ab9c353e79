// What Prometheus 2.42 computes for the rules' `sum(rate(x[w]))` and `sum(increase(x[w]))`, bit for bit:
// rate() or increase() of each series on its own, with the extrapolation of promql/functions.go
// (extrapolatedRate), then the sum in float64, one series after another in the order the TSDB returns
// them. A replay that added the counts first and took one rate of the total would round differently,
// and a ratio right at a threshold (30 of 3,000 above the ceiling, warm-up at exactly 88 %) can land on
// the other side of it.
//
// The order: PromQL's `sum` starts from the first series and adds the others as the vector has them
// (engine.go, aggregation; no compensated summation in 2.42), and the vector is the selector's series as
// the querier returns them. A querier over one persisted block returns them in postings order, which is
// label-set order (the index writer refuses series out of that order); over several blocks it merges
// them sorted. So over backfilled blocks the order is labels.Compare's: label by label, names sorted,
// comparing names then values byte by byte, a label set that is a prefix of another first. Labels with
// an empty value are not stored, so they take no place in it.

/** The samples of one series inside a rule's range: the first and last (time, value) and how many there are. */
export interface RangeSamples {
  firstMs: number;
  first: number;
  lastMs: number;
  last: number;
  count: number;
}

/**
 * increase() (`perSecond` false) or rate() (`perSecond` true) of one counter series over the range
 * [startMs, endMs] (both ends included, as 2.42 selects), from its samples there; undefined with fewer
 * than two samples (Prometheus drops the series). The counter must not go down inside the range: a
 * replay's counters never do, so the reset correction (adding the value before each drop) never applies.
 */
export function extrapolatedRate(s: RangeSamples, startMs: number, endMs: number, perSecond: boolean): number | undefined {
  if (s.count < 2) return undefined;
  const delta = s.last - s.first;
  const sampled = (s.lastMs - s.firstMs) / 1000;
  const spacing = sampled / (s.count - 1);
  let toStart = (s.firstMs - startMs) / 1000;
  const toEnd = (endMs - s.lastMs) / 1000;
  // A counter cannot go below 0: when it rose, the extrapolation towards the start stops where the
  // straight line through the samples reaches 0 (a series that starts at 0 in the range reaches it at once).
  if (delta > 0 && s.first >= 0) {
    const toZero = sampled * (s.first / delta);
    if (toZero < toStart) toStart = toZero;
  }
  // Within 1.1 average spacings of a boundary, the samples are taken to reach it; further away, half a spacing.
  const near = spacing * 1.1;
  let covered = sampled;
  covered += toStart < near ? toStart : spacing / 2;
  covered += toEnd < near ? toEnd : spacing / 2;
  let factor = covered / sampled;
  if (perSecond) factor /= (endMs - startMs) / 1000;
  return delta * factor;
}

/** A label set as the TSDB keeps it: sorted by name, empty values left out; names and values as UTF-8 bytes. */
export type StoredLabels = readonly (readonly [Buffer, Buffer])[];

export function storedLabels(pairs: Iterable<readonly [string, string]>): StoredLabels {
  const kept = [...pairs].filter(([, v]) => v !== '').map(([k, v]) => [Buffer.from(k, 'utf8'), Buffer.from(v, 'utf8')] as const);
  return kept.sort((a, b) => Buffer.compare(a[0], b[0]));
}

/** labels.Compare of Prometheus 2.42: negative when `a` comes first. */
export function compareLabels(a: StoredLabels, b: StoredLabels): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const [an, av] = a[i] as readonly [Buffer, Buffer];
    const [bn, bv] = b[i] as readonly [Buffer, Buffer];
    const byName = Buffer.compare(an, bn);
    if (byName !== 0) return byName;
    const byValue = Buffer.compare(av, bv);
    if (byValue !== 0) return byValue;
  }
  return a.length - b.length;
}
