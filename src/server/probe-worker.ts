// The probe listener's thread (started by probe-listener.ts): a plain HTTP server on a port of its own, with
// an event loop and a heap of its own, so a probe is accepted and answered while the main thread is busy
// with a scrape flood's accepts, renders, body writes or garbage collection. It answers /-/healthy and
// /-/ready only (probe-answer.ts), from the heartbeat and readiness the main thread writes into shared memory.
// node:http only, no express: the worker's heap stays a few MiB.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { heartbeatViews, probeAnswer } from './probe-answer.js';

/** What the main thread passes (ProbeListener). */
export interface ProbeWorkerData {
  memory: SharedArrayBuffer;
  host: string | undefined;
  port: number;
  stallTimeoutMs: number;
}

/** What the worker tells the main thread: where it listens, or why it cannot. */
export type ProbeWorkerMessage = { kind: 'listening'; address: string } | { kind: 'error'; code: string | undefined; message: string };

/** Connections the probe port holds at once: it has no auth, and a flood aimed at it stays bounded. */
const MAX_CONNECTIONS = 64;

const data = workerData as ProbeWorkerData;
const { beat, ready } = heartbeatViews(data.memory);
const port = parentPort;

const server = createServer({ requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 5_000 }, (req, res) => {
  const sinceBeatMs = Number(process.hrtime.bigint() - Atomics.load(beat, 0)) / 1e6;
  const answer = probeAnswer(req.url ?? '/', { sinceBeatMs, ready: Atomics.load(ready, 0) === 1 }, data.stallTimeoutMs);
  const body = Buffer.from(answer.body);
  res.writeHead(answer.status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length), 'Cache-Control': 'no-store' });
  res.end(body);
});
server.maxConnections = MAX_CONNECTIONS;
server.on('clientError', (_err, socket) => socket.destroy());
server.once('error', (err: NodeJS.ErrnoException) => {
  port?.postMessage({ kind: 'error', code: err.code, message: err.message } satisfies ProbeWorkerMessage);
});
const bound = () => {
  const a = server.address() as AddressInfo;
  const address = a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  port?.postMessage({ kind: 'listening', address } satisfies ProbeWorkerMessage);
};
// No host: every interface, as the main listener.
if (data.host === undefined) server.listen(data.port, bound);
else server.listen(data.port, data.host, bound);
// The main thread closes the listener by a message (then the loop empties and the thread ends).
port?.on('message', (m: unknown) => {
  if (m === 'close') {
    server.close();
    server.closeAllConnections();
    port.close();
  }
});
