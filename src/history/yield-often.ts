// A loop that only computes (the steps of a long timeline, the series of a spill read back) never lets the
// event loop run, so a SIGTERM's handler would wait for the loop's end: minutes on a long span. `breathe`
// gives the event loop a turn once SLICE_MS of work has passed (one clock read per CHECK_EVERY calls),
// then stops the loop if the command was interrupted.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Work between two turns of the event loop at most (about): a signal is seen well within a second. */
const SLICE_MS = 50;
const CHECK_EVERY = 64;

export type Breathe = () => Promise<void> | undefined;

/** A `breathe` for one loop: undefined (nothing to await) on most calls; a turn of the event loop, then `interrupt` checked, on some. */
export function breather(interrupt: AbortSignal | undefined): Breathe {
  let calls = 0;
  let since = performance.now();
  return () => {
    if (++calls % CHECK_EVERY !== 0) return undefined;
    if (performance.now() - since < SLICE_MS) return undefined;
    return nextTurn().then(() => {
      since = performance.now();
      interrupt?.throwIfAborted();
    });
  };
}
