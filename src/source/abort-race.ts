// Waiting on work that cannot be cancelled (a read or an open() in the thread pool) until a signal aborts.

/**
 * `p`, or a rejection with the signal's reason once it is aborted, whichever comes first (raced, not only
 * awaited). The abort listener is removed when `p` settles, so racing every read of a stream leaves none
 * behind; `p` rejecting later, after the abort, is not an unhandled rejection.
 */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  p.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const done = () => signal.removeEventListener('abort', onAbort);
    p.then(
      (v) => (done(), resolve(v)),
      (e: unknown) => (done(), reject(e)),
    );
  });
}
