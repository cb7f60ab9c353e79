// Where an instrumented call's line goes. Each destination counts what it delivered and what it lost in
// zero_plane_client_records_total; write() returns at once (the call it records is not held up).
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
  /** flush() for the process's end (exit-hooks.ts); never rejects. */
  drain(): Promise<void>;
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
