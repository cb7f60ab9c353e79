// Reading the body of a response the client asked for itself (an ingest answer, a gate answer), never more
// than a cap: an endpoint that streams a big or endless body must cost the caller a few KiB and a bounded
// time, not its memory. The time bound is the request's own abort signal, which also ends the body.

/** An answer the client reads (ingest: a few dozen bytes, the gate: under 100) is never read past this. */
export const ANSWER_LIMIT_BYTES = 64 * 1024;

export class BodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the answer is larger than ${limitBytes} bytes; not read further`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * The body as UTF-8 text, reading at most `limitBytes`: past it the stream is cancelled (the connection
 * is let go) and BodyTooLargeError thrown. A body that stops arriving is ended by the request's signal.
 */
export async function cappedText(res: Response, limitBytes: number): Promise<string> {
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limitBytes) throw new BodyTooLargeError(limitBytes);
      chunks.push(value);
    }
  } catch (err) {
    // Cancelling tells undici to drop the rest instead of buffering it; its own failure changes nothing.
    reader.cancel().catch(() => undefined);
    throw err;
  }
  return Buffer.concat(chunks).toString('utf8');
}
