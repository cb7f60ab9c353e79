// Issue 24, "slow-drip ingest": clients that send a burst, then a byte now and then, and reconnect when
// cut off still held ingest.maxInFlightBytes: ordinary bodies got 429 37 times of 37 over 75 s. The drip
// again on loopback from 50 addresses (127.0.0.10 to .59, 127.0.0.0/8 is all local), each burst bigger
// than its part of the budget so that together they fill it, against serve with a 1 s rate window: each
// drip is cut (408) once a window passes under ingest.minBodyBytesPerSecond, its address then gets 429
// without holding a byte (ingest.slowSourceCooldown), and an ordinary client is accepted from then on,
// every time, with exactly its lines counted.
import { request, type ClientRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startServe, type RunningServer } from '../../../src/cli/serve-command.js';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/server/logger.js';
import { sample } from '../../helpers/cli-process.js';

const LINE = JSON.stringify({ latency_ms: 183, status: 200, model: 'claude-sonnet', route: '/v1/messages', response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } });
const lines = (n: number) => `${LINE}\n`.repeat(n);
const KIB = 1024;

const running: RunningServer[] = [];
const open = new Set<ClientRequest>();
let stopDrip = false;
afterEach(async () => {
  stopDrip = true;
  for (const req of open) req.destroy();
  open.clear();
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

/** One dripping client from `address`, reconnecting whenever it is answered or cut, until stopDrip; resolves with its statuses. */
async function drip(port: number, address: string): Promise<number[]> {
  const statuses: number[] = [];
  while (!stopDrip) {
    statuses.push(
      await new Promise<number>((resolve) => {
        const req = request({
          host: '127.0.0.1',
          port,
          path: '/api/v1/ingest',
          method: 'POST',
          localAddress: address,
          headers: { 'content-type': 'application/x-ndjson', 'content-length': String(256 * KIB) },
        });
        open.add(req);
        let timer: NodeJS.Timeout | undefined;
        const done = (status: number) => {
          clearInterval(timer);
          open.delete(req);
          req.destroy();
          resolve(status);
        };
        req.on('response', (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        });
        req.on('error', () => done(0));
        // A 120 KiB burst, then a byte every 200 ms.
        req.write(' '.repeat(120 * KIB));
        timer = setInterval(() => req.write(' '), 200);
      }),
    );
    if (statuses.at(-1) === 429) await new Promise((r) => setTimeout(r, 200));
  }
  return statuses;
}

describe('slow-drip ingest from 50 reconnecting addresses', () => {
  it('cuts each drip under the minimum rate, keeps its address out, and accepts an ordinary client every time from then on', { timeout: 60_000 }, async () => {
    const config = configSchema.parse({
      web: { listenAddress: '127.0.0.1:0' },
      ingest: {
        enabled: true,
        maxBodyBytes: 256 * KIB,
        // 50 bursts of 120 KiB (6 MiB) do not fit in 4 MiB: without the rate minimum the drips hold all of it for bodyReadTimeout, and reconnect.
        maxInFlightBytes: 4096 * KIB,
        bodyReadTimeout: '30s',
        minBodyBytesPerSecond: 16 * KIB,
        minBodyRateWindow: '1s',
        slowSourceCooldown: '30s',
      },
    });
    const server = await startServe(
      config,
      createLogger('error', () => undefined),
    );
    running.push(server);
    const port = Number(new URL(server.url).port);
    stopDrip = false;
    const drips = Array.from({ length: 50 }, (_, i) => drip(port, `127.0.0.${10 + i}`));

    // The ordinary client: 100 lines every 250 ms for 10 s, from its own address.
    const body = lines(100);
    const ordinary: { at: number; status: number }[] = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 10_000) {
      const res = await fetch(`${server.url}/api/v1/ingest`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body, signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      ordinary.push({ at: Date.now() - t0, status: res.status });
      await new Promise((r) => setTimeout(r, 250));
    }
    stopDrip = true;
    for (const req of open) req.destroy();
    const dripStatuses = (await Promise.all(drips)).flat();

    // Every drip was cut (408) or kept out (429); none was ever accepted.
    expect(dripStatuses).not.toContain(200);
    expect(dripStatuses.filter((s) => s === 408).length).toBeGreaterThanOrEqual(50);
    // From 4 s on (a 1 s window to cut the drips, with room for a loaded machine), every ordinary body is
    // accepted: before the fix all of them got 429 (the drips reconnect and hold the budget).
    const late = ordinary.filter((o) => o.at >= 4_000);
    expect(late.length).toBeGreaterThanOrEqual(5);
    expect(
      late.map((o) => o.status),
      JSON.stringify(ordinary),
    ).toEqual(late.map(() => 200));
    // Exactly the ordinary client's lines were counted.
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(sample(text, 'zero_plane_exporter_lines_total{source="http"}')).toBe(100 * ordinary.filter((o) => o.status === 200).length);
  });
});
