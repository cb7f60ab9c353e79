// POST /api/v1/ingest: gateway log lines pushed over HTTP (NDJSON, optionally gzip), counted by the same
// pipeline as followed files, under source "http". Each body is all or nothing: it is read whole within
// the limits first, and only then fed, so a body that fails (413, 400, 408, the client going away) counts
// nothing, and the response's accepted/rejected counts are exactly what /metrics gained from it.
import { SlowSources } from './slow-sources.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import { BearerToken } from '../server/bearer-token.js';
import type { EnvelopeMode } from '../source/envelope.js';
import type { Logger } from '../server/logger.js';
import { feedLines, type CountingSink, type IngestOutcome } from './feed-lines.js';
import { bodyLimits, ByteBudget, parseContentEncoding, readBody } from './read-body.js';

export const INGEST_PATH = '/api/v1/ingest';
export const INGEST_SOURCE = 'http';

export interface IngestRouterOptions {
  enabled: boolean;
  /** When set, requests need `Authorization: Bearer <token>`. */
  bearerToken?: string;
  maxBodyBytes: number;
  maxInFlightBytes: number;
  /** Milliseconds a request has to send its whole body (ingest.bodyReadTimeout). */
  bodyReadTimeoutMs: number;
  /** Body bytes one client address may hold at once (ingest.maxInFlightBytesPerSource). */
  maxInFlightBytesPerSource?: number;
  /** ingest.minBodyBytesPerSecond over each ingest.minBodyRateWindow (0 = no minimum). */
  minBodyBytesPerSecond?: number;
  minBodyRateWindowMs?: number;
  /** After a body of its was cut for arriving under the minimum rate, an address gets 429 for this long (ingest.slowSourceCooldown). */
  slowSourceCooldownMs?: number;
  /** Shared with the other ingest endpoint (serve passes one); a router of its own otherwise. */
  slowSources?: SlowSources;
  maxLineBytes: number;
  /** The in-flight byte budget, when shared with another receiver (OTLP: otlp-router.ts); else one of its own. */
  budget?: ByteBudget;
  /** input.envelope, decided per request with `auto`. */
  envelope: EnvelopeMode;
  sink: CountingSink;
  log: Logger;
}

/** Media types taken, and whether each record starts with an RFC 7464 record separator. */
const MEDIA_TYPES: Record<string, boolean> = {
  'application/x-ndjson': false,
  'application/ndjson': false,
  'text/plain': false,
  'application/json-seq': true,
};
const CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);

export type IngestResponse = IngestOutcome;

export function ingestRouter(opts: IngestRouterOptions): express.Router {
  const router = express.Router();
  const { log } = opts;
  if (!opts.enabled) {
    router.all(INGEST_PATH, (_req, res) => {
      res.status(404).json({ error: 'HTTP ingest is disabled; enable it with `ingest: { enabled: true }` in the config file' });
    });
    return router;
  }
  const token = opts.bearerToken === undefined ? undefined : new BearerToken(opts.bearerToken);
  const budget = opts.budget ?? ingestBudget(opts);
  // Addresses whose last body came too slowly get 429 until their cooldown ends (reconnecting does not help).
  const slow = opts.slowSources ?? new SlowSources();

  const reject = (req: Request, res: Response, status: number, error: string): void => {
    log.warn('ingest request rejected', { status, reason: error, remote: req.socket.remoteAddress });
    res.status(status).json({ error });
  };

  router.post(INGEST_PATH, async (req: Request, res: Response) => {
    // Authenticated before the body is read, so an unauthenticated client cannot make us hold 10 MiB.
    if (token !== undefined) {
      const check = token.check(req.get('authorization'));
      if (check !== 'ok') {
        res.set('WWW-Authenticate', 'Bearer realm="zero-plane-exporter"');
        return reject(req, res, 401, check === 'missing' ? 'missing Authorization: Bearer token' : 'invalid bearer token');
      }
    }
    const media = parseMediaType(req.get('content-type'));
    if (typeof media === 'string') return reject(req, res, 415, media);
    const encoding = parseContentEncoding(req.get('content-encoding'));
    if (encoding === undefined) return reject(req, res, 415, `Content-Encoding "${req.get('content-encoding')}" is not supported; send the body as is or with gzip`);

    const source = req.socket.remoteAddress ?? '';
    const wait = slow.waitMs(source);
    if (wait !== undefined) {
      res.set('Retry-After', String(Math.ceil(wait / 1000)));
      return reject(req, res, 429, 'a body from this address came too slowly and was cut; retry after the ingest.slowSourceCooldown');
    }
    const body = await readBody(req, encoding, bodyLimits(opts, budget, source));
    if (!body.ok) {
      if (body.status === 'aborted') {
        log.debug('ingest request abandoned by the client; nothing counted', { reason: body.error, remote: req.socket.remoteAddress });
        return;
      }
      if (body.status === 429) res.set('Retry-After', '1');
      // The rest of a body that came too slowly is not waited for: the connection ends with the answer, and
      // the address waits out the cooldown, so reconnecting to trickle again gets 429 without holding bytes.
      if (body.status === 408) {
        res.set('Connection', 'close');
        if (body.belowMinRate === true) slow.cut(source, opts.slowSourceCooldownMs ?? 0);
      }
      return reject(req, res, body.status, body.error);
    }
    let outcome: IngestOutcome;
    try {
      outcome = feedLines(opts.sink, body.chunks, { maxLineBytes: opts.maxLineBytes, envelope: opts.envelope, source: INGEST_SOURCE, recordSeparators: media.recordSeparators });
    } finally {
      body.release();
    }
    log.debug('ingested', { bytes: body.bytes, accepted: outcome.accepted, rejected: outcome.rejected, remote: req.socket.remoteAddress });
    res.set('Cache-Control', 'no-store').json(outcome satisfies IngestResponse);
  });

  router.all(INGEST_PATH, (req, res) => {
    res
      .set('Allow', 'POST')
      .status(405)
      .json({ error: `method ${req.method} not allowed; use POST` });
  });

  // Anything unexpected becomes a JSON 500, never express's HTML page.
  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent || req.path !== INGEST_PATH) return next(err);
    log.error('ingest request failed', { error: err instanceof Error ? err.message : String(err) });
    res.status(500).json({ error: 'internal error handling the ingest request' });
  });
  return router;
}

/** ingest.maxInFlightBytes and its per-source share (unset: max(maxBodyBytes, maxInFlightBytes / 4)). */
export function ingestBudget(opts: Pick<IngestRouterOptions, 'maxBodyBytes' | 'maxInFlightBytes' | 'maxInFlightBytesPerSource'>): ByteBudget {
  return new ByteBudget(opts.maxInFlightBytes, opts.maxInFlightBytesPerSource ?? Math.max(opts.maxBodyBytes, Math.floor(opts.maxInFlightBytes / 4)));
}

/** The media type's settings, or why it is refused (a 415 message). */
function parseMediaType(header: string | undefined): { recordSeparators: boolean } | string {
  const accepted = `send ${Object.keys(MEDIA_TYPES).join(', ')}`;
  if (header === undefined || header.trim() === '') return `missing Content-Type; ${accepted}`;
  const [type = '', ...params] = header.split(';').map((p) => p.trim());
  const recordSeparators = MEDIA_TYPES[type.toLowerCase()];
  if (recordSeparators === undefined) return `Content-Type "${type}" is not supported; ${accepted}`;
  for (const param of params) {
    const [name = '', value = ''] = param.split('=').map((p) =>
      p
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase(),
    );
    if (name === 'charset' && !CHARSETS.has(value)) return `charset "${value}" is not supported; send UTF-8`;
  }
  return { recordSeparators };
}
