// Reads a whole ingest body into memory, within limits, before any of it is counted: a body that turns
// out too large, badly compressed, cut off or too slow counts nothing. gzip is decompressed as it arrives,
// and the limit applies to the decompressed size too, so a small gzip bomb gets 413 instead of the heap.
// The time limit is on the whole body, not on silence: a client that trickles a byte a second would
// otherwise hold its share of the in-flight budget for as long as Node lets a request last (5 m).
import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';

/**
 * The body bytes held at once across concurrent requests (decompressed), shared by every request, and the
 * share of it one source (a client address, all its connections together) may hold, so clients that hold
 * bodies open cannot take the budget every other client needs.
 */
export class ByteBudget {
  private used = 0;
  private readonly bySource = new Map<string, number>();

  constructor(
    readonly limit: number,
    readonly perSourceLimit: number = limit,
  ) {}

  get inUse(): number {
    return this.used;
  }

  /** Whether `bytes` more fit, in all and in the share of `source`; taken when they do. */
  take(bytes: number, source = ''): 'ok' | 'full' | 'share' {
    const mine = this.bySource.get(source) ?? 0;
    if (mine + bytes > this.perSourceLimit) return 'share';
    if (this.used + bytes > this.limit) return 'full';
    this.used += bytes;
    this.bySource.set(source, mine + bytes);
    return 'ok';
  }

  give(bytes: number, source = ''): void {
    this.used = Math.max(0, this.used - bytes);
    const left = (this.bySource.get(source) ?? 0) - bytes;
    if (left > 0) this.bySource.set(source, left);
    else this.bySource.delete(source);
  }
}

export interface BodyLimits {
  /** Largest body, counted as received and again after decompression. */
  maxBodyBytes: number;
  budget: ByteBudget;
  /** Milliseconds the whole body may take to arrive; past it the read fails with 408. */
  timeoutMs: number;
  /** Whose share of the budget the body takes (the client address). */
  source?: string;
  /** Bytes per second the body must keep arriving at, over each `rateWindowMs` (0 = no minimum): else 408. */
  minBytesPerSecond?: number;
  rateWindowMs?: number;
}

/** The ingest.* body options both endpoints (NDJSON ingest, OTLP) take, as their routers name them. */
export interface BodyReadOptions {
  maxBodyBytes: number;
  bodyReadTimeoutMs: number;
  minBodyBytesPerSecond?: number;
  minBodyRateWindowMs?: number;
}

/** The limits a body from `source` is read within, from a router's options and the shared budget. */
export function bodyLimits(o: BodyReadOptions, budget: ByteBudget, source: string): BodyLimits {
  return { maxBodyBytes: o.maxBodyBytes, budget, timeoutMs: o.bodyReadTimeoutMs, source, minBytesPerSecond: o.minBodyBytesPerSecond ?? 0, rateWindowMs: o.minBodyRateWindowMs ?? 5_000 };
}

export type Encoding = 'identity' | 'gzip';

export type BodyResult =
  /** The (decompressed) body; call release() once it has been used, to return its bytes to the budget. */
  | { ok: true; chunks: Buffer[]; bytes: number; release(): void }
  | { ok: false; status: 400 | 413 | 429; error: string }
  /** Too slow: the rest of the body is not waited for; answer, then close the connection. `belowMinRate`: cut by the minimum rate, not the timeout. */
  | { ok: false; status: 408; error: string; belowMinRate?: true }
  /** The client went away before the body was complete: there is nobody to answer. */
  | { ok: false; status: 'aborted'; error: string };

/** `identity` or `gzip` from a Content-Encoding header, or undefined for anything else. */
export function parseContentEncoding(header: string | undefined): Encoding | undefined {
  const value = (header ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  return undefined;
}

export function readBody(req: IncomingMessage, encoding: Encoding, limits: BodyLimits): Promise<BodyResult> {
  const { maxBodyBytes: max, budget, timeoutMs } = limits;
  const source = limits.source ?? '';
  const minRate = limits.minBytesPerSecond ?? 0;
  const rateWindowMs = limits.rateWindowMs ?? 5_000;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    // Refused before reading; node discards the unread body after the response.
    return Promise.resolve(tooLarge(max, 'Content-Length'));
  }

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let held = 0;
    let done = false;
    const gunzip = encoding === 'gzip' ? createGunzip() : undefined;

    const finish = (result: BodyResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(rateCheck);
      req.off('data', onData);
      if (!result.ok) {
        budget.give(held, source);
        chunks.length = 0;
        gunzip?.destroy();
        // Keep reading (and dropping) the rest, so the error response can be sent on this connection; not
        // after a timeout, where the rest may never come (the caller closes the connection instead).
        if (result.status === 408) req.pause();
        else if (!req.readableEnded) req.resume();
      }
      resolve(result);
    };
    const timer = setTimeout(() => {
      finish({ ok: false, status: 408, error: `the body did not arrive within ingest.bodyReadTimeout (${timeoutMs} ms); nothing from it was counted` });
    }, timeoutMs);
    // A body that arrives slower than the minimum over a whole window is cut then, not at the timeout: a
    // client that sends a burst and then a byte a second would otherwise hold its bytes for the whole of it.
    let receivedAtCheck = 0;
    let pausedInWindow = false;
    const rateCheck =
      minRate > 0
        ? setInterval(() => {
            const came = received - receivedAtCheck;
            receivedAtCheck = received;
            // A window in which we paused the body ourselves (gzip back-pressure) says nothing of the client.
            if (pausedInWindow) return void (pausedInWindow = false);
            if (came < (minRate * rateWindowMs) / 1000) {
              finish({
                ok: false,
                status: 408,
                belowMinRate: true,
                error: `the body arrived at ${Math.round((came * 1000) / rateWindowMs)} bytes/s, under ingest.minBodyBytesPerSecond (${minRate}); nothing from it was counted`,
              });
            }
          }, rateWindowMs)
        : undefined;

    const keep = (chunk: Buffer): void => {
      if (done) return;
      if (held + chunk.length > max) return finish(tooLarge(max, gunzip === undefined ? 'body' : 'decompressed body'));
      const taken = budget.take(chunk.length, source);
      if (taken === 'full') {
        return finish({ ok: false, status: 429, error: `the exporter already holds ${budget.limit} bytes of ingest bodies (ingest.maxInFlightBytes); retry later` });
      }
      if (taken === 'share') {
        return finish({
          ok: false,
          status: 429,
          error: `this client address already holds ${budget.perSourceLimit} bytes of ingest bodies (ingest.maxInFlightBytesPerSource); retry later`,
        });
      }
      held += chunk.length;
      chunks.push(chunk);
    };

    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > max) return finish(tooLarge(max, 'body'));
      if (gunzip === undefined) return keep(chunk);
      if (!gunzip.write(chunk)) {
        pausedInWindow = true;
        req.pause();
        gunzip.once('drain', () => {
          if (!done) req.resume();
        });
      }
    };

    const succeed = (): void => {
      let released = false;
      finish({
        ok: true,
        chunks,
        bytes: held,
        release: () => {
          if (released) return;
          released = true;
          budget.give(held, source);
        },
      });
    };

    req.on('data', onData);
    req.once('end', () => {
      if (done) return;
      if (gunzip === undefined) succeed();
      else gunzip.end();
    });
    // `on`, not `once`: a second error event without a listener would be thrown.
    req.on('error', (err) => finish({ ok: false, status: 'aborted', error: err.message }));
    req.once('close', () => {
      if (!req.complete) finish({ ok: false, status: 'aborted', error: 'the client closed the connection before the body was complete' });
    });
    if (gunzip !== undefined) {
      gunzip.on('data', keep);
      gunzip.once('end', succeed);
      gunzip.on('error', (err) => finish({ ok: false, status: 400, error: `body is not valid gzip (Content-Encoding: gzip): ${err.message}` }));
    }
  });
}

function tooLarge(max: number, what: string): BodyResult {
  return { ok: false, status: 413, error: `${what} exceeds ingest.maxBodyBytes (${max} bytes); nothing from it was counted` };
}
