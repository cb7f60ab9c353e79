// What the probe listener (probe-listener.ts) answers, from what the main thread last wrote into the memory
// it shares with the probe worker: when its event loop last turned (a heartbeat) and whether serve is ready.
// A probe answered by a thread of its own must still say the truth about serve: a main thread that has not
// turned for web.probeStallTimeout cannot answer a scrape, so /-/healthy says so (503) and the kubelet's
// liveness probe fails, as it would have by timing out on the main port, but in time and with the reason.

/** How often the main thread writes its heartbeat (a timer: it runs only when the event loop turns). */
export const HEARTBEAT_INTERVAL_MS = 100;

/**
 * The shared memory's layout: the heartbeat, process.hrtime.bigint() of the last beat (CLOCK_MONOTONIC, one
 * clock for every thread of the process, never stepped by NTP), then 1 when serve is ready, else 0.
 */
export const HEARTBEAT_BYTES = 16;
export function heartbeatViews(memory: SharedArrayBuffer): { beat: BigInt64Array; ready: Int32Array } {
  return { beat: new BigInt64Array(memory, 0, 1), ready: new Int32Array(memory, 8, 1) };
}

export interface ProbeState {
  /** Milliseconds since the main thread's last heartbeat. */
  sinceBeatMs: number;
  ready: boolean;
}

export interface ProbeAnswer {
  status: 200 | 404 | 503;
  body: string;
}

export const PROBE_LISTENER_PATHS: readonly string[] = ['/-/healthy', '/-/ready'];

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The answer to a request for `url` on the probe listener, given the main thread's state. */
export function probeAnswer(url: string, state: ProbeState, stallTimeoutMs: number): ProbeAnswer {
  const path = url.split('?', 1)[0];
  const stalled = state.sinceBeatMs > stallTimeoutMs;
  const stall = `its main event loop has not run for ${seconds(state.sinceBeatMs)} (web.probeStallTimeout ${seconds(stallTimeoutMs)})`;
  if (path === '/-/healthy') {
    return stalled ? { status: 503, body: `zero-plane-exporter is not healthy: ${stall}.\n` } : { status: 200, body: 'zero-plane-exporter is Healthy.\n' };
  }
  if (path === '/-/ready') {
    if (stalled) return { status: 503, body: `zero-plane-exporter is not ready: ${stall}.\n` };
    return state.ready ? { status: 200, body: 'zero-plane-exporter is Ready.\n' } : { status: 503, body: 'zero-plane-exporter is not ready.\n' };
  }
  return { status: 404, body: `Not found: the probe listener answers only ${PROBE_LISTENER_PATHS.join(' and ')}.\n` };
}
