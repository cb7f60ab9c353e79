// The in-process destination reads the client's own lines, whose format is known: every call is counted at
// once, whether or not its response carried a Zero-Plane header (no format detection, no hold while the
// first lines are looked at).
import { describe, expect, it } from 'vitest';
import { instrumentFetch, metricsText } from '../../../src/client/index.js';

const body = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } });

/** A fetch answering like an API with no Zero-Plane layer in front: no Zero-Plane response header at all. */
const plainFetch = async (): Promise<Response> => new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
const zeroPlaneFetch = async (): Promise<Response> => new Response(body, { status: 200, headers: { 'content-type': 'application/json', 'x-anthropic-layer-id': 'zero-plane-v1' } });

async function calls(f: typeof fetch, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await f('http://api.invalid/v1/messages', { method: 'POST', body: JSON.stringify({ model: 'claude-x', max_tokens: 1, messages: [] }) });
    await res.text();
  }
}

function requestsTotal(text: string): number {
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith('zero_plane_requests_total{')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

describe('instrumentFetch, in-process', () => {
  it('counts every call at once when the responses carry no Zero-Plane header', async () => {
    const f = instrumentFetch(plainFetch, { warn: () => undefined });
    await calls(f, 3);
    expect(requestsTotal(metricsText([f]))).toBe(3);
    expect(f.signals()?.window.requests).toBe(3);
    await f.close();
  });

  it('counts calls with and without Zero-Plane headers alike, in any order, hits by their header', async () => {
    let n = 0;
    const mixed = (): Promise<Response> => (n++ % 2 === 0 ? plainFetch() : zeroPlaneFetch());
    const f = instrumentFetch(mixed, { warn: () => undefined });
    await calls(f, 3);
    expect(requestsTotal(metricsText([f]))).toBe(3);
    expect(f.signals()?.window).toMatchObject({ requests: 3, hits: 1 });
    await f.close();
  });

  it('reads its own lines with the default preset whatever the config says about gateway logs', async () => {
    const f = instrumentFetch(plainFetch, { warn: () => undefined, config: { input: { preset: 'envoy-json', envelope: 'cri' } } });
    await calls(f, 2);
    expect(requestsTotal(metricsText([f]))).toBe(2);
    await f.close();
  });
});
