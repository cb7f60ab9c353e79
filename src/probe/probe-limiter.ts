// The bound on what probes may spend: one real request per target and module per probe.minInterval (a scrape
// in between gets the last result again), probes of one target at the same time share one request, and at
// most probe.maxRequestsPerHour real requests in any hour, all targets together. A Prometheus scraping
// /probe every second, or ten replicas of a scrape config, cannot multiply the requests past that.
import type { ProbeResult } from './probe-request.js';

export interface LimitedResult {
  result: ProbeResult;
  /** The last result again, not a new request. */
  reused: boolean;
  ageSeconds: number;
}

/** The hour's budget is spent and this target has no result to give again. */
export class ProbeBudgetExhausted extends Error {
  constructor(
    readonly perHour: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`probe.maxRequestsPerHour (${perHour}) real requests were sent in the last hour; the next is allowed in ${retryAfterSeconds} s`);
    this.name = 'ProbeBudgetExhausted';
  }
}

export interface ProbeLimiterOptions {
  minIntervalMs: number;
  maxRequestsPerHour: number;
  /** Milliseconds; injected by tests. */
  now?: () => number;
}

const HOUR_MS = 3_600_000;

export class ProbeLimiter {
  private readonly last = new Map<string, { result: ProbeResult; atMs: number }>();
  private readonly inFlight = new Map<string, Promise<ProbeResult>>();
  /** Send times of the real requests of the last hour, oldest first; never longer than maxRequestsPerHour. */
  private readonly sent: number[] = [];
  private readonly now: () => number;

  constructor(private readonly opts: ProbeLimiterOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Real requests sent so far in the current hour. */
  get sentLastHour(): number {
    this.prune(this.now());
    return this.sent.length;
  }

  /** The result for `key` (module and target): a new request through `send`, the shared one in flight, or the last one. */
  async run(key: string, send: () => Promise<ProbeResult>): Promise<LimitedResult> {
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return { result: await pending, reused: false, ageSeconds: 0 };
    const now = this.now();
    const last = this.last.get(key);
    if (last !== undefined && now - last.atMs < this.opts.minIntervalMs) return this.again(last, now);
    this.prune(now);
    if (this.sent.length >= this.opts.maxRequestsPerHour) {
      if (last !== undefined) return this.again(last, now);
      const oldest = this.sent[0] as number;
      throw new ProbeBudgetExhausted(this.opts.maxRequestsPerHour, Math.max(1, Math.ceil((oldest + HOUR_MS - now) / 1000)));
    }
    this.sent.push(now);
    const request = send();
    this.inFlight.set(key, request);
    try {
      const result = await request;
      this.last.set(key, { result, atMs: now });
      return { result, reused: false, ageSeconds: 0 };
    } finally {
      this.inFlight.delete(key);
    }
  }

  private again(last: { result: ProbeResult; atMs: number }, now: number): LimitedResult {
    return { result: last.result, reused: true, ageSeconds: Math.max(0, (now - last.atMs) / 1000) };
  }

  private prune(now: number): void {
    while (this.sent.length > 0 && (this.sent[0] as number) <= now - HOUR_MS) this.sent.shift();
  }
}
