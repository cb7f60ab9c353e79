// The most repeated prompts, by their hash (record/parse-record.ts promptHashOf), in bounded memory: the
// Space-Saving summary (Metwally, Agrawal, El Abbadi 2005). It keeps at most `k` hashes with a count each.
// A hash not kept replaces the one with the lowest count and inherits that count as its error, so every
// count is an upper bound and count − error a lower bound (the requests seen since it was kept), and any
// hash asked more than requests/k times is kept. Per kept hash it also counts the answers that came back
// cached (x-anthropic-cached: true) since it was kept: the share of cached answers is cached / (count − error).
// The hashes sit in a min-heap on count (parallel arrays, a Map from hash to heap slot): O(log k) per request.

import { byCodeUnits } from '../code-unit-order.js';

/** One kept hash: `count` is an upper bound of its requests, `count − error` a lower bound. */
export interface RepeatEntry {
  hash: string;
  count: number;
  error: number;
  /** Cached answers among the count − error requests seen since the hash was kept. */
  cached: number;
}

/** One of the top hashes as `report`, serve's gauges and /api/v1/repeats show it. */
export interface RepeatRow extends RepeatEntry {
  rank: number;
  /** cached / (count − error): over the requests seen since the hash was kept. */
  cachedShare: number;
}

/** What `report` and /api/v1/repeats show: the exact totals and the top rows. */
export interface RepeatsSummary {
  /** Requests that carried a prompt hash, and of those answered from cache: exact. */
  requests: number;
  cached: number;
  cachedShare: number | null;
  /** Hashes kept (repeats.k). */
  k: number;
  /** The highest counts, highest first. */
  top: RepeatRow[];
}

/** A summary as plain data that crosses threads (`report` on two threads) and merges. */
export interface RepeatsState {
  k: number;
  requests: number;
  cached: number;
  /** [hash, count, error, cached], any order. */
  entries: [string, number, number, number][];
}

export class RepeatedPrompts {
  /** Requests that carried a prompt hash, and how many of them were answered from cache: exact. */
  requests = 0;
  cached = 0;
  private readonly slot = new Map<string, number>();
  private readonly hashes: string[] = [];
  private readonly counts: number[] = [];
  private readonly errors: number[] = [];
  private readonly cachedCounts: number[] = [];

  constructor(readonly k: number) {
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`RepeatedPrompts: k must be a whole number ≥ 1, got ${k}`);
  }

  /** Hashes kept now (at most k). */
  get size(): number {
    return this.hashes.length;
  }

  add(hash: string, cached: boolean): void {
    this.requests++;
    if (cached) this.cached++;
    const at = this.slot.get(hash);
    if (at !== undefined) {
      this.counts[at] = (this.counts[at] as number) + 1;
      if (cached) this.cachedCounts[at] = (this.cachedCounts[at] as number) + 1;
      this.down(at);
      return;
    }
    if (this.hashes.length < this.k) {
      this.push(hash, 1, 0, cached ? 1 : 0);
      return;
    }
    // Full: the hash with the lowest count (the heap's root) gives its place, and its count as the newcomer's error.
    const min = this.counts[0] as number;
    this.slot.delete(this.hashes[0] as string);
    this.hashes[0] = hash;
    this.counts[0] = min + 1;
    this.errors[0] = min;
    this.cachedCounts[0] = cached ? 1 : 0;
    this.slot.set(hash, 0);
    this.down(0);
  }

  /** The `n` highest counts, highest first (ties by hash, for stable output). */
  top(n: number): RepeatEntry[] {
    const all = this.hashes.map((hash, i) => ({ hash, count: this.counts[i] as number, error: this.errors[i] as number, cached: this.cachedCounts[i] as number }));
    return all.sort((a, b) => b.count - a.count || byCodeUnits(a.hash, b.hash)).slice(0, n);
  }

  /** top(n) ranked from 1, with each hash's cached share. */
  rows(n: number): RepeatRow[] {
    return this.top(n).map((e, i) => ({ rank: i + 1, ...e, cachedShare: e.cached / (e.count - e.error) }));
  }

  summary(n: number): RepeatsSummary {
    return { requests: this.requests, cached: this.cached, cachedShare: this.requests === 0 ? null : this.cached / this.requests, k: this.k, top: this.rows(n) };
  }

  state(): RepeatsState {
    return { k: this.k, requests: this.requests, cached: this.cached, entries: this.hashes.map((h, i) => [h, this.counts[i] as number, this.errors[i] as number, this.cachedCounts[i] as number]) };
  }

  /** Forgets everything: a parse worker's summary once handed to the serving thread (cli/parse-worker.ts). */
  clear(): void {
    this.requests = 0;
    this.cached = 0;
    this.slot.clear();
    for (const arr of [this.hashes, this.counts, this.errors, this.cachedCounts]) arr.length = 0;
  }

  /**
   * Adds a summary of other requests (the later half of a file read on another thread). A hash one side
   * does not keep may have been seen there up to that side's lowest count (0 when it is not full), so it
   * is added as count and error both: the bounds stay bounds (Cafaro et al., mergeable Space-Saving).
   * The k highest of the union are kept.
   */
  mergeState(other: RepeatsState): void {
    const own = this.state().entries;
    const mine = new Map(own.map((e) => [e[0], e]));
    const theirs = new Map(other.entries.map((e) => [e[0], e]));
    const floor = (entries: RepeatsState['entries'], k: number) => (entries.length < k ? 0 : entries.reduce((m, e) => Math.min(m, e[1]), Infinity));
    const myFloor = floor(own, this.k);
    const theirFloor = floor(other.entries, other.k);
    const merged: [string, number, number, number][] = [];
    for (const hash of new Set([...mine.keys(), ...theirs.keys()])) {
      const a = mine.get(hash);
      const b = theirs.get(hash);
      merged.push([hash, (a?.[1] ?? myFloor) + (b?.[1] ?? theirFloor), (a?.[2] ?? myFloor) + (b?.[2] ?? theirFloor), (a?.[3] ?? 0) + (b?.[3] ?? 0)]);
    }
    merged.sort((x, y) => y[1] - x[1] || byCodeUnits(x[0], y[0]));
    this.requests += other.requests;
    this.cached += other.cached;
    this.slot.clear();
    for (const arr of [this.hashes, this.counts, this.errors, this.cachedCounts]) arr.length = 0;
    for (const [hash, count, error, cached] of merged.slice(0, this.k)) this.push(hash, count, error, cached);
  }

  private push(hash: string, count: number, error: number, cached: number): void {
    const i = this.hashes.length;
    this.hashes.push(hash);
    this.counts.push(count);
    this.errors.push(error);
    this.cachedCounts.push(cached);
    this.slot.set(hash, i);
    this.up(i);
  }

  private up(start: number): void {
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.counts[parent] as number) <= (this.counts[i] as number)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(start: number): void {
    const n = this.hashes.length;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const child = r < n && (this.counts[r] as number) < (this.counts[l] as number) ? r : l;
      if ((this.counts[i] as number) <= (this.counts[child] as number)) return;
      this.swap(i, child);
      i = child;
    }
  }

  /** Written out field by field: it runs a few times per request, and must not allocate. */
  private swap(i: number, j: number): void {
    const c = this.counts[i] as number;
    this.counts[i] = this.counts[j] as number;
    this.counts[j] = c;
    const e = this.errors[i] as number;
    this.errors[i] = this.errors[j] as number;
    this.errors[j] = e;
    const k = this.cachedCounts[i] as number;
    this.cachedCounts[i] = this.cachedCounts[j] as number;
    this.cachedCounts[j] = k;
    const hi = this.hashes[i] as string;
    const hj = this.hashes[j] as string;
    this.hashes[i] = hj;
    this.hashes[j] = hi;
    this.slot.set(hj, i);
    this.slot.set(hi, j);
  }
}
