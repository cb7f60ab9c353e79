// HTTP face of the load-shedding gate: Alertmanager POSTs webhooks, the gateway polls the state.
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { gateSchema } from '../config/schema.js';
import { BearerToken } from '../server/bearer-token.js';
import type { Logger } from '../server/logger.js';
import type { LoadSheddingGate } from './load-shedding-gate.js';
import { parseWebhookPayload } from './webhook-payload.js';

export const WEBHOOK_PATH = '/api/v1/alerts/webhook';
export const GATE_PATH = '/api/v1/gate';
/** The config default of gate.maxBodyBytes, for a router built without one. */
export const WEBHOOK_BODY_LIMIT_BYTES = gateSchema.parse({}).maxBodyBytes;

export interface GateRouterOptions {
  /** When set, the webhook requires `Authorization: Bearer <token>`. */
  bearerToken?: string;
  /** Largest webhook body (gate.maxBodyBytes); larger ones get 413. */
  maxBodyBytes?: number;
  /** Called after each accepted push: the gate then reads Alertmanager at once (gate.alertmanagers set). */
  onPush?: () => void;
  log: Logger;
}

export function gateRouter(gate: LoadSheddingGate, opts: GateRouterOptions): express.Router {
  const { log } = opts;
  const maxBodyBytes = opts.maxBodyBytes ?? WEBHOOK_BODY_LIMIT_BYTES;
  if (opts.bearerToken !== undefined && opts.bearerToken === '') throw new Error('gate bearer token must not be empty');
  const expected = opts.bearerToken === undefined ? undefined : new BearerToken(opts.bearerToken);
  const router = express.Router();

  // Authenticate before reading the body, so an unauthenticated client cannot make us parse 1 MiB.
  const authenticate = (req: Request, res: Response, next: NextFunction): void => {
    if (expected === undefined) return next();
    const check = expected.check(req.get('authorization'));
    if (check === 'ok') return next();
    log.warn('gate webhook rejected', { reason: check === 'missing' ? 'missing bearer token' : 'wrong bearer token', remote: req.socket.remoteAddress });
    res.set('WWW-Authenticate', 'Bearer realm="zero-plane-exporter"');
    res.status(401).json({ error: check === 'missing' ? 'missing Authorization: Bearer token' : 'invalid bearer token' });
  };

  // Any Content-Type: the body is JSON by contract (Alertmanager sends application/json).
  const json = express.json({ limit: maxBodyBytes, strict: true, type: () => true });

  router.post(WEBHOOK_PATH, authenticate, json, (req: Request, res: Response) => {
    // body-parser turns a zero-length body into {}; say what is actually wrong.
    if (req.body === undefined || req.get('content-length') === '0') {
      res.status(400).json({ error: 'empty body: expected an Alertmanager webhook JSON object' });
      return;
    }
    const parsed = parseWebhookPayload(req.body);
    if (!parsed.ok) {
      gate.pushRejected();
      log.warn('gate webhook rejected', { reason: parsed.error, remote: req.socket.remoteAddress });
      res.status(400).json({ error: parsed.error });
      return;
    }
    const before = gate.state();
    gate.receive(parsed.payload, req.socket.remoteAddress);
    const after = gate.state();
    opts.onPush?.();
    log.debug('gate webhook received', {
      receiver: parsed.payload.receiver,
      groupKey: parsed.payload.groupKey,
      alerts: parsed.payload.alerts.length,
      pauseNonCore: after.pauseNonCore,
    });
    if (!before.pauseNonCore && after.pauseNonCore) {
      log.info('non-core calls paused', {
        since: after.since ?? undefined,
        alerts: after.alerts.map((a) => a.alertname).join(','),
        fingerprints: after.alerts.map((a) => a.fingerprint).join(','),
      });
    } else if (before.pauseNonCore && !after.pauseNonCore) {
      const began = before.since === null ? NaN : Date.parse(before.since);
      log.info('non-core calls resumed', {
        pausedSince: before.since ?? undefined,
        pausedSeconds: Number.isFinite(began) ? Math.max(0, (Date.now() - began) / 1000) : undefined,
      });
    }
    res.status(200).json({ status: 'ok', pauseNonCore: after.pauseNonCore });
  });
  router.all(WEBHOOK_PATH, methodNotAllowed('POST'));

  router.get(GATE_PATH, (_req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store').json(gate.state());
  });
  router.all(GATE_PATH, methodNotAllowed('GET, HEAD'));

  // Errors from the routes above (body-parser's included) become JSON, never express's HTML page.
  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const { status, message } = describeError(err, maxBodyBytes);
    if (status >= 500) log.error('gate request failed', { path: req.path, error: err instanceof Error ? err.message : String(err) });
    else {
      gate.pushRejected();
      log.warn('gate webhook rejected', { reason: message, remote: req.socket.remoteAddress });
    }
    res.status(status).json({ error: message });
  });

  return router;
}

function methodNotAllowed(allow: string) {
  return (req: Request, res: Response): void => {
    res
      .set('Allow', allow)
      .status(405)
      .json({ error: `method ${req.method} not allowed; use ${allow}` });
  };
}

function describeError(err: unknown, maxBodyBytes: number): { status: number; message: string } {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { status?: unknown; statusCode?: unknown; type?: unknown; message?: unknown };
  const raw = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : 500;
  const status = raw >= 400 && raw < 600 ? raw : 500;
  const detail = typeof e.message === 'string' ? e.message : String(err);
  switch (e.type) {
    case 'entity.parse.failed':
      return { status: 400, message: `body is not valid JSON (an Alertmanager webhook object expected): ${detail}` };
    case 'entity.too.large':
      return { status: 413, message: `body exceeds gate.maxBodyBytes (${maxBodyBytes} bytes)` };
    default:
      return { status, message: status >= 500 ? 'internal error handling the gate request' : detail };
  }
}
