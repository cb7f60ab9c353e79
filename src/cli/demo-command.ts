// `demo` (what `npm start` runs): the simulator, a load generator writing a gateway log from real round
// trips, and the exporter following that log, in one process with no config, so a newcomer sees the
// four signals live in seconds and can inject faults to watch the P0 appear.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { LoadGenerator } from '../loadgen/load-generator.js';
import type { Logger } from '../server/logger.js';
import type { WebConfig } from '../server/web-config.js';
import { startSimulator } from '../simulate/simulator.js';
import { startServe, type RunningServer } from './serve-command.js';

export interface DemoOptions {
  ratePerSecond: number;
  seed?: number;
  /** --web.config.file: TLS and basic auth for the exporter's endpoints. */
  webConfig?: WebConfig;
}

/** A healthy mix: rare malformed opt-ins and long contexts, so the tiles start green and faults stand out. */
const DEMO_MIX = { malformedOptIn: 0.002, missingOptIn: 0, longConversation: 0.001, longSystemPrompt: 0, stream: 0 };
/** p99 ≈ 180 ms plus a few ms of local round trip. */
const DEMO_FAST_LATENCY = { meanMs: 176, jitterMs: 4 };
/** Cold-start round trips (JIT, first connections) are slow and not the layer's: the exporter skips them. */
const WARM_UP_MS = 1_500;
/** Connection errors are logged at most this often: a dead target would otherwise log every request. */
const ERROR_LOG_INTERVAL_MS = 5_000;

export interface RunningDemo {
  server: RunningServer;
  simulatorUrl: string;
  logPath: string;
  stop(): Promise<void>;
}

export async function startDemo(config: Config, opts: DemoOptions, log: Logger): Promise<RunningDemo> {
  // The fast layer sits inside the default band (175.75–194.25 ms) with room for the round trip's own
  // overhead, so "healthy" is the start and +15 % drift clearly crosses the ceiling.
  const simulator = await startSimulator({ fastLatency: DEMO_FAST_LATENCY, ...(opts.seed === undefined ? {} : { seed: opts.seed }) });
  const logDir = mkdtempSync(join(tmpdir(), 'zero-plane-demo-'));
  const logPath = join(logDir, 'gateway.log');
  let lastErrorLog = 0;
  const load = new LoadGenerator({
    target: simulator.url,
    ratePerSecond: opts.ratePerSecond,
    logPath,
    mix: DEMO_MIX,
    ...(opts.seed === undefined ? {} : { seed: opts.seed }),
    onError: (err) => {
      if (Date.now() - lastErrorLog < ERROR_LOG_INTERVAL_MS) return;
      lastErrorLog = Date.now();
      log.warn('load generator request failed', { detail: err.message });
    },
  });
  load.start();
  await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS));
  const server = await startServe(
    { ...config, sources: { ...config.sources, files: [logPath], startAt: 'end' } },
    log,
    { faults: simulator.faults, ...(opts.webConfig === undefined ? {} : { webConfig: opts.webConfig }) },
  );
  // Bound to every interface ("[::]:9185"): a browser on this machine reaches it as localhost.
  const base = server.url.replace(/\/\/(\[::\]|0\.0\.0\.0):/, '//localhost:');
  log.info('demo running', {
    exporter: `${base}/`,
    metrics: `${base}${config.web.telemetryPath}`,
    simulator: `${simulator.url}/v1/messages`,
    faults: `${simulator.url}/admin/faults`,
    log: logPath,
  });
  process.stdout.write(
    `zero-plane-exporter demo: open ${base}/ (metrics ${base}${config.web.telemetryPath}); ` +
      `simulated LLM endpoint ${simulator.url}/v1/messages, faults ${simulator.url}/admin/faults. Ctrl-C stops.\n`,
  );
  return {
    server,
    simulatorUrl: simulator.url,
    logPath,
    async stop() {
      await load.stop();
      await server.stop();
      await simulator.close();
      // The log was the demo's own scratch file: nothing to keep once it stops.
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}
