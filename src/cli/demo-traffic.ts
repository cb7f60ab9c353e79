// The demo's traffic, in a child process of its own (forked by demo-command.ts): the simulator and the
// load generator that drives it and writes the gateway log. Apart from the exporter's event loop, the
// simulator's sleeps and the load generator's clock are not held up by what the exporter does (start-up,
// scrapes, page polls, garbage collection). What the log records as latency is the time the simulated
// layer decided to take (reportAnswerTime / logReportedAnswerTime), so a busy machine, which makes any
// process answer late, does not move the demo's numbers.
import { rmSync } from 'node:fs';
import { LoadGenerator } from '../loadgen/load-generator.js';
import { startSimulator } from '../simulate/simulator.js';
import type { TrafficMessage, TrafficStart, TrafficReport } from './demo-command.js';

const send = (message: TrafficReport): void => {
  process.send?.(message);
};

/** Errors are passed on at most this often: a dead target would otherwise report every request. */
const ERROR_REPORT_INTERVAL_MS = 5_000;

async function run(start: TrafficStart): Promise<void> {
  // Faults changed here through /admin/faults go to the exporter's page; the ones it sends come back in
  // `applying`, so they are not sent back again.
  let applying = false;
  const simulator = await startSimulator({
    ...(start.simulatorHost === undefined ? {} : { host: start.simulatorHost }),
    ...(start.simulatorPort === undefined ? {} : { port: start.simulatorPort }),
    fastLatency: start.fastLatency,
    draws: 'even',
    reportAnswerTime: true,
    ...(start.seed === undefined ? {} : { seed: start.seed }),
    onFaults: (faults) => {
      if (!applying) send({ type: 'faults', faults });
    },
  });
  let lastError = 0;
  const load = new LoadGenerator({
    target: simulator.url,
    ratePerSecond: start.ratePerSecond,
    logPath: start.logPath,
    mix: start.mix,
    logReportedAnswerTime: true,
    ...(start.seed === undefined ? {} : { seed: start.seed }),
    onError: (err) => {
      if (Date.now() - lastError < ERROR_REPORT_INTERVAL_MS) return;
      lastError = Date.now();
      send({ type: 'error', message: err.message });
    },
  });
  load.start();

  let stopping: Promise<void> | undefined;
  let stopRequested = false;
  const stop = () =>
    (stopping ??= (async () => {
      await load.stop();
      await simulator.close();
      process.disconnect?.();
    })());
  process.on('message', (message: TrafficMessage) => {
    if (message.type === 'faults') {
      applying = true;
      try {
        simulator.faults.set(message.faults);
      } finally {
        applying = false;
      }
    } else if (message.type === 'stop') {
      stopRequested = true;
      void stop();
    }
  });
  // The demo's own process decides when to stop: Ctrl-C reaches the whole process group, and the demo
  // then sends `stop`. A demo that died without saying so (kill -9) is noticed by the channel closing.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => void stop());
  process.on('disconnect', () => {
    void stop().finally(() => {
      // Orphaned (the demo was killed before it could stop us): its scratch log has no one else to remove it.
      if (!stopRequested) rmSync(start.scratchDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
  send({ type: 'ready', simulatorUrl: simulator.url });
}

process.once('message', (message: TrafficMessage) => {
  if (message.type !== 'start') return;
  run(message).catch((err: unknown) => {
    send({ type: 'failed', message: (err as Error).message });
    process.exit(1);
  });
});
