// How a one-shot command (report, backtest, export) stops on SIGTERM or SIGINT: at once, even while a read
// waits on a pipe or a FIFO with no writer yet, with the signal's exit code, and its scratch files removed.
import { raceAbort } from '../source/abort-race.js';

/** The exit code of a one-shot command stopped by a signal, as a shell reports a process killed by it. */
const EXIT_ON_SIGNAL: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 };

/** The reason a one-shot command was stopped: the signal it got. */
export class Interrupted extends Error {
  constructor(readonly signal: string) {
    super(`interrupted by ${signal}`);
    this.name = 'Interrupted';
  }
}

/**
 * Runs `work` until it ends or `interrupt` is aborted with an Interrupted reason, whichever comes first
 * (raced, not only awaited: an open() of a FIFO waits in the thread pool for a writer and cannot be
 * cancelled). Interrupted, it returns the signal's exit code once `work` has unwound, or at once if it
 * cannot (that open()); `stopped` is told first.
 */
export async function untilInterrupted(work: Promise<number>, interrupt: AbortSignal, stopped: (signal: string) => void): Promise<number> {
  try {
    return await raceAbort(work, interrupt);
  } catch (err) {
    if (!(interrupt.aborted && interrupt.reason instanceof Interrupted)) throw err;
    stopped(interrupt.reason.signal);
    // Its finally blocks (a scratch directory, open files) run before the exit, unless a read holds it up.
    await Promise.race([work.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    return EXIT_ON_SIGNAL[interrupt.reason.signal] ?? 1;
  }
}

/**
 * Makes sure a command stopped by `interrupt` ends: once its own exit has had 200 ms, the signal is raised
 * again with its default action. A read that waits on a FIFO or pipe whose writer stays open holds a
 * thread-pool thread, and Node's exit waits for those threads; the default action does not (the shell
 * still sees 128 + the signal's number). Does nothing unless `interrupt` was aborted by a signal.
 */
export function endSoon(interrupt: AbortSignal): void {
  if (!interrupt.aborted || !(interrupt.reason instanceof Interrupted)) return;
  const signal = interrupt.reason.signal;
  setTimeout(() => {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }, 200).unref();
}
