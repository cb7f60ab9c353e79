// The client's body observer (dist/client/response-observer.js) against reading the same Response bare:
// an SSE stream of Anthropic's events and a JSON message, in memory (no network, so the figure is the
// observer's own cost), alternating rounds. Prints per-response time both ways and the ratio.
// Usage: npm run build && node bench/client-observer.mjs [--rounds 5] [--responses 2000] [--deltas 200]
import { parseArgs } from 'node:util';
import { observeResponse } from '../dist/client/response-observer.js';
import { sseText, streamEvents } from '../dist/simulate/stream-response.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, responses: { type: 'string', default: '2000' }, deltas: { type: 'string', default: '200' } } });
const rounds = Number(values.rounds);
const responses = Number(values.responses);
const deltas = Number(values.deltas);

const text = 'word '.repeat(deltas * 4);
const message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4',
  content: [{ type: 'text', text }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 1200, output_tokens: deltas * 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 800 },
};
const sseBytes = new TextEncoder().encode(streamEvents(message, deltas).map(sseText).join(''));
const jsonBytes = new TextEncoder().encode(JSON.stringify(message));

/** The body in network-sized chunks (16 KiB, as undici hands them on). */
function chunks(bytes) {
  const out = [];
  for (let at = 0; at < bytes.length; at += 16384) out.push(bytes.subarray(at, at + 16384));
  return out;
}
const bodies = { sse: { parts: chunks(sseBytes), type: 'text/event-stream' }, json: { parts: chunks(jsonBytes), type: 'application/json' } };

function fresh({ parts, type }) {
  let i = 0;
  const body = new ReadableStream(
    {
      pull(c) {
        if (i < parts.length) c.enqueue(parts[i++]);
        else c.close();
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { headers: { 'content-type': type } });
}

async function run(kind, observed) {
  const t0 = performance.now();
  for (let i = 0; i < responses; i++) {
    let r = fresh(bodies[kind]);
    if (observed) r = observeResponse(r, { startedAt: t0, maxJsonBytes: 1024 * 1024, done: () => {} }).response;
    await r.arrayBuffer();
  }
  return ((performance.now() - t0) * 1000) / responses; // µs per response
}

const results = { sse: { bare: [], observed: [] }, json: { bare: [], observed: [] } };
for (const kind of ['sse', 'json']) {
  await run(kind, false);
  await run(kind, true); // warm-up
  for (let r = 0; r < rounds; r++) {
    results[kind].bare.push(await run(kind, false));
    results[kind].observed.push(await run(kind, true));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const kind of ['sse', 'json']) {
  const bare = median(results[kind].bare);
  const observed = median(results[kind].observed);
  const bytes = kind === 'sse' ? sseBytes.length : jsonBytes.length;
  console.log(
    `${kind}: ${bytes} bytes/response; bare ${bare.toFixed(1)} µs, observed ${observed.toFixed(1)} µs per response (median of ${rounds}); +${(observed - bare).toFixed(1)} µs, ratio ${(observed / bare).toFixed(2)}`,
  );
}
