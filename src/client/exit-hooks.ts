// Records still buffered when the process ends are delivered first: on `beforeExit` (the event loop ran
// dry: a script made its last call and returns) always, and on SIGTERM/SIGINT for the handles created with
// `handleSignals: true`, after which the signal is raised again so the process ends as it would have
// (killed by that signal) unless the application listens for it itself. Each drain is bounded by its
// sink's closeTimeout, so none of this can keep a process from ending.

export interface Drainable {
  /** Whether something is still to be delivered. */
  pending(): boolean;
  /** Delivers what is pending, or gives up on it (counted) within the sink's bound. */
  flush(): Promise<void>;
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
type ExitSignal = (typeof SIGNALS)[number];

const atExit = new Set<Drainable>();
const atSignal = new Set<Drainable>();
let draining: Promise<void> | undefined;

function drainAll(sinks: Iterable<Drainable>): Promise<void> {
  return Promise.all([...sinks].filter((s) => s.pending()).map((s) => s.flush().catch(() => undefined))).then(() => undefined);
}

// Only when something is pending: a drain that finds nothing starts no work, so the loop ends for good.
const onBeforeExit = (): void => {
  if (draining === undefined && [...atExit].some((s) => s.pending())) draining = drainAll(atExit).finally(() => (draining = undefined));
};

const onSignal = (signal: ExitSignal): void => {
  // A second signal while draining: the user insists; stop waiting.
  if (signalDrain !== undefined) return reraise(signal);
  signalDrain = drainAll(atSignal).then(() => reraise(signal));
};
let signalDrain: Promise<void> | undefined;

function reraise(signal: ExitSignal): void {
  signalDrain = undefined;
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  // The application handles the signal itself: it decides when to exit; keep draining at its next signal.
  if (process.listenerCount(signal) > 0) {
    if (atSignal.size > 0) for (const s of SIGNALS) process.on(s, onSignal);
    return;
  }
  process.kill(process.pid, signal);
}

/** Registers a sink for the exit drains; returns the function that unregisters it (its close()). */
export function drainAtExit(sink: Drainable, handleSignals: boolean): () => void {
  if (atExit.size === 0) process.on('beforeExit', onBeforeExit);
  atExit.add(sink);
  if (handleSignals) {
    if (atSignal.size === 0) for (const s of SIGNALS) process.on(s, onSignal);
    atSignal.add(sink);
  }
  return () => {
    atExit.delete(sink);
    if (atExit.size === 0) process.removeListener('beforeExit', onBeforeExit);
    if (atSignal.delete(sink) && atSignal.size === 0 && signalDrain === undefined) for (const s of SIGNALS) process.removeListener(s, onSignal);
  };
}
