// GET /probe?module=NAME&target=URL on `serve`: Prometheus' multi-target pattern (docs/probe.md), as
// blackbox_exporter answers it. 400 for a module or target the request may not use, 429 when the hour's
// budget is spent with no result to give again, 500 when the module cannot probe (no key, no SDK).
import express, { type Request, type Response } from 'express';
import { ProbeBudgetExhausted } from './probe-limiter.js';
import { EXPOSITION_CONTENT_TYPE, probeExposition } from './probe-exposition.js';
import { ProbeSetupError } from './probe-request.js';
import { ProbeParamError, type Prober } from './prober.js';
import { SdkMissingError } from './sdk.js';

export const PROBE_PATH = '/probe';

/** The logger's shape (server/logger.ts ranks above this room). */
export interface ProbeLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const single = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function probeRouter(prober: Prober, log: ProbeLog): express.Router {
  const router = express.Router();
  router.get(PROBE_PATH, async (req: Request, res: Response) => {
    const text = (status: number, body: string) => res.status(status).set('Cache-Control', 'no-store').type('text/plain').send(`${body}\n`);
    const moduleParam = req.query.module;
    const targetParam = req.query.target;
    if (
      Array.isArray(moduleParam) ||
      Array.isArray(targetParam) ||
      (moduleParam !== undefined && single(moduleParam) === undefined) ||
      (targetParam !== undefined && single(targetParam) === undefined)
    ) {
      text(400, 'give module and target at most once each');
      return;
    }
    let resolved;
    try {
      resolved = prober.resolve(single(moduleParam), single(targetParam));
    } catch (err) {
      if (!(err instanceof ProbeParamError)) throw err;
      text(400, err.message);
      return;
    }
    try {
      const limited = await prober.probe(resolved);
      const r = limited.result;
      if (!limited.reused) {
        (r.success ? log.info : log.warn).call(log, 'probe', {
          module: r.module,
          target: r.target,
          success: r.success,
          status: r.httpStatus ?? undefined,
          layer: r.layerId ?? undefined,
          seconds: r.durationSeconds,
          error: r.error ?? undefined,
        });
        for (const w of r.warnings) log.warn(w, { module: r.module });
      }
      res.status(200).set('Cache-Control', 'no-store').type(EXPOSITION_CONTENT_TYPE).send(probeExposition(limited));
    } catch (err) {
      if (err instanceof ProbeBudgetExhausted) {
        res.set('Retry-After', String(err.retryAfterSeconds));
        text(429, err.message);
      } else if (err instanceof ProbeSetupError || err instanceof SdkMissingError) {
        log.error('probe cannot run', { module: resolved.name, error: err.message });
        text(500, err.message);
      } else throw err;
    }
  });
  return router;
}
