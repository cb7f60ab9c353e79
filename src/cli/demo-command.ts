// `demo` (what `npm start` runs): the simulator, a load generator writing a gateway log from real round
// trips, and the exporter following that log, with no config, so a newcomer sees the four signals live
// in seconds and can inject faults to watch the P0 appear. The simulator and the load generator run in a
// child process (demo-traffic.ts), apart from the exporter's event loop; faults set on the exporter's
// page are mirrored to it, and the ones set on its /admin/faults back to the page.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/schema.js';
import type { Mix } from '../loadgen/mix.js';
import type { Logger } from '../server/logger.js';
import type { WebConfig } from '../server/web-config.js';
import { FaultController, type Faults } from '../simulate/faults.js';
import type { JitterLatency } from '../simulate/profile.js';
import { startServe, type RunningServer } from './serve-command.js';

export interface DemoOptions {
  ratePerSecond: number;
  seed?: number;
  /** --web.config.file: TLS and basic auth for the exporter's endpoints. */
  webConfig?: WebConfig;
  /** --demo.simulator-address: where the simulated endpoint listens (default 127.0.0.1 on a free port). */
  simulatorAddress?: { host?: string | undefined; port: number };
}

/**
 * A healthy mix: one malformed opt-in in 500 requests and one long conversation in 1000, spread evenly
 * (draws: even), so the tiles start green, stay green, and faults stand out.
 */
const DEMO_MIX: Partial<Mix> = { malformedOptIn: 0.002, missingOptIn: 0, longConversation: 0.001, longSystemPrompt: 0, stream: 0, draws: 'even' };
/**
 * The fast layer: 182 ± 3 ms (a normal with σ 1.5 ms, clipped), so its p99 is 185 ms, the baseline: drift
 * 0 %, 9 ms from either edge of the band. The demo logs the layer's own answer time (demo-traffic.ts), so
 * a busy machine's scheduling delays do not move it.
 */
const DEMO_FAST_LATENCY: JitterLatency = { meanMs: 182, jitterMs: 3 };
/** Cold-start round trips (JIT, first connections) are slow and not the layer's: the exporter skips them. */
const WARM_UP_MS = 1_500;
/** How long the traffic process may take to stop before it is killed. */
const STOP_TIMEOUT_MS = 5_000;
const TRAFFIC_MODULE = fileURLToPath(new URL('./demo-traffic.js', import.meta.url));

/** From the demo to its traffic process. */
export type TrafficMessage = ({ type: 'start' } & TrafficStart) | { type: 'faults'; faults: Faults } | { type: 'stop' };

export interface TrafficStart {
  ratePerSecond: number;
  logPath: string;
  /** The folder of the log: removed by the traffic process if the demo dies without stopping it. */
  scratchDir: string;
  fastLatency: JitterLatency;
  mix: Partial<Mix>;
  seed?: number;
  simulatorHost?: string;
  simulatorPort?: number;
}

/** From the traffic process to the demo. */
export type TrafficReport = { type: 'ready'; simulatorUrl: string } | { type: 'faults'; faults: Faults } | { type: 'error'; message: string } | { type: 'failed'; message: string };

/** Forks the traffic process and resolves once its simulator listens. */
function startTraffic(start: TrafficStart, onReport: (r: TrafficReport) => void): Promise<{ child: ChildProcess; simulatorUrl: string }> {
  const child = fork(TRAFFIC_MODULE, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the demo's traffic process exited with ${code} before it was ready`));
    child.once('exit', onExit);
    child.on('message', (r: TrafficReport) => {
      if (r.type === 'ready') {
        child.off('exit', onExit);
        resolve({ child, simulatorUrl: r.simulatorUrl });
      } else if (r.type === 'failed') {
        reject(new Error(`the demo's traffic process failed: ${r.message}`));
      } else {
        onReport(r);
      }
    });
    child.send({ type: 'start', ...start } satisfies TrafficMessage);
  });
}

async function stopTraffic(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.send({ type: 'stop' } satisfies TrafficMessage);
  else child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(killer);
}

export interface RunningDemo {
  server: RunningServer;
  simulatorUrl: string;
  logPath: string;
  stop(): Promise<void>;
}

export async function startDemo(config: Config, opts: DemoOptions, log: Logger): Promise<RunningDemo> {
  const logDir = mkdtempSync(join(tmpdir(), 'zero-plane-demo-'));
  const logPath = join(logDir, 'gateway.log');
  // The page's faults, mirrored to the simulator; `fromTraffic` marks changes that came from it.
  let fromTraffic = false;
  let child: ChildProcess | undefined;
  const faults = new FaultController({}, (f) => {
    if (!fromTraffic && child?.connected) child.send({ type: 'faults', faults: f } satisfies TrafficMessage);
  });
  let traffic: { child: ChildProcess; simulatorUrl: string };
  try {
    traffic = await startTraffic(
      {
        ratePerSecond: opts.ratePerSecond,
        logPath,
        scratchDir: logDir,
        fastLatency: DEMO_FAST_LATENCY,
        mix: DEMO_MIX,
        ...(opts.seed === undefined ? {} : { seed: opts.seed }),
        ...(opts.simulatorAddress === undefined ? {} : { simulatorPort: opts.simulatorAddress.port }),
        ...(opts.simulatorAddress?.host === undefined ? {} : { simulatorHost: opts.simulatorAddress.host }),
      },
      (r) => {
        if (r.type === 'error') log.warn('load generator request failed', { detail: r.message });
        if (r.type === 'faults') {
          fromTraffic = true;
          try {
            faults.set(r.faults);
          } finally {
            fromTraffic = false;
          }
        }
      },
    );
  } catch (err) {
    rmSync(logDir, { recursive: true, force: true });
    throw err;
  }
  child = traffic.child;
  const simulatorUrl = traffic.simulatorUrl;
  let stopping = false;
  child.on('exit', (code, signal) => {
    if (!stopping) log.error('the demo traffic process exited; the log gets no new lines', { code: code ?? undefined, signal: signal ?? undefined });
  });
  let server: RunningServer;
  try {
    await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS));
    server = await startServe({ ...config, sources: { ...config.sources, files: [logPath], startAt: 'end' } }, log, { faults, ...(opts.webConfig === undefined ? {} : { webConfig: opts.webConfig }) });
  } catch (err) {
    stopping = true;
    await stopTraffic(child);
    rmSync(logDir, { recursive: true, force: true });
    throw err;
  }
  // Bound to every interface ("[::]:9185"): a browser on this machine reaches it as localhost.
  const base = server.url.replace(/\/\/(\[::\]|0\.0\.0\.0):/, '//localhost:');
  log.info('demo running', {
    exporter: `${base}/`,
    metrics: `${base}${config.web.telemetryPath}`,
    simulator: `${simulatorUrl}/v1/messages`,
    faults: `${simulatorUrl}/admin/faults`,
    log: logPath,
    trafficPid: child.pid,
  });
  process.stdout.write(
    `zero-plane-exporter demo: open ${base}/ (metrics ${base}${config.web.telemetryPath}); ` +
      `simulated LLM endpoint ${simulatorUrl}/v1/messages, faults ${simulatorUrl}/admin/faults. Ctrl-C stops.\n`,
  );
  const running = child;
  return {
    server,
    simulatorUrl,
    logPath,
    async stop() {
      stopping = true;
      await stopTraffic(running);
      await server.stop();
      // The log was the demo's own scratch file: nothing to keep once it stops.
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}
