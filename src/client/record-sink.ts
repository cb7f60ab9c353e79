// Where an instrumented call's line goes. Each destination counts what it delivered and what it lost in
// zero_plane_client_records_total; write() returns at once (the call it records is not held up).
import type { RecordResult } from './client-metrics.js';
import type { Family } from './exposition.js';

export interface RecordSink {
  /** Takes one line (no newline). May throw; the caller counts that and goes on. */
  write(line: string): void;
  /** Families the destination shows itself (the in-process pipeline's), beside the client's own. */
  families(): readonly Family[];
  beforeScrape?(): void;
  /** Whether records are waiting to be delivered (the exit drains skip a sink with none). */
  pending(): boolean;
  /** Resolves once everything written so far is delivered, or given up on (counted) after closeTimeout. */
  flush(): Promise<void>;
  /** Flushes, then stops timers; bounded like flush(). */
  close(): Promise<void>;
}

/**
 * Calls `warn` once per key: a destination that stays down must not write one warning per call. A warn
 * callback that throws is ignored: a warning must never be what fails a call.
 */
export function warnOnce(warn: (message: string) => void): (key: string, message: string) => void {
  const said = new Set<string>();
  return (key, message) => {
    if (said.has(key)) return;
    said.add(key);
    try {
      warn(message);
    } catch {
      // the application's own warning sink failed; nothing more to do about it here
    }
  };
}

/**
 * Waits while `busy()` gives work in progress (calling `between` after each piece settles), at most `ms`:
 * true when it all settled, false when the deadline came first. The deadline timer is not unref'd: while
 * it waits the process stays alive (no exit mid-flush with code 13), and never longer.
 */
export async function settleWithin(ms: number, busy: () => Promise<void> | undefined, between?: () => void): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    for (let work = busy(); work !== undefined; work = busy()) {
      if ((await Promise.race([work.then(() => 'settled' as const), deadline])) === 'late') return false;
      between?.();
    }
    return true;
  } finally {
    clearTimeout(timer);
  }
}

/** A batch on its way until it is counted, so a give-up and a late outcome never both count it. */
export interface Flight {
  readonly batch: readonly string[];
  counted: boolean;
}

/**
 * The lines a file or ingest sink holds: those queued and the batch in flight, each counted exactly once
 * in zero_plane_client_records_total (by its outcome, or as dropped when a bounded flush gives up on it),
 * with zero_plane_client_pending_records kept to what is queued (and the batch in flight, until it lands).
 */
export class PendingRecords {
  private queue: string[] = [];
  private inFlight: Flight | undefined;

  constructor(
    private readonly count: (outcome: RecordResult, n: number) => void,
    private readonly showPending: (n: number) => void,
  ) {}

  get length(): number {
    return this.queue.length;
  }

  push(line: string): void {
    this.queue.push(line);
    this.showPending(this.queue.length);
  }

  /** Takes up to `max` queued lines as the batch in flight. */
  take(max = Infinity): Flight {
    const flight: Flight = { batch: max >= this.queue.length ? this.queue : this.queue.slice(0, max), counted: false };
    this.queue = max >= this.queue.length ? [] : this.queue.slice(max);
    // Still pending (in the gauge) until it lands.
    this.inFlight = flight;
    return flight;
  }

  /** Counts n of the flight's lines by their outcome, unless a give-up has counted the flight already. */
  outcome(flight: Flight, outcome: RecordResult, n: number): void {
    if (!flight.counted && n > 0) this.count(outcome, n);
  }

  /** The flight is over: whatever comes of it later is not counted again. */
  landed(flight: Flight): void {
    flight.counted = true;
    if (this.inFlight === flight) this.inFlight = undefined;
    this.showPending(this.queue.length);
  }

  /** Gives up on what is queued and in flight: counted as dropped; returns how many lines that was. */
  giveUp(): number {
    const flight = this.inFlight;
    const lost = this.queue.length + (flight !== undefined && !flight.counted ? flight.batch.length : 0);
    this.queue = [];
    if (flight !== undefined) this.landed(flight);
    if (lost > 0) this.count('dropped', lost);
    this.showPending(0);
    return lost;
  }
}
