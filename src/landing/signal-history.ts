// The last minutes of the four signals, sampled every few seconds, for the landing page's charts. Each
// sample is the sliding window as it stood at that moment (the same numbers /metrics would have shown).
import type { SignalValues } from '../windows/summarize.js';

export interface SignalSample {
  /** Milliseconds since the epoch. */
  t: number;
  p99Seconds: number | null;
  hitRate: number | null;
  drift: number | null;
  degradedCount: number;
  warmupEfficiency: number | null;
  /** Requests in the window at that moment. */
  windowRequests: number;
  /**
   * Records the exporter read per second since the previous sample (the change in
   * zero_plane_requests_total over the elapsed time); null for the first sample.
   */
  requestsPerSecond: number | null;
}

export interface SignalHistoryOptions {
  /** The window's signals now: summarize(window.snapshot(), signals). */
  read: () => SignalValues;
  /** Requests counted by the pipeline so far (the sum of zero_plane_requests_total). */
  totalRequests: () => number;
  /** Default 2 s. */
  intervalMs?: number;
  /** How far back the history reaches; default 10 min. */
  spanMs?: number;
  /** Milliseconds since the epoch; tests inject their own. */
  clock?: () => number;
}

export const DEFAULT_SAMPLE_INTERVAL_MS = 2_000;
export const DEFAULT_HISTORY_SPAN_MS = 10 * 60_000;

export class SignalHistory {
  readonly intervalMs: number;
  readonly spanMs: number;
  private readonly ring: SignalSample[];
  /** Index the next sample is written to. */
  private next = 0;
  private size = 0;
  private previous: { t: number; total: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly clock: () => number;

  constructor(private readonly opts: SignalHistoryOptions) {
    this.intervalMs = opts.intervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS;
    this.spanMs = opts.spanMs ?? DEFAULT_HISTORY_SPAN_MS;
    if (!(this.intervalMs > 0) || !(this.spanMs >= this.intervalMs)) throw new Error('signal history: need 0 < intervalMs ≤ spanMs');
    this.clock = opts.clock ?? Date.now;
    this.ring = new Array<SignalSample>(Math.ceil(this.spanMs / this.intervalMs) + 1);
  }

  /** Takes a sample now and then every interval. The timer never keeps the process alive. */
  start(): void {
    if (this.timer !== undefined) return;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Records one sample (the timer calls this; tests call it with their own clock). */
  sample(): SignalSample {
    const t = this.clock();
    const v = this.opts.read();
    const total = this.opts.totalRequests();
    const p = this.previous;
    const elapsedSeconds = p === undefined ? 0 : (t - p.t) / 1000;
    const s: SignalSample = {
      t,
      p99Seconds: v.p99Seconds,
      hitRate: v.hitRate,
      drift: v.p99Drift,
      degradedCount: v.degradedCount,
      warmupEfficiency: v.warmupEfficiency,
      windowRequests: v.requests,
      requestsPerSecond: p === undefined || elapsedSeconds <= 0 ? null : Math.max(0, total - p.total) / elapsedSeconds,
    };
    this.previous = { t, total };
    this.ring[this.next] = s;
    this.next = (this.next + 1) % this.ring.length;
    this.size = Math.min(this.size + 1, this.ring.length);
    return s;
  }

  /** Samples of the last `spanMs`, oldest first; only those after `sinceMs` when given. */
  samples(sinceMs = -Infinity): SignalSample[] {
    const oldest = this.clock() - this.spanMs;
    const out: SignalSample[] = [];
    for (let k = this.size; k > 0; k--) {
      const s = this.ring[(this.next - k + this.ring.length) % this.ring.length] as SignalSample;
      if (s.t >= oldest && s.t > sinceMs) out.push(s);
    }
    return out;
  }

  latest(): SignalSample | undefined {
    return this.size === 0 ? undefined : this.ring[(this.next - 1 + this.ring.length) % this.ring.length];
  }
}
