// The body observer on real WHATWG Responses: SSE split at every byte boundary (LF and CRLF) gives the same
// facts, a long text line is skipped without being held, a JSON body past the cap is read from its ends,
// nothing is read before the caller asks, and the caller's bytes are the body's bytes.
import { describe, expect, it } from 'vitest';
import { observeResponse, type BodyFacts } from '../../../src/client/response-observer.js';
import { streamEvents, sseText } from '../../../src/simulate/stream-response.js';
import type { AnthropicMessage } from '../../../src/simulate/protocol.js';

const message: AnthropicMessage = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-served-1',
  content: [{ type: 'text', text: 'Hello there, this is a reply.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 11, output_tokens: 7, cache_creation_input_tokens: 3, cache_read_input_tokens: 5 },
};
const sse = streamEvents(message, 4).map(sseText).join('');

/** A Response whose body yields `chunks`, counting how many the source was asked for. */
function response(chunks: Uint8Array[], contentType: string): { res: Response; pulls: () => number } {
  let i = 0;
  let pulls = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        pulls++;
        if (i < chunks.length) c.enqueue(chunks[i++] as Uint8Array);
        else c.close();
      },
    },
    { highWaterMark: 0 },
  );
  return { res: new Response(body, { headers: { 'content-type': contentType } }), pulls: () => pulls };
}

async function observe(chunks: Uint8Array[], contentType: string, maxJsonBytes = 1024 * 1024): Promise<{ facts: BodyFacts | undefined; bytes: Uint8Array }> {
  let facts: BodyFacts | undefined;
  const { res } = response(chunks, contentType);
  const out = observeResponse(res, { startedAt: performance.now(), maxJsonBytes, done: (f) => (facts = f) }).response;
  const bytes = new Uint8Array(await out.arrayBuffer());
  return { facts, bytes };
}

const expected = { input: 11, output: 7, cacheCreation: 3, cacheRead: 5 };

describe('observeResponse', () => {
  it('reads an SSE stream the same at every split point, LF or CRLF, and passes its bytes unchanged', async () => {
    for (const text of [sse, sse.replaceAll('\n', '\r\n')]) {
      const all = new TextEncoder().encode(text);
      for (let cut = 0; cut <= all.length; cut += 7) {
        const { facts, bytes } = await observe([all.slice(0, cut), all.slice(cut)], 'text/event-stream');
        expect(Buffer.from(bytes).equals(Buffer.from(all))).toBe(true);
        expect(facts).toMatchObject({ stream: true, end: 'end', responseModel: 'claude-served-1', tokens: expected });
        expect(facts?.firstEventMs).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('has no first event before the first content_block_delta', async () => {
    const events = sse.split('\n\n');
    const upToPing = `${events.slice(0, 3).join('\n\n')}\n\n`;
    const { facts } = await observe([new TextEncoder().encode(upToPing)], 'text/event-stream');
    expect(facts?.firstEventMs).toBeUndefined();
    // A stream cut before its message_delta has message_start's usage: output_tokens 1, as the API starts it.
    expect(facts?.tokens).toEqual({ ...expected, output: 1 });
  });

  it('skips a text line longer than its line cap without keeping it, and still reads the usage after it', async () => {
    const long = 'x'.repeat(300_000);
    const events = streamEvents({ ...message, content: [{ type: 'text', text: long }] }, 1)
      .map(sseText)
      .join('');
    const all = new TextEncoder().encode(events);
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < all.length; at += 16_384) chunks.push(all.slice(at, at + 16_384));
    const { facts, bytes } = await observe(chunks, 'text/event-stream');
    expect(bytes.length).toBe(all.length);
    expect(facts).toMatchObject({ responseModel: 'claude-served-1', tokens: expected });
    expect(facts?.firstEventMs).toBeDefined();
  });

  it('reads a JSON body whole under the cap, and model and usage from its ends over it', async () => {
    const small = new TextEncoder().encode(JSON.stringify(message));
    expect((await observe([small], 'application/json')).facts).toMatchObject({ stream: false, responseModel: 'claude-served-1', tokens: expected });
    const big = new TextEncoder().encode(JSON.stringify({ ...message, content: [{ type: 'text', text: 'y'.repeat(200_000) }] }));
    const chunks = [big.slice(0, 1000), big.slice(1000, 150_000), big.slice(150_000)];
    const { facts, bytes } = await observe(chunks, 'application/json', 10_000);
    expect(bytes.length).toBe(big.length);
    expect(facts).toMatchObject({ responseModel: 'claude-served-1', tokens: expected });
  });

  it('reads an error body’s type', async () => {
    const body = new TextEncoder().encode(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }));
    expect((await observe([body], 'application/json')).facts).toMatchObject({ errorType: 'overloaded_error', errorMessage: 'busy', tokens: undefined });
  });

  it('reads nothing before the caller asks, and reports a cancel', async () => {
    const all = new TextEncoder().encode(sse);
    const { res, pulls } = response([all.slice(0, 50), all.slice(50)], 'text/event-stream');
    let facts: BodyFacts | undefined;
    const out = observeResponse(res, { startedAt: performance.now(), maxJsonBytes: 1024, done: (f) => (facts = f) }).response;
    await new Promise((r) => setTimeout(r, 20));
    expect(pulls()).toBe(0);
    const reader = (out.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.value?.length).toBe(50);
    expect(pulls()).toBe(1);
    await reader.cancel();
    expect(facts?.end).toBe('cancel');
  });
});
