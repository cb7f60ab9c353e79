// The alerting chain behind a running exporter, live on loopback: a real Alertmanager with the committed
// example routing (only timings and receiver URLs changed; the gate receiver points at the exporter's
// webhook, the others at a sink) and a real Prometheus scraping the exporter with the generated rules,
// regenerated with 10 s windows and no `for`, so a test sees alerts fire and resolve in seconds.
import { createServer, type Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { renderPack } from '../../src/pack/write-pack.js';
import { requireBinary } from './binaries.js';
import { freePort, startDaemon, startPrometheus, type Daemon } from './processes.js';

const EXAMPLE_AM = fileURLToPath(new URL('../../alerts/alertmanager.example.yml', import.meta.url));

/** The pack with 10 s rate windows, 1 s evaluation and every `for` at 0s. */
export const FAST_PACK_CONFIG =
  'pack:\n  rateWindow: 10s\n  evaluationInterval: 1s\n  for: { p0: 0s, driftOutOfBand: 0s, canaryRollback: 0s, hitRateLow: 0s, degraded: 0s, warmupEfficiencyLow: 0s, optInMalformed: 0s, exporterDown: 0s, sourceStalled: 0s, parseErrorsHigh: 0s }\n';

export interface Notification {
  status: string;
  alerts: { labels: Record<string, string> }[];
}

export interface AlertChain {
  promUrl: string;
  /** What the pager receiver got. */
  pagerNotifications: Notification[];
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
  const pagerNotifications: Notification[] = [];
  const started: { sink?: Server; alertmanager?: Daemon; prometheus?: Daemon } = {};
  const stop = async () => {
    await Promise.allSettled([started.prometheus?.stop(), started.alertmanager?.stop()]);
    await new Promise((resolve) => (started.sink ? started.sink.close(resolve) : resolve(undefined)));
  };
  try {
    // A sink standing in for the pager and ticket receivers.
    const sinkPort = await freePort();
    const sink = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/pager') pagerNotifications.push(JSON.parse(body) as Notification);
        res.end('ok');
      });
    });
    started.sink = sink;
    await new Promise<void>((resolve) => sink.listen(sinkPort, '127.0.0.1', resolve));

    const am = parse(readFileSync(EXAMPLE_AM, 'utf8')) as {
      route: Record<string, unknown> & { routes: Record<string, unknown>[] };
      receivers: { name: string; webhook_configs: Record<string, unknown>[] }[];
    };
    for (const route of [am.route, ...am.route.routes]) {
      route.group_wait = '0s';
      route.group_interval = '1s';
    }
    for (const r of am.receivers) {
      const hook = r.webhook_configs[0] as Record<string, unknown>;
      if (r.name === 'load-shedding-gate') {
        hook.url = `${opts.exporterUrl}/api/v1/alerts/webhook`;
        hook.http_config = { authorization: { type: 'Bearer', credentials_file: opts.gateTokenFile } };
      } else {
        hook.url = `http://127.0.0.1:${sinkPort}/${r.name}`;
      }
    }
    const amConfig = join(opts.dir, 'alertmanager.yml');
    writeFileSync(amConfig, stringify(am));
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
    return { promUrl: prom.url, pagerNotifications, stop };
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
