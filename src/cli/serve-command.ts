// `serve`: follow the configured sources, keep the window, answer scrapes until SIGTERM/SIGINT.
import type { Config } from '../config/schema.js';
import { gateRouter } from '../gate/gate-router.js';
import { LoadSheddingGate } from '../gate/load-shedding-gate.js';
import { ingestRouter } from '../ingest/ingest-router.js';
import { WindowGauges } from '../metrics/window-gauges.js';
import { buildRegistry } from '../metrics/registry.js';
import { Pipeline } from '../pipeline.js';
import { basicAuth } from '../server/basic-auth.js';
import { readBearerTokenFile as readTokenFile } from '../server/bearer-token.js';
import { createApp, listenWeb } from '../server/http-server.js';
import { parseListenAddress } from '../server/listen-address.js';
import { landingRouter } from '../server/landing/landing-router.js';
import { SignalHistory } from '../server/landing/signal-history.js';
import type { Logger } from '../server/logger.js';
import type { WebConfig } from '../server/web-config.js';
import { FileFollower, StdinFollower } from '../source/file-follower.js';
import type { FaultController } from '../simulate/faults.js';
import type { SourceEvents } from '../source/line-sink.js';
import { summarize } from '../windows/summarize.js';
import { UsageError } from './flags.js';
import { VERSION } from './version.js';

export interface RunningServer {
  address: string;
  /** http://ADDRESS or https://ADDRESS. */
  url: string;
  pipeline: Pipeline;
  stop(): Promise<void>;
}

/** What only the demo adds: the simulator's faults, so the landing page can inject them. */
export interface ServeExtras {
  faults?: FaultController;
  /** --web.config.file, loaded: TLS, basic auth and response headers for every endpoint. */
  webConfig?: WebConfig;
}

export async function startServe(config: Config, log: Logger, extras: ServeExtras = {}): Promise<RunningServer> {
  const listenAt = parseListenAddress(config.web.listenAddress);
  if (listenAt === undefined) throw new UsageError(`--web.listen-address: "${config.web.listenAddress}" is not HOST:PORT or :PORT`);

  const tokenFile = config.gate.bearerTokenFile;
  let bearerToken: string | undefined;
  try {
    bearerToken = tokenFile === undefined ? undefined : await readTokenFile(tokenFile, 'gate');
  } catch (err) {
    throw new UsageError(`gate.bearerTokenFile: ${(err as Error).message}`);
  }
  const ingestTokenFile = config.ingest.bearerTokenFile;
  let ingestToken: string | undefined;
  try {
    ingestToken = ingestTokenFile === undefined ? undefined : await readTokenFile(ingestTokenFile, 'ingest');
  } catch (err) {
    throw new UsageError(`ingest.bearerTokenFile: ${(err as Error).message}`);
  }
  const web = extras.webConfig;
  const basicAuthOn = web !== undefined && web.basicAuthUsers.size > 0;
  if (basicAuthOn) {
    // One Authorization header cannot carry both Basic credentials and a bearer token, and Alertmanager's
    // http_config allows only one of them: with basic auth on, it is the credential for every endpoint.
    for (const [key, file] of [['gate.bearerTokenFile', tokenFile], ['ingest.bearerTokenFile', ingestTokenFile]] as const) {
      if (file !== undefined) {
        throw new UsageError(
          `${key} cannot be combined with basic_auth_users in ${web.file}: both use the Authorization header. ` +
            'Remove the token; with basic auth on, give senders basic_auth (Alertmanager: http_config.basic_auth).',
        );
      }
    }
  }

  const pipeline = new Pipeline(config);
  const gauges = new WindowGauges(pipeline.window, config.signals);
  const gate = new LoadSheddingGate({ pauseLabel: config.gate.pauseLabel, pauseValue: config.gate.pauseValue });
  const registry = buildRegistry([...pipeline.metrics.families(), ...gauges.families(), gate.paused], VERSION);
  // The landing page's numbers: the window now, and samples of it for the charts.
  const readWindow = () => summarize(pipeline.window.snapshot(), config.signals);
  const history = new SignalHistory({ read: readWindow, totalRequests: () => pipeline.metrics.requests.sum() });

  const events: SourceEvents = {
    error: (source, reason, detail) => {
      pipeline.metrics.sourceErrors.inc([source, reason]);
      log.warn('source problem; retrying', { source, reason, detail });
    },
    opened: (source, path) => log.info('following file', { source, path }),
    rotated: (source, path, kind) => {
      pipeline.metrics.rotations.inc([source, kind]);
      log.info('file rotated', { source, path, kind });
    },
    skipped: (source, bytes, reason) => {
      pipeline.metrics.skippedBytes.inc([source, reason], bytes);
      log.warn('bytes skipped', { source, bytes, reason });
    },
    partialLine: (source, path) => {
      pipeline.metrics.partialLines.inc([source]);
      log.info('partial last line delivered', { source, path });
    },
  };
  const maxLineBytes = config.input.maxLineBytes;
  const files =
    config.sources.files.length > 0
      ? new FileFollower(
          { patterns: config.sources.files, maxLineBytes, pollIntervalMs: config.sources.pollInterval, startAt: config.sources.startAt },
          pipeline,
          events,
        )
      : undefined;
  const stdin = config.sources.stdin ? new StdinFollower(maxLineBytes, pipeline, events) : undefined;

  let ready = false;
  const app = createApp({
    ...(web === undefined ? {} : { headers: web.headers }),
    ...(basicAuthOn ? { guard: basicAuth({ users: web.basicAuthUsers, log }) } : {}),
    registry,
    telemetryPath: config.web.telemetryPath,
    beforeScrape: () => gauges.refresh(),
    ready: () => ready,
    routers: [
      gateRouter(gate, bearerToken === undefined ? { log } : { bearerToken, log }),
      ingestRouter({
        enabled: config.ingest.enabled,
        ...(ingestToken === undefined ? {} : { bearerToken: ingestToken }),
        maxBodyBytes: config.ingest.maxBodyBytes,
        maxInFlightBytes: config.ingest.maxInFlightBytes,
        maxLineBytes,
        sink: pipeline,
        log,
      }),
    ],
    landing: landingRouter({
      config,
      read: readWindow,
      history,
      gate,
      version: VERSION,
      faults: extras.faults,
    }),
  });
  const server = await listenWeb(app, listenAt.host, listenAt.port, web?.tls, log);
  history.start();
  const address = server.address;
  await files?.start();
  stdin?.start();
  stdin?.done.then(() => log.info('stdin ended; still serving what was read'));
  ready = true;
  log.info('serving', {
    address,
    scheme: server.scheme,
    basicAuth: basicAuthOn,
    telemetryPath: config.web.telemetryPath,
    files: config.sources.files.join(','),
    stdin: config.sources.stdin,
    ingest: config.ingest.enabled,
    version: VERSION,
  });

  return {
    address,
    url: `${server.scheme}://${address}`,
    pipeline,
    async stop() {
      ready = false;
      history.stop();
      stdin?.stop();
      await files?.stop();
      await server.close();
    },
  };
}
