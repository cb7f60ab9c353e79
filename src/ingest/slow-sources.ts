// Addresses whose last body came in under the minimum rate, and until when they are refused. One set for
// both endpoints (NDJSON ingest and OTLP): an address cut on one must not go on trickling on the other.
/** At most this many addresses are remembered; the oldest is let go first. */
const MAX_SLOW_SOURCES = 4096;

export class SlowSources {
  private readonly until = new Map<string, number>();

  /** How long this address must still wait, in ms, or undefined when it may send. */
  waitMs(source: string, nowMs = Date.now()): number | undefined {
    const until = this.until.get(source);
    if (until === undefined) return undefined;
    if (until > nowMs) return until - nowMs;
    this.until.delete(source);
    return undefined;
  }

  /** The address sent too slowly: refuse it for `cooldownMs` (nothing when 0). */
  cut(source: string, cooldownMs: number, nowMs = Date.now()): void {
    if (cooldownMs <= 0) return;
    if (this.until.size >= MAX_SLOW_SOURCES && !this.until.has(source)) this.until.delete(this.until.keys().next().value as string);
    this.until.set(source, nowMs + cooldownMs);
  }
}
