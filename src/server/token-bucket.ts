// A token bucket as golang.org/x/time/rate's Limiter.Allow(): it starts full with `burst` tokens and
// gains one every `intervalMs`, never holding more than `burst`. Used by the toolkit's `rate_limit` and by
// basic auth to limit failed logins per client.

export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly burst: number,
    private readonly intervalMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.at = clock();
  }

  /** Takes a token when there is one; false (and nothing taken) when the bucket is empty. */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Gives back a token taken for something that turned out not to count (a login that succeeded). */
  giveBack(): void {
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  /** Full again: holding it is the same as forgetting it. */
  isFull(): boolean {
    this.refill();
    return this.tokens >= this.burst;
  }

  /** Milliseconds until the next token (0 when one is there, Infinity when none can ever be): a Retry-After for the refused. */
  msUntilToken(): number {
    if (this.burst < 1) return Number.POSITIVE_INFINITY;
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil((1 - this.tokens) * this.intervalMs);
  }

  private refill(): void {
    const now = this.clock();
    if (now > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + (now - this.at) / this.intervalMs);
      this.at = now;
    }
  }
}

/**
 * One bucket per key (a client address), at most `maxKeys` of them: a full bucket is dropped (a fresh one
 * is the same), and past the cap the oldest goes, so a flood of addresses cannot grow the map.
 */
export class KeyedBuckets {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly burst: number,
    private readonly intervalMs: number,
    private readonly maxKeys: number,
    private readonly clock: () => number = Date.now,
  ) {}

  bucket(key: string): TokenBucket {
    let b = this.buckets.get(key);
    if (b === undefined) {
      if (this.buckets.size >= this.maxKeys) this.prune();
      b = new TokenBucket(this.burst, this.intervalMs, this.clock);
      this.buckets.set(key, b);
    }
    return b;
  }

  get size(): number {
    return this.buckets.size;
  }

  private prune(): void {
    for (const [key, b] of this.buckets) if (b.isFull()) this.buckets.delete(key);
    while (this.buckets.size >= this.maxKeys) {
      const oldest = this.buckets.keys().next();
      if (oldest.done === true) break;
      this.buckets.delete(oldest.value);
    }
  }
}
