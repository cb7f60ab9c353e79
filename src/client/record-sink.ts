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
