// The answers the client reads itself (ingest, gate) are read up to a cap: an endless body costs a
// bounded read and is cancelled, not buffered.
import { describe, expect, it } from 'vitest';
import { BodyTooLargeError, cappedText } from '../../../src/client/capped-body.js';

/** A body that never ends, counting what was pulled from it and whether it was cancelled. */
function endless(chunkBytes: number) {
  const seen = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      seen.pulled += chunkBytes;
      c.enqueue(new Uint8Array(chunkBytes).fill(0x61));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { response: new Response(body), seen };
}

describe('cappedText', () => {
  it('reads a body within the cap whole', async () => {
    expect(await cappedText(new Response('{"accepted":3}'), 64)).toBe('{"accepted":3}');
    expect(await cappedText(new Response(null), 64)).toBe('');
  });

  it('stops an endless body just past the cap, cancels it, and says so', async () => {
    const { response, seen } = endless(4096);
    await expect(cappedText(response, 64 * 1024)).rejects.toBeInstanceOf(BodyTooLargeError);
    // Read up to the chunk that crossed the cap (plus what the stream queued ahead), then let go.
    expect(seen.pulled).toBeLessThanOrEqual(64 * 1024 + 3 * 4096);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.cancelled).toBe(true);
  });
});
