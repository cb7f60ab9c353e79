// --web.probe-listen-address: /-/healthy and /-/ready answered on a port of their own by a worker thread
// (probe-worker.ts). On the main port a probe waits for the main thread like any request: libuv (Node 20)
// accepts one connection per turn of the event loop, so a probe that connects behind a burst of 200 scrape
// connections waits for 200 turns, each with render and write slices, and for every garbage collection of
// the main heap; on a loaded machine that was seconds (bench/RESULTS.md). A worker has its own event loop
// and heap, so only the kernel's scheduler stands between a probe and its answer. One port cannot have two
// listeners in one process before Node 22.12 (`reusePort`), so the probes get a port of their own.
// The worker answers healthy only while the main thread's heartbeat is recent (probe-answer.ts).
import { Worker } from 'node:worker_threads';
import type { Logger } from './logger.js';
import { HEARTBEAT_BYTES, HEARTBEAT_INTERVAL_MS, heartbeatViews } from './probe-answer.js';
import type { ProbeWorkerData, ProbeWorkerMessage } from './probe-worker.js';

export interface ProbeListenerOptions {
  host: string | undefined;
  port: number;
  /** web.probeStallTimeout: /-/healthy answers 503 once the main thread's heartbeat is older than this. */
  stallTimeoutMs: number;
  /** Whether serve is ready (/-/ready); read on every heartbeat. */
  ready: () => boolean;
  log: Logger;
}

export interface ProbeListener {
  /** HOST:PORT as bound. */
  address: string;
  close(): Promise<void>;
}

/** A worker that ended by itself (it should not) is started again after this long. */
const RESTART_MS = 1_000;

/**
 * The worker's heap: it holds one small server. Bounded, so a bug there cannot take the memory the main
 * thread's renders need (the container's limit is for both).
 */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 };

/** Starts the probe worker and the main thread's heartbeat; resolves once the worker listens. */
export async function startProbeListener(opts: ProbeListenerOptions): Promise<ProbeListener> {
  const memory = new SharedArrayBuffer(HEARTBEAT_BYTES);
  const { beat, ready } = heartbeatViews(memory);
  const tick = () => {
    Atomics.store(beat, 0, process.hrtime.bigint());
    Atomics.store(ready, 0, opts.ready() ? 1 : 0);
  };
  tick();
  // A timer runs only when the event loop turns: a main thread busy in one task, or starved of CPU, stops
  // the beat. unref: the heartbeat alone never keeps serve running.
  const heartbeat = setInterval(tick, HEARTBEAT_INTERVAL_MS);
  heartbeat.unref();

  let closing = false;
  let worker: Worker | undefined;
  /** Resolves when the current worker has ended. */
  let ended: Promise<void> = Promise.resolve();
  let port = opts.port;
  const start = () =>
    new Promise<string>((resolve, reject) => {
      const data: ProbeWorkerData = { memory, host: opts.host, port, stallTimeoutMs: opts.stallTimeoutMs };
      // execArgv []: serve's own --import/--require preloads are not run again in the worker.
      const w = new Worker(new URL('./probe-worker.js', import.meta.url), { workerData: data, execArgv: [], resourceLimits: RESOURCE_LIMITS });
      worker = w;
      ended = new Promise<void>((done) => w.once('exit', () => done()));
      w.on('message', (m: ProbeWorkerMessage) => {
        if (m.kind === 'listening') resolve(m.address);
        else {
          // It cannot listen (the port is taken): it ends, and is started again while serve runs.
          reject(Object.assign(new Error(`--web.probe-listen-address: ${m.message}`), { code: m.code }));
          void w.terminate();
        }
      });
      w.on('error', (err) => {
        opts.log.error('probe listener failed', { error: err.message });
        reject(err);
      });
      w.once('exit', (code) => {
        if (closing) return;
        reject(new Error(`the probe listener's thread exited with ${code} before listening`));
        opts.log.error("the probe listener's thread ended; starting it again", { code, restartMs: RESTART_MS });
        setTimeout(() => void restart(), RESTART_MS).unref();
      });
    });
  const restart = async () => {
    if (closing) return;
    try {
      await start();
    } catch (err) {
      opts.log.error('probe listener could not be started again', { error: (err as Error).message });
    }
  };
  let address: string;
  try {
    address = await start();
  } catch (err) {
    closing = true;
    clearInterval(heartbeat);
    await worker?.terminate();
    throw err;
  }
  // An ephemeral port (":0") is kept if the worker is ever started again.
  port = Number(/:(\d+)$/.exec(address)?.[1] ?? port);
  return {
    address,
    async close() {
      closing = true;
      clearInterval(heartbeat);
      const w = worker;
      // Posted to a worker that has ended already, the message is dropped and `ended` has resolved.
      w?.postMessage('close');
      // A worker that does not end by itself within a second is stopped.
      const timer = setTimeout(() => void w?.terminate(), 1_000);
      await ended;
      clearTimeout(timer);
    },
  };
}
