// --web.probe-listen-address: /-/healthy and /-/ready answered by a worker thread on a port of their own
// (src/server/probe-listener.ts), honest about the main thread: when its event loop stops turning, the
// worker says so within web.probeStallTimeout, and says healthy again once it turns. The main loop is wedged
// by a busy-wait preloaded into serve (`node --import`, a test fixture written here: no seam in serve itself)
// that runs when serve gets SIGUSR2.
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe, waitFor, type Launch, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-probe-listener-');
/** How long the main loop is held busy: far past the stall timeout, so the worker must answer 503 within it. */
const STALL_MS = 12_000;
// 2 s, not the 1 s minimum: an idle serve on a loaded machine must never look stalled before the signal.
const STALL_TIMEOUT_MS = 2_000;
const stallOnSignal = join(dir, 'stall-on-sigusr2.mjs');
writeFileSync(stallOnSignal, `process.on('SIGUSR2', () => { const end = Date.now() + ${STALL_MS}; while (Date.now() < end); });\n`);
const withStall: Launch = (argv) => [argv[0] as string, ['--import', pathToFileURL(stallOnSignal).href, ...argv.slice(1)]];
const config = join(dir, 'zp.yml');
// The key, not the flag (the flood and sidecar tests pass --web.probe-listen-address).
writeFileSync(config, `web:\n  probeListenAddress: "127.0.0.1:0"\n  probeStallTimeout: ${STALL_TIMEOUT_MS / 1000}s\n`);

/** One GET over a fresh connection: its status and body, or the error's code. */
function get(port: number, path: string): Promise<{ status: number | string; body: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? 'error', body: '' }));
    req.end();
  });
}

function probePortOf(serve: ServeProcess): number {
  const serving = serve.logs.find((l) => l.msg === 'serving') as { probeAddress?: string };
  return Number(/:(\d+)$/.exec(serving.probeAddress ?? '')?.[1]);
}

describe('the probe listener', () => {
  let serve: ServeProcess;
  let probePort: number;
  beforeAll(async () => {
    serve = await startServe([`--config.file=${config}`], 60_000, withStall);
    probePort = probePortOf(serve);
  }, 70_000);
  afterAll(async () => {
    expect(await serve.stop()).toBe(0);
  });

  it('answers /-/healthy and /-/ready, and 404 for anything else (no metrics there)', async () => {
    expect(probePort).toBeGreaterThan(0);
    expect(await get(probePort, '/-/healthy')).toEqual({ status: 200, body: 'zero-plane-exporter is Healthy.\n' });
    expect(await waitFor(async () => ((await get(probePort, '/-/ready')).status === 200 ? true : undefined), 30_000, '/-/ready')).toBe(true);
    const other = await get(probePort, '/metrics');
    expect(other.status).toBe(404);
    expect(other.body).not.toContain('zero_plane');
  }, 60_000);

  it('a wedged main event loop: /-/healthy and /-/ready answer 503 with the reason within the stall timeout, and 200 once it turns again', async () => {
    // An idle loop keeps it healthy: 200 throughout more than the stall timeout.
    const idleUntil = performance.now() + STALL_TIMEOUT_MS * 1.5;
    while (performance.now() < idleUntil) {
      expect((await get(probePort, '/-/healthy')).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const mainPort = Number(new URL(serve.url).port);
    const t0 = performance.now();
    serve.child.kill('SIGUSR2');
    let unhealthy: { status: number | string; body: string } | undefined;
    let seenAfterMs = 0;
    // Polled every 20 ms from this process (not wedged): the first 503.
    while (performance.now() - t0 < STALL_MS) {
      const r = await get(probePort, '/-/healthy');
      if (r.status === 503) {
        unhealthy = r;
        seenAfterMs = performance.now() - t0;
        break;
      }
      expect(r.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    console.log(`probe listener: 503 seen ${Math.round(seenAfterMs)} ms after the stall began (stall timeout ${STALL_TIMEOUT_MS} ms)`);
    expect(unhealthy?.body).toMatch(/^zero-plane-exporter is not healthy: its main event loop has not run for \d+\.\d s \(web\.probeStallTimeout 2\.0 s\)\.\n$/);
    // Not long before the timeout (the last beat is 100 ms older than the stall, more if the loaded machine
    // left serve's loop waiting for a CPU just then), and within it plus a margin for a loaded machine: the
    // signal reaching serve's loop, and this process's own polling. The stall lasts 12 s, so a worker that
    // never noticed would fail here.
    expect(seenAfterMs).toBeGreaterThanOrEqual(STALL_TIMEOUT_MS / 2);
    expect(seenAfterMs).toBeLessThan(STALL_TIMEOUT_MS + 4_000);
    const notReady = await get(probePort, '/-/ready');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatch(/^zero-plane-exporter is not ready: its main event loop has not run for/);
    // The main port answers nothing while its loop is wedged: what the kubelet would have timed out on.
    const mainAnswer = get(mainPort, '/-/healthy');
    await waitFor(async () => ((await get(probePort, '/-/healthy')).status === 200 ? true : undefined), STALL_MS + 30_000, 'healthy again after the stall');
    expect(performance.now() - t0).toBeGreaterThan(STALL_MS - 500);
    expect((await mainAnswer).status).toBe(200);
    expect((await get(probePort, '/-/ready')).status).toBe(200);
  }, 90_000);
});

describe('a probe listen address already taken', () => {
  let taken: Server;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  });

  it('stops the start: exit 1, saying which flag and why', () => {
    const port = (taken.address() as { port: number }).port;
    const r = runCli(['serve', '--web.listen-address=127.0.0.1:0', `--web.probe-listen-address=127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--web\.probe-listen-address: listen EADDRINUSE/);
  });

  it('a malformed address is a usage error (exit 2)', () => {
    const r = runCli(['serve', '--web.listen-address=127.0.0.1:0', '--web.probe-listen-address=9186']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--web\.probe-listen-address: "9186" is not HOST:PORT or :PORT/);
  });
});
