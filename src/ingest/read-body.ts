// Reads a whole ingest body into memory, within limits, before any of it is counted: a body that turns
// out too large, badly compressed, cut off or too slow counts nothing. gzip is decompressed as it arrives,
// and the limit applies to the decompressed size too, so a small gzip bomb gets 413 instead of the heap.
// The time limit is on the whole body, not on silence: a client that trickles a byte a second would
// otherwise hold its share of the in-flight budget for as long as Node lets a request last (5 m).
import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';

/** The body bytes held at once across concurrent requests (decompressed), shared by every request. */
export class ByteBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.used;
  }

  take(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}

export interface BodyLimits {
  /** Largest body, counted as received and again after decompression. */
  maxBodyBytes: number;
  budget: ByteBudget;
  /** Milliseconds the whole body may take to arrive; past it the read fails with 408. */
  timeoutMs: number;
}

export type Encoding = 'identity' | 'gzip';

export type BodyResult =
  /** The (decompressed) body; call release() once it has been used, to return its bytes to the budget. */
  | { ok: true; chunks: Buffer[]; bytes: number; release(): void }
  | { ok: false; status: 400 | 413 | 429; error: string }
  /** Too slow: the rest of the body is not waited for; answer, then close the connection. */
  | { ok: false; status: 408; error: string }
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
      req.off('data', onData);
      if (!result.ok) {
        budget.give(held);
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

    const keep = (chunk: Buffer): void => {
      if (done) return;
      if (held + chunk.length > max) return finish(tooLarge(max, gunzip === undefined ? 'body' : 'decompressed body'));
      if (!budget.take(chunk.length)) {
        return finish({ ok: false, status: 429, error: `the exporter already holds ${budget.limit} bytes of ingest bodies (ingest.maxInFlightBytes); retry later` });
      }
      held += chunk.length;
      chunks.push(chunk);
    };

    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > max) return finish(tooLarge(max, 'body'));
      if (gunzip === undefined) return keep(chunk);
      if (!gunzip.write(chunk)) {
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
          budget.give(held);
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
