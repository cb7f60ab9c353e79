// `serve`: follow the configured sources, keep the window, answer scrapes until SIGTERM/SIGINT.
import { SlowSources } from '../ingest/slow-sources.js';
import { restoreMetrics, takeCheckpoint, type Checkpoint, type CheckpointJson } from '../checkpoint/checkpoint-state.js';
import { Checkpointer, loadCheckpoint, NotACheckpointError } from '../checkpoint/checkpointer.js';
import { listenAddresses, type Config } from '../config/schema.js';
import { AlertmanagerPoller } from '../gate/alertmanager-poller.js';
import { gateRouter, WEBHOOK_PATH } from '../gate/gate-router.js';
import { LoadSheddingGate, sourceLabel } from '../gate/load-shedding-gate.js';
import { ingestBudget, ingestRouter } from '../ingest/ingest-router.js';
import { otlpRouter, type OtlpRecordSink } from '../ingest/otlp-router.js';
import { OtlpResourceLabels, resourceLabelsApplied } from '../ingest/otlp-resource-labels.js';
import { withLabelledSets, type LabelledFamilies } from '../metrics/labelled-families.js';
import { SignalClassifier } from '../signals/classify.js';
import { FollowerGauges } from '../metrics/follower-gauges.js';
import { WindowGauges } from '../metrics/window-gauges.js';
import { buildRegistry } from '../metrics/registry.js';
import { Pipeline } from '../pipeline.js';
import { probeRouter } from '../probe/probe-router.js';
import { Prober } from '../probe/prober.js';
import { basicAuth } from '../server/basic-auth.js';
import { readBearerTokenFile as readTokenFile } from '../server/bearer-token.js';
import { createApp, listenWeb, type Endpoint, type WebServer } from '../server/http-server.js';
import { scrapeCounter } from '../server/shared-scrape.js';
import { startProbeListener, type ProbeListener } from '../server/probe-listener.js';
import { parseListenAddress } from '../config/listen-address.js';
import { rateLimit } from '../server/rate-limit.js';
import { systemdListenFds, SystemdSocketError } from '../server/systemd-socket.js';
import { landingRouter } from '../landing/landing-router.js';
import { RepeatGauges } from '../metrics/repeat-gauges.js';
import { repeatsRouter } from '../server/repeats-router.js';
import { SignalHistory } from '../landing/signal-history.js';
import type { Logger } from '../server/logger.js';
import type { WebConfig } from '../server/web-config.js';
import { FileFollower, StdinFollower, type FollowerState, type ResumeFrom } from '../source/file-follower.js';
import type { HeldLines } from '../record/source-inputs.js';
import type { FollowerCounts } from '../metrics/follower-gauges.js';
import { followerEvents } from './follower-events.js';
import { followOptionsOf } from './follow-options.js';
import { inputLog } from './input-log.js';
import { ParseThreads } from './parse-threads.js';
import type { FaultController } from '../simulate/faults.js';
import type { SourceEvents } from '../source/line-sink.js';
import { summarize } from '../windows/summarize.js';
import { UsageError } from './flags.js';
import { VERSION } from './version.js';

export interface RunningServer {
  /** The first address bound (HOST:PORT). */
  address: string;
  /** Every address bound, in the order given. */
  addresses: string[];
  /** http://ADDRESS or https://ADDRESS. */
  url: string;
  pipeline: Pipeline;
  /** Resolves if serving cannot go on (a parse worker failed): the caller stops and exits non-zero. */
  failed: Promise<Error>;
  stop(): Promise<void>;
}

/** What only the demo adds: the simulator's faults, so the landing page can inject them. */
export interface ServeExtras {
  faults?: FaultController;
  /** --web.config.file, loaded: TLS, basic auth and response headers for every endpoint. */
  webConfig?: WebConfig;
  /** --web.systemd-socket: listen on the sockets systemd passed instead of web.listenAddress. */
  systemdSocket?: boolean;
}

/** Where to listen: each of web.listenAddress, or with --web.systemd-socket the descriptors systemd passed. */
function endpointsOf(config: Config, systemdSocket: boolean): Endpoint[] {
  if (systemdSocket) {
    try {
      return systemdListenFds().map((fd) => ({ fd }));
    } catch (err) {
      if (err instanceof SystemdSocketError) throw new UsageError(err.message);
      throw err;
    }
  }
  return listenAddresses(config.web).map((text) => {
    const at = parseListenAddress(text);
    if (at === undefined) throw new UsageError(`--web.listen-address: "${text}" is not HOST:PORT or :PORT`);
    return at;
  });
}

export async function startServe(config: Config, log: Logger, extras: ServeExtras = {}): Promise<RunningServer> {
  const endpoints = endpointsOf(config, extras.systemdSocket === true);

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
    for (const [key, file] of [
      ['gate.bearerTokenFile', tokenFile],
      ['ingest.bearerTokenFile', ingestTokenFile],
    ] as const) {
      if (file !== undefined) {
        throw new UsageError(
          `${key} cannot be combined with basic_auth_users in ${web.file}: both use the Authorization header. ` +
            'Remove the token; with basic auth on, give senders basic_auth (Alertmanager: http_config.basic_auth).',
        );
      }
    }
  }

  const pipeline = new Pipeline(config, {
    input: inputLog(log),
    // Per file: a bare log says nothing above debug, a wrapped one once per file it was found in.
    envelope: (source, envelope) => (envelope === 'none' ? log.debug : log.info).call(log, 'input envelope', { source, envelope }),
  });
  // Restored before anything is read, so the pipeline's series handles find the restored series.
  const checkpointFile = config.checkpoint.file;
  const gauges = new WindowGauges(pipeline.window, config.signals);
  const g = config.gate;
  const gate = new LoadSheddingGate({
    pauseLabel: g.pauseLabel,
    pauseValue: g.pauseValue,
    maxAlerts: g.maxAlerts,
    scope: g.scope,
    alertTtlMs: g.alertTtl,
    alertmanagers: g.alertmanagers,
    pollIntervalMs: g.pollInterval,
    log,
  });
  const poller =
    g.alertmanagers.length === 0 ? undefined : new AlertmanagerPoller(gate, { urls: g.alertmanagers, intervalMs: g.pollInterval, timeoutMs: g.pollTimeout, maxBodyBytes: g.maxBodyBytes, log });
  // Every snapshot is taken between two polls of the files, so offsets and counts agree; without file
  // sources there are no offsets, only counters (stdin and HTTP ingest cannot be read again).
  const snapshot = (): Promise<CheckpointJson> => {
    // The lines held while a format is detected go with it: the offsets are past them, the counters without them.
    const take = (state: FollowerState, held: readonly HeldLines[] = []) => takeCheckpoint(pipeline.metrics, state, Date.now(), [...pipeline.held(), ...held]);
    return files === undefined ? Promise.resolve(take({ patterns: [], files: [], known: [] })) : files.snapshot(take);
  };
  const checkpointer = checkpointFile === undefined ? undefined : new Checkpointer({ file: checkpointFile, schedule: config.checkpoint.schedule, log, take: snapshot });
  const auth = basicAuthOn
    ? basicAuth({
        users: web.basicAuthUsers,
        log,
        limits: {
          failedLoginBurst: config.web.basicAuth.failedLoginBurst,
          failedLoginIntervalMs: config.web.basicAuth.failedLoginInterval,
          maxPendingChecks: config.web.basicAuth.maxPendingChecks,
          maxPendingChecksPerPrefix: config.web.basicAuth.maxPendingChecksPerPrefix,
          knownUserReservedChecks: config.web.basicAuth.knownUserReservedChecks,
          globalFailedLoginBurst: config.web.basicAuth.globalFailedLoginBurst,
          globalFailedLoginIntervalMs: config.web.basicAuth.globalFailedLoginInterval,
          refusalDelayMs: config.web.basicAuth.refusalDelay,
          maxHeldRefusals: config.web.basicAuth.maxHeldRefusals,
        },
      })
    : undefined;
  const checkpoint = checkpointer === undefined ? undefined : restoreCheckpoint(checkpointer, pipeline, log);
  const heldBefore = checkpoint?.json.held ?? [];
  // With parse workers, the held lines go to the first worker: most continue the files it reads (an ingest
  // body's are counted there too, under their own source).
  const toWorkers = config.parse.workers > 0 && config.sources.files.length > 0;
  const heldForFiles = toWorkers ? heldBefore : [];
  if (heldBefore.length > 0) {
    if (!toWorkers) pipeline.restoreHeld(heldBefore);
    log.info('lines held for format detection at the checkpoint offered again', { streams: heldBefore.length, lines: heldBefore.reduce((n, h) => n + h.lines.length, 0) });
  }
  // The landing page's numbers: the window now, and samples of it for the charts.
  const readWindow = () => summarize(pipeline.window.snapshot(), config.signals);
  const history = new SignalHistory({ read: readWindow, totalRequests: () => pipeline.metrics.requests.sum() });

  const events: SourceEvents = followerEvents(pipeline.metrics, log, {
    dropped: (d) => checkpointer?.reportDropped([d]),
    watched: () => files?.watchedDirectories,
  });
  const maxLineBytes = config.input.maxLineBytes;
  // One in-flight budget for HTTP ingest and the OTLP receiver: ingest.maxInFlightBytes bounds both together.
  const ingestBudgetShared = ingestBudget(config.ingest);
  // One cooldown for both endpoints: an address cut for trickling on one is refused on the other too.
  const slowSourcesShared = new SlowSources();
  const wanted = new SignalClassifier(config.headers);
  const resume: ResumeFrom | undefined =
    checkpoint === undefined ? undefined : { state: checkpoint.files, savedAtMs: checkpoint.savedAtMs, maxCatchUpBytes: config.checkpoint.maxCatchUpBytes, untrusted: checkpoint.untrusted };
  let failure: ((err: Error) => void) | undefined;
  const failed = new Promise<Error>((resolve) => {
    failure = resolve;
  });
  // Parsed off the serving thread (parse.workers), or on it with parse.workers: 0.
  const files: Files | undefined = toWorkers
    ? new ParseThreads({
        config,
        workers: config.parse.workers,
        pipeline,
        log,
        ...(resume === undefined ? {} : { resume }),
        held: heldForFiles,
        dropped: (d) => checkpointer?.reportDropped([d]),
        failed: (err) => {
          log.error('a parse worker failed: its files are no longer read, so serve stops (a restart resumes from the last checkpoint)', { error: err.message });
          failure?.(err);
        },
      })
    : config.sources.files.length > 0
      ? new FileFollower(followOptionsOf(config, resume), pipeline, events)
      : undefined;
  const stdin = config.sources.stdin ? new StdinFollower(maxLineBytes, pipeline, events, undefined, config.input.envelope) : undefined;
  const followerGauges = files === undefined ? undefined : new FollowerGauges(files);
  const scrapes = scrapeCounter();
  const repeatGauges = new RepeatGauges(pipeline.repeats, config.repeats.top);
  // OTLP records of each resource label set count in a pipeline of their own, written with its labels.
  const labelled: (LabelledFamilies & { gauges: WindowGauges })[] = [];
  const resourceLabels = new OtlpResourceLabels<OtlpRecordSink>({
    labels: resourceLabelsApplied(config.ingest.otlp.resourceLabels, config.pack.aggregationLabels),
    maxSets: config.ingest.otlp.maxResourceLabelSets,
    maxValueBytes: config.metrics.labelValueMaxBytes,
    create: (names, values) => {
      const own = new Pipeline(config);
      const ownGauges = new WindowGauges(own.window, config.signals);
      labelled.push({ names, values, gauges: ownGauges, families: new Map([...own.metrics.families(), ...ownGauges.families()].map((f) => [f.name, f])) });
      log.info('OTLP resource label set counted apart', { labels: names.map((n, i) => `${n}=${values[i] as string}`).join(','), sets: labelled.length });
      return own;
    },
    overflowed: (records) => pipeline.metrics.labelOverflow.inc(['otlp_resource', 'too_many_values'], records),
  });
  const baseFamilies = [
    ...pipeline.metrics.families(),
    pipeline.inputInfo,
    pipeline.inputDecisions,
    pipeline.headersUnseen,
    pipeline.inputEnvelope,
    ...gauges.families(),
    ...(followerGauges?.families() ?? []),
    ...gate.families(),
    ...(checkpointer?.families() ?? []),
    ...(auth === undefined ? [] : [auth.checks]),
    ...repeatGauges.families(),
    scrapes,
  ];
  const registry = buildRegistry(config.ingest.otlp.enabled && resourceLabels.active ? withLabelledSets(baseFamilies, () => labelled) : baseFamilies, VERSION, {
    created: config.web.openMetricsCreated,
  });

  let ready = false;
  const app = createApp({
    log,
    ...(web?.rateLimit === undefined ? {} : { limiter: rateLimit(web.rateLimit) }),
    ...(web === undefined ? {} : { headers: web.headers }),
    ...(auth === undefined ? {} : { guard: auth.handler }),
    registry,
    telemetryPath: config.web.telemetryPath,
    maxRequests: config.web.maxRequests,
    scrapes,
    beforeScrape: () => {
      gate.refresh();
      gauges.refresh();
      followerGauges?.refresh();
      repeatGauges.refresh();
      for (const set of labelled) set.gauges.refresh();
    },
    ready: () => ready,
    // Restored counters are held back until the lines after the checkpoint are counted again (a scrape
    // between would see them lower than before the restart: a counter reset).
    ...(checkpoint === undefined ? {} : { scrapeReady: () => ready }),
    routers: [
      gateRouter(gate, {
        ...(bearerToken === undefined ? {} : { bearerToken }),
        ...(poller === undefined ? {} : { onPush: () => void poller.pollNow() }),
        maxBodyBytes: config.gate.maxBodyBytes,
        log,
      }),
      ingestRouter({
        budget: ingestBudgetShared,
        slowSources: slowSourcesShared,
        enabled: config.ingest.enabled,
        ...(ingestToken === undefined ? {} : { bearerToken: ingestToken }),
        maxBodyBytes: config.ingest.maxBodyBytes,
        maxInFlightBytes: config.ingest.maxInFlightBytes,
        bodyReadTimeoutMs: config.ingest.bodyReadTimeout,
        ...(config.ingest.maxInFlightBytesPerSource === undefined ? {} : { maxInFlightBytesPerSource: config.ingest.maxInFlightBytesPerSource }),
        minBodyBytesPerSecond: config.ingest.minBodyBytesPerSecond,
        minBodyRateWindowMs: config.ingest.minBodyRateWindow,
        slowSourceCooldownMs: config.ingest.slowSourceCooldown,
        maxLineBytes,
        envelope: config.input.envelope,
        sink: pipeline,
        log,
      }),
      repeatsRouter({ repeats: pipeline.repeats, top: config.repeats.top, sinceMs: Date.now() }),
      probeRouter(new Prober(config), log),
      otlpRouter({
        enabled: config.ingest.otlp.enabled,
        ...(ingestToken === undefined ? {} : { bearerToken: ingestToken }),
        maxBodyBytes: config.ingest.maxBodyBytes,
        budget: ingestBudgetShared,
        slowSources: slowSourcesShared,
        bodyReadTimeoutMs: config.ingest.bodyReadTimeout,
        minBodyBytesPerSecond: config.ingest.minBodyBytesPerSecond,
        minBodyRateWindowMs: config.ingest.minBodyRateWindow,
        slowSourceCooldownMs: config.ingest.slowSourceCooldown,
        preset: config.ingest.otlp.preset,
        resourceLabels,
        map: {
          generic: config.ingest.otlp.generic,
          maxValueDepth: config.ingest.otlp.maxValueDepth,
          maxLineBytes,
          latencyList: config.input.latencyList,
          maxLatencySeconds: config.input.maxLatency / 1000,
          absentValues: config.input.absentValues,
          responseHeaderNames: wanted.responseHeaderNames,
          requestHeaderNames: wanted.requestHeaderNames,
        },
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
  if (bearerToken === undefined && !basicAuthOn) {
    // Whoever reaches the port can pause (or resume) every gateway's non-core calls.
    log.warn('the gate webhook accepts alerts from anyone who can reach the port; set gate.bearerTokenFile (or basic auth in --web.config.file)', {
      path: WEBHOOK_PATH,
    });
  }
  // A restarted replica answers from Alertmanager's state from its first request (one read, bounded by pollTimeout per URL).
  await poller?.start();
  const servers: WebServer[] = [];
  let probes: ProbeListener | undefined;
  try {
    for (const at of endpoints) servers.push(await listenWeb(app, at, { ...(web?.tls === undefined ? {} : { tls: web.tls }), http2: web?.http2 ?? false }, log));
    const probeAt = config.web.probeListenAddress === undefined ? undefined : parseListenAddress(config.web.probeListenAddress);
    if (probeAt !== undefined) probes = await startProbeListener({ ...probeAt, stallTimeoutMs: config.web.probeStallTimeout, ready: () => ready, log });
  } catch (err) {
    // One address that cannot be bound (in use, not ours) stops the start; the ones bound already close.
    await Promise.all(servers.map((s) => s.close()));
    await auth?.close();
    await poller?.stop();
    throw err;
  }
  const server = servers[0] as WebServer;
  history.start();
  // A quiet source whose first lines left its format open is decided after a while, not at its next line.
  const settling = setInterval(() => pipeline.settle(), SETTLE_INTERVAL_MS);
  settling.unref();
  const address = server.address;
  const addresses = servers.map((s) => s.address);
  await files?.start();
  stdin?.start();
  void stdin?.done.then(() => log.info('stdin ended; still serving what was read'));
  checkpointer?.start();
  if (checkpoint !== undefined && files !== undefined) {
    void files.caughtUp.then(() => {
      ready = true;
      log.info('caught up after restart from checkpoint; serving metrics');
    });
  } else {
    ready = true;
  }
  log.info('serving', {
    address,
    addresses: addresses.join(','),
    systemdSocket: extras.systemdSocket === true,
    probeAddress: probes?.address,
    scheme: server.scheme,
    http2: server.scheme === 'https' && web?.http2 === true,
    basicAuth: basicAuthOn,
    rateLimit: web?.rateLimit === undefined ? undefined : `${web.rateLimit.burst}/${web.rateLimit.intervalMs}ms`,
    telemetryPath: config.web.telemetryPath,
    files: config.sources.files.join(','),
    stdin: config.sources.stdin,
    ingest: config.ingest.enabled,
    gateAlertmanagers: g.alertmanagers.map(sourceLabel).join(',') || undefined,
    ...(files === undefined ? {} : { maxOpenFiles: files.openFileCap }),
    checkpoint: checkpointFile,
    version: VERSION,
  });

  return {
    address,
    addresses,
    url: `${server.scheme}://${address}`,
    pipeline,
    failed,
    async stop() {
      ready = false;
      clearInterval(settling);
      history.stop();
      await poller?.stop();
      await checkpointer?.stop();
      stdin?.stop();
      await files?.stop();
      // Closed before the final checkpoint, so what an ingest request in flight added is in it.
      await Promise.all([...servers.map((s) => s.close()), probes?.close()]);
      await auth?.close();
      await checkpointer?.write('shutdown');
    },
  };
}

const SETTLE_INTERVAL_MS = 500;

/** The followed files, read here (FileFollower) or by parse workers (ParseThreads): what serve asks of either. */
interface Files extends FollowerCounts {
  readonly caughtUp: Promise<void>;
  readonly watchedDirectories: { watched: number; fallbacks: number };
  start(): Promise<void>;
  stop(): Promise<void>;
  snapshot<T>(take: (state: FollowerState, held?: HeldLines[]) => T): Promise<T>;
}

/**
 * The previous run's checkpoint, its counters restored into the fresh pipeline (what fails validation
 * dropped and reported); undefined when there is none. A checkpoint path that holds something else is a
 * usage error (exit 2), with nothing there touched.
 */
function restoreCheckpoint(checkpointer: Checkpointer, pipeline: Pipeline, log: Logger): Checkpoint | undefined {
  const file = checkpointer.file;
  let checkpoint: Checkpoint | undefined;
  try {
    checkpoint = loadCheckpoint(file, log);
  } catch (err) {
    if (err instanceof NotACheckpointError) throw new UsageError(`checkpoint.file: ${err.message}`);
    throw err;
  }
  if (checkpoint === undefined) return undefined;
  const savedAt = checkpoint.json.savedAt;
  const { result, dropped } = restoreMetrics(checkpoint, pipeline.metrics);
  checkpointer.reportDropped([...checkpoint.dropped, ...dropped]);
  if (result === 'bounds_changed') {
    log.warn('checkpoint histogram buckets differ from the config: counters start from zero; files still resume from their offsets', {
      file,
      savedAt,
      checkpointBounds: checkpoint.json.histogramBounds.join(','),
      configBounds: pipeline.metrics.duration.bounds.join(','),
    });
  } else {
    log.info('restored checkpoint', { file, savedAt, requests: pipeline.metrics.requests.sum(), files: checkpoint.files.files.length });
  }
  return checkpoint;
}
