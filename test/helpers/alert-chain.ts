// The alerting chain behind a running exporter, live on loopback: a real Alertmanager with the committed
// example routing (only timings and receiver URLs changed; the gate receiver points at the exporter's
// webhook, PagerDuty and Slack at a loopback sink) and a real Prometheus scraping the exporter with the
// generated rules, regenerated with 10 s windows, no `for`, no keep_firing_for and a traffic guard of one
// request (a 10 s window holds far fewer than the default's 200), so a test sees alerts fire and resolve
// in seconds.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../src/config/load.js';
import { renderPack } from '../../src/pack/render-pack.js';
import { loopbackAlertmanager, startSink, type Sink } from './alertmanager-sink.js';
import { requireBinary } from './binaries.js';
import { freePort, startDaemon, startPrometheus, type Daemon } from './processes.js';

const EXAMPLE_AM = fileURLToPath(new URL('../../alerts/alertmanager.example.yml', import.meta.url));

/** The pack with 10 s rate windows, 1 s evaluation, every `for` and keep_firing_for at 0s, a guard of 1. */
export const FAST_PACK_CONFIG =
  'alerts:\n  minRequests: 1\npack:\n  rateWindow: 10s\n  evaluationInterval: 1s\n  keepFiringFor: 0s\n  for: { p0: 0s, driftOutOfBand: 0s, canaryRollback: 0s, hitRateLow: 0s, degraded: 0s, warmupEfficiencyLow: 0s, optInMalformed: 0s, exporterDown: 0s, sourceStalled: 0s, parseErrorsHigh: 0s }\n';

export interface AlertChain {
  promUrl: string;
  /** The PagerDuty and Slack stand-in the pager and chat receivers reach. */
  sink: Sink;
  stop(): Promise<void>;
}

export interface AlertChainOptions {
  /** Working folder (configs, TSDB, Alertmanager storage). */
  dir: string;
  /** http://HOST:PORT of the exporter: scraped, and its webhook is the gate receiver. */
  exporterUrl: string;
  /** The file with the bearer token the exporter's gate requires (gate.bearerTokenFile). */
  gateTokenFile: string;
}

export async function startAlertChain(opts: AlertChainOptions): Promise<AlertChain> {
  const amBin = requireBinary('prometheus-alertmanager');
  const promBin = requireBinary('prometheus');
  const started: { sink?: Sink; alertmanager?: Daemon; prometheus?: Daemon } = {};
  const stop = async () => {
    await Promise.allSettled([started.prometheus?.stop(), started.alertmanager?.stop()]);
    await started.sink?.close();
  };
  try {
    const sink = await startSink();
    started.sink = sink;
    const amConfig = join(opts.dir, 'alertmanager.yml');
    writeFileSync(
      amConfig,
      loopbackAlertmanager(readFileSync(EXAMPLE_AM, 'utf8'), {
        dir: opts.dir,
        sink,
        gateUrl: `${opts.exporterUrl}/api/v1/alerts/webhook`,
        gateTokenFile: opts.gateTokenFile,
        groupWait: '0s',
        groupInterval: '1s',
      }),
    );
    const amPort = await freePort();
    started.alertmanager = await startDaemon(
      amBin,
      [`--config.file=${amConfig}`, `--storage.path=${join(opts.dir, 'am')}`, `--web.listen-address=127.0.0.1:${amPort}`, '--cluster.listen-address='],
      `http://127.0.0.1:${amPort}/-/ready`,
    );

    const prom = await startPrometheus(promBin, {
      dir: opts.dir,
      rules: renderPack(parseConfig(FAST_PACK_CONFIG, 'test-pack.yml')).get('zero-plane.rules.yml') as string,
      scrapeTarget: opts.exporterUrl.replace('http://', ''),
      alertmanager: `127.0.0.1:${amPort}`,
    });
    started.prometheus = prom.daemon;
    return { promUrl: prom.url, sink, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export async function promQuery(url: string, query: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`, { signal: AbortSignal.timeout(2_000) });
  const body = (await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
  return body.data.result;
}
