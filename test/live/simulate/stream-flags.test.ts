// `simulate --simulate.stream --simulate.first-event-delay-ms=N` as a user runs it: a stream call without
// the opt-in is answered with server-sent events whose first event comes at least N ms after the headers,
// an opted-in one gets the 400, and a bad delay is bad usage.
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runCli, waitFor } from '../../helpers/cli-process.js';
import { freePort } from '../../helpers/processes.js';

const children: ReturnType<typeof spawn>[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

const body = JSON.stringify({ model: 'claude-sonnet', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'hi' }] });

describe('simulate stream flags', () => {
  it('streams from the standard layer with the first event the set delay after the headers', async () => {
    const port = await freePort();
    const sim = spawn(process.execPath, [BIN, 'simulate', `--simulate.listen-address=127.0.0.1:${port}`, '--simulate.stream', '--simulate.first-event-delay-ms=150']);
    children.push(sim);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        try {
          return (await fetch(`${url}/-/healthy`)).ok ? true : undefined;
        } catch {
          return undefined;
        }
      },
      10_000,
      'the simulator',
    );

    const sentAt = performance.now();
    const r = await fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    // The events leave 150 ms after the headers, which leave after the request arrived: never sooner
    // than that after it was sent (the headers' own arrival is another process's clock: not compared).
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(150);
    let text = new TextDecoder().decode(first.value);
    for (let c = await reader.read(); !c.done; c = await reader.read()) text += new TextDecoder().decode(c.value);
    expect(text.match(/^event: (\w+)$/gm)?.map((l) => l.slice(7))).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);

    const refused = await fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-anthropic-experimental': 'zero-plane-2024' }, body });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/Zero-Plane layer does not stream/);

    sim.kill('SIGTERM');
    expect(await new Promise((resolve) => sim.once('exit', resolve))).toBe(0);
  });

  it('a bad delay exits 2', () => {
    expect(runCli(['simulate', '--simulate.stream', '--simulate.first-event-delay-ms=-5']).code).toBe(2);
  });
});
