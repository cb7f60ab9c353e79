// Connections first. Since libuv 1.45 (Node 20) a listening socket accepts ONE connection per turn of the
// event loop (libuv PR #3696: no accept() loop, level-triggered polling brings the next). A health probe
// that connects behind a burst of 200 scrape connections waits 200 turns, and under a scrape flood a turn
// holds a render slice and a turn of body writes: bench/scrape-flood-probes.mjs measured 460-1,100 ms from
// the probe's connect to serve's accept, while the event loop's own delay never passed 52 ms. So the bulk
// work of /metrics (starting a render, writing bodies) lets the loop turn again, doing nothing, while
// connections are still being accepted: a turn that only accepts and reads costs well under a millisecond,
// and a burst is taken in before the work resumes. Bounded: after MAX_DEFER_MS of deferring in a row the
// work is not deferred for as long again, so under a storm of connections (a login flood opens one per
// request) the work still gets half the loop, and what it owes cannot pile up.
import { performance } from 'node:perf_hooks';
import type { Server as NetServer } from 'node:net';

/** How long in a row bulk work may be put off for connections still arriving. */
export const MAX_DEFER_MS = 200;

let accepted = 0;

/** Counts the connections `server` accepts, for every AcceptFirst (listenWeb calls it on each listener). */
export function watchAccepts(server: NetServer): void {
  server.on('connection', () => accepted++);
}

/** One kind of bulk work's view of the accepts (its own, so two kinds in one turn both see them). */
export class AcceptFirst {
  private seen = accepted;
  private deferringSince: number | undefined;
  /** Until when the work runs undeferred, after a full MAX_DEFER_MS of deferring. */
  private workUntil = 0;

  /**
   * Whether the caller, about to do a piece of bulk work in the check phase, should instead let the loop
   * turn once more (setImmediate) because a connection was accepted since it last asked: the accept queue
   * may hold more. False once a turn passes with no accept, and for MAX_DEFER_MS after MAX_DEFER_MS of
   * deferring in a row.
   */
  shouldDefer(): boolean {
    const fresh = accepted !== this.seen;
    this.seen = accepted;
    const now = performance.now();
    if (!fresh || now < this.workUntil) {
      this.deferringSince = undefined;
      return false;
    }
    this.deferringSince ??= now;
    if (now - this.deferringSince < MAX_DEFER_MS) return true;
    this.deferringSince = undefined;
    this.workUntil = now + MAX_DEFER_MS;
    return false;
  }
}

/** Milliseconds of deferred requests handled per turn of the loop (as the body writes' WRITE_TURN_MS). */
export const REQUEST_TURN_MS = 2;

/** The paths answered the moment they are read, never put off: the kubelet's probes. */
export const PROBE_PATHS: readonly string[] = ['/-/healthy', '/-/ready'];

function isProbe(url: string | undefined): boolean {
  if (url === undefined) return false;
  const path = url.split('?', 1)[0];
  return PROBE_PATHS.includes(path as string);
}

/**
 * Wraps a request handler (the Express app): a health probe is handled at once, in the turn that read it;
 * every other request is handled in the check phase, a REQUEST_TURN_MS budget a turn, and not while
 * connections are still being accepted (AcceptFirst). Under a flood of 200 scrape connections that is what
 * keeps a turn cheap: accept one connection and read what has arrived; routing, refusals and renders wait
 * for the burst to be taken in, and the probe behind it is answered first.
 */
export function probesFirst<Req extends { url?: string | undefined }, Res>(handle: (req: Req, res: Res) => void): (req: Req, res: Res) => void {
  const waiting: [Req, Res][] = [];
  const acceptFirst = new AcceptFirst();
  let scheduled = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(turn);
  };
  const turn = (): void => {
    scheduled = false;
    if (acceptFirst.shouldDefer()) return schedule();
    const t0 = performance.now();
    // At least one a turn, so a slow machine still makes progress; in arrival order.
    do {
      const [req, res] = waiting.shift() as [Req, Res];
      handle(req, res);
    } while (waiting.length > 0 && performance.now() - t0 < REQUEST_TURN_MS);
    if (waiting.length > 0) schedule();
  };
  return (req, res) => {
    if (isProbe(req.url)) return handle(req, res);
    waiting.push([req, res]);
    schedule();
  };
}
