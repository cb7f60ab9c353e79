// POST /v1/logs: OTLP/HTTP logs (a Collector's otlphttp exporter, Envoy's OpenTelemetry access logger, any
// OTel SDK), counted by the same pipeline as files and HTTP ingest, under source "otlp". The promises of
// HTTP ingest hold: the body is read whole within ingest's limits (auth, size, in-flight bytes, rate), then
// decoded whole, and only then counted, with no await between counting and answering; so a body that fails
// counts nothing, and the answer's partial_success is exactly what /metrics gained. Answers follow the
// OTLP/HTTP spec: ExportLogsServiceResponse in the request's encoding, google.rpc.Status on errors,
// 429 and 503 with Retry-After (retryable), other 4xx not.
import { SlowSources } from './slow-sources.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import { BearerToken } from '../server/bearer-token.js';
import type { Logger } from '../server/logger.js';
import type { Pipeline } from '../pipeline.js';
import type { ParseResult } from '../record/parse-record.js';
import { OtlpMapper, type OtlpEntry, type OtlpMapOptions, type OtlpPreset } from './otlp-map.js';
import { decodeLogsRequest, encodeLogsResponse, encodeStatus, otlpMessages, type OtlpEncoding } from './otlp-proto.js';
import { bodyLimits, parseContentEncoding, readBody, type ByteBudget } from './read-body.js';
import type { OtlpResourceLabels } from './otlp-resource-labels.js';

export const OTLP_LOGS_PATH = '/v1/logs';
export const OTLP_SOURCE = 'otlp';

/** What the receiver needs of the pipeline: counting a record read elsewhere, and its input gauges. */
export type OtlpSink = Pick<Pipeline, 'countRecord' | 'inputInfo' | 'inputDecisions'>;
/** Where the records of one resource label set count (a pipeline of their own). */
export type OtlpRecordSink = Pick<Pipeline, 'countRecord'>;

export interface OtlpRouterOptions {
  enabled: boolean;
  bearerToken?: string;
  maxBodyBytes: number;
  /** Shared with HTTP ingest when given (one in-flight budget for both). */
  budget: ByteBudget;
  bodyReadTimeoutMs: number;
  minBodyBytesPerSecond?: number;
  minBodyRateWindowMs?: number;
  slowSourceCooldownMs?: number;
  /** Shared with the other ingest endpoint (serve passes one); a router of its own otherwise. */
  slowSources?: SlowSources;
  preset: 'auto' | OtlpPreset;
  map: OtlpMapOptions;
  /** Counts the records of resources without a resource label set, and holds the input gauges of all. */
  sink: OtlpSink;
  /** Resource attributes → target labels (ingest.otlp.resourceLabels): each set's records count in its own sink. */
  resourceLabels?: OtlpResourceLabels<OtlpRecordSink>;
  log: Logger;
}

const MEDIA: Record<string, OtlpEncoding> = { 'application/x-protobuf': 'protobuf', 'application/protobuf': 'protobuf', 'application/json': 'json' };
/** gRPC codes of the google.rpc.Status of each HTTP error (the OTLP/HTTP spec names the Status, not the code). */
const GRPC_CODE: Record<number, number> = { 400: 3, 401: 16, 404: 5, 405: 12, 408: 4, 413: 8, 415: 3, 429: 8, 500: 13, 503: 14 };

export function otlpRouter(opts: OtlpRouterOptions): express.Router {
  const router = express.Router();
  const { log, sink, budget } = opts;
  const answer = (res: Response, encoding: OtlpEncoding, status: number, message: string): void => {
    res
      .status(status)
      .type(encoding === 'json' ? 'application/json' : 'application/x-protobuf')
      .send(encodeStatus(encoding, GRPC_CODE[status] ?? 2, message));
  };
  if (!opts.enabled) {
    router.all(OTLP_LOGS_PATH, (req, res) => answer(res, encodingOf(req), 404, 'the OTLP logs receiver is disabled; enable it with `ingest: { otlp: { enabled: true } }` in the config file'));
    return router;
  }
  // Loaded at start, so a missing proto/ stops `serve` instead of failing the first request.
  otlpMessages();
  const mapper = new OtlpMapper(opts.map);
  const token = opts.bearerToken === undefined ? undefined : new BearerToken(opts.bearerToken);
  // Addresses whose last body came too slowly get 429 until their cooldown ends (reconnecting does not help).
  const slow = opts.slowSources ?? new SlowSources();
  /** The preset the last resource of each service was read with (`previous` when a request shows nothing decisive). */
  const previous = new Map<string, OtlpPreset>();
  const MAX_SERVICES = 4096;
  const inUse = new Set<OtlpPreset>();
  const labels = opts.resourceLabels;
  /**
   * Without resource labels applied (none of ingest.otlp.resourceLabels is an aggregation label), every
   * record counts under this exporter's own target labels: records of a second (cluster, namespace) pair
   * are said out loud once (docs/otlp.md).
   */
  const groups = new Set<string>();
  const MAX_GROUPS = 64;

  const reject = (req: Request, res: Response, encoding: OtlpEncoding, status: number, error: string): void => {
    log.warn('OTLP logs request rejected', { status, reason: error, remote: req.socket.remoteAddress });
    answer(res, encoding, status, error);
  };

  router.post(OTLP_LOGS_PATH, async (req: Request, res: Response) => {
    const encoding = encodingOf(req);
    if (token !== undefined) {
      const check = token.check(req.get('authorization'));
      if (check !== 'ok') {
        res.set('WWW-Authenticate', 'Bearer realm="zero-plane-exporter"');
        return reject(req, res, encoding, 401, check === 'missing' ? 'missing Authorization: Bearer token' : 'invalid bearer token');
      }
    }
    const type = (req.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (MEDIA[type] === undefined) return reject(req, res, encoding, 415, `Content-Type "${type}" is not supported; send application/x-protobuf or application/json (OTLP/HTTP)`);
    const contentEncoding = parseContentEncoding(req.get('content-encoding'));
    if (contentEncoding === undefined) return reject(req, res, encoding, 415, `Content-Encoding "${req.get('content-encoding')}" is not supported; send the body as is or with gzip`);

    const source = req.socket.remoteAddress ?? '';
    const wait = slow.waitMs(source);
    if (wait !== undefined) {
      res.set('Retry-After', String(Math.ceil(wait / 1000)));
      return reject(req, res, encoding, 429, 'a body from this address came too slowly and was cut; retry after the ingest.slowSourceCooldown');
    }
    const body = await readBody(req, contentEncoding, bodyLimits(opts, budget, source));
    if (!body.ok) {
      if (body.status === 'aborted') {
        log.debug('OTLP logs request abandoned by the client; nothing counted', { reason: body.error, remote: req.socket.remoteAddress });
        return;
      }
      // The in-flight budget is shared by every client: full, the exporter is busy (503); one address over
      // its share is throttled (429). Both are retried by OTLP clients, after Retry-After.
      const status = body.status === 429 && /maxInFlightBytes\)/.test(body.error) ? 503 : body.status;
      if (status === 429 || status === 503) res.set('Retry-After', '1');
      if (status === 408) {
        res.set('Connection', 'close');
        if ('belowMinRate' in body && body.belowMinRate === true) slow.cut(source, opts.slowSourceCooldownMs ?? 0);
      }
      return reject(req, res, encoding, status, body.error);
    }
    let outcome: OtlpOutcome;
    try {
      const request = decodeLogsRequest(Buffer.concat(body.chunks), encoding);
      if (typeof request === 'string') return reject(req, res, encoding, 400, `${request}; nothing from it was counted`);
      // Read whole before the first record is counted: nothing below throws on input, and counting is synchronous.
      const resources = (request.resourceLogs ?? []).map((rl) => {
        const resource = mapper.resourceAttributes(rl.resource?.attributes);
        const entries = (rl.scopeLogs ?? []).flatMap((sl) => (sl.logRecords ?? []).map((r) => mapper.entry(r)));
        return { resource, entries };
      });
      outcome = count(resources);
    } finally {
      body.release();
    }
    log.debug('OTLP logs ingested', { bytes: body.bytes, accepted: outcome.accepted, rejected: outcome.rejected, remote: req.socket.remoteAddress });
    const reasons = Object.entries(outcome.reasons)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', ');
    const message = outcome.rejected === 0 ? '' : `${outcome.rejected} log records are not access-log records the exporter reads (${reasons}); counted in zero_plane_exporter_parse_errors_total`;
    res
      .status(200)
      .set('Cache-Control', 'no-store')
      .type(encoding === 'json' ? 'application/json' : 'application/x-protobuf')
      .send(encodeLogsResponse(encoding, outcome.rejected, message));
  });

  interface OtlpOutcome {
    accepted: number;
    rejected: number;
    reasons: Record<string, number>;
  }

  function count(resources: { resource: Record<string, string>; entries: OtlpEntry[] }[]): OtlpOutcome {
    const out: OtlpOutcome = { accepted: 0, rejected: 0, reasons: {} };
    for (const { resource, entries } of resources) {
      if (entries.length === 0) continue;
      const service = resource['service.name'] ?? '';
      const group = `${resource['k8s.cluster.name'] ?? ''}/${resource['k8s.namespace.name'] ?? ''}`;
      if (labels?.active !== true && !groups.has(group) && groups.size < MAX_GROUPS) {
        groups.add(group);
        if (groups.size === 2)
          log.warn("OTLP log records come from more than one cluster/namespace; they all count under this exporter's target labels", {
            groups: [...groups].join(' '),
            fix: 'add cluster and namespace to pack.aggregationLabels (ingest.otlp.resourceLabels maps them) and scrape with honor_labels: true, or route each group to an exporter of its own (docs/otlp.md)',
          });
      }
      const target = labels?.sinkFor(resource, entries.length) ?? sink;
      const decision = mapper.decide(entries, opts.preset, previous.get(service));
      if (previous.get(service) !== decision.preset) {
        if (previous.size >= MAX_SERVICES) previous.delete(previous.keys().next().value as string);
        previous.set(service, decision.preset);
        const level = decision.basis === 'ambiguous' ? 'warn' : 'info';
        log[level]('OTLP log records read with preset', { preset: decision.preset, basis: decision.basis, service, records: entries.length });
      }
      sink.inputDecisions.inc([OTLP_SOURCE, decision.basis]);
      if (!inUse.has(decision.preset)) {
        inUse.add(decision.preset);
        sink.inputInfo.set([OTLP_SOURCE, decision.preset], 1);
      }
      for (const e of entries) {
        const parsed: ParseResult = mapper.read(e, decision.preset);
        target.countRecord(parsed, OTLP_SOURCE);
        if (parsed.ok) out.accepted++;
        else {
          out.rejected++;
          out.reasons[parsed.reason] = (out.reasons[parsed.reason] ?? 0) + 1;
        }
      }
    }
    return out;
  }

  router.all(OTLP_LOGS_PATH, (req, res) => {
    res.set('Allow', 'POST');
    answer(res, encodingOf(req), 405, `method ${req.method} not allowed; use POST`);
  });

  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent || req.path !== OTLP_LOGS_PATH) return next(err);
    log.error('OTLP logs request failed', { error: err instanceof Error ? err.message : String(err) });
    answer(res, encodingOf(req), 500, 'internal error handling the OTLP logs request');
  });
  return router;
}

/** The encoding of the answer: the request's when it names one the spec has, else protobuf (the OTLP/HTTP default). */
function encodingOf(req: Request): OtlpEncoding {
  const type = (req.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return MEDIA[type] ?? 'protobuf';
}
