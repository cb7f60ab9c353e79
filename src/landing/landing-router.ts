// The landing page and what it reads: GET / (the page), /assets/* (its script and styles, and uPlot
// from node_modules: no CDN, works offline), /api/v1/signals (the four signals now and their history),
// /pack/<file> (the alerting pack rendered from this config) and, in the demo only, /api/v1/demo/faults.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Config } from '../config/schema.js';
import type { GateState, LoadSheddingGate } from '../gate/load-shedding-gate.js';
import { FaultValidationError, type FaultController, type Faults } from '../simulate/faults.js';
import type { SignalValues } from '../windows/summarize.js';
import { ASSET_PATHS, DEMO_FAULTS_PATH, renderLandingPage, SIGNALS_PATH, escapeHtml } from './landing-page.js';
import type { SignalHistory, SignalSample } from './signal-history.js';
import { landingThresholds, verdicts, type LandingThresholds, type Verdicts } from './verdicts.js';

export interface LandingRouterOptions {
  config: Config;
  /** The window's signals now: summarize(window.snapshot(), config.signals). */
  read: () => SignalValues;
  history: SignalHistory;
  gate: LoadSheddingGate;
  version: string;
  /** Only the demo passes its simulator's faults; without them the fault routes answer 404. */
  faults?: FaultController;
  /** Milliseconds since the epoch; tests inject their own. */
  clock?: () => number;
}

export interface SignalsResponse {
  /** Milliseconds since the epoch. */
  now: number;
  window: SignalValues;
  verdicts: Verdicts;
  /** The latest sample's rate (records read per second); null until two samples exist. */
  requestsPerSecond: number | null;
  thresholds: LandingThresholds;
  /** Oldest first; only samples newer than `?since=` when given. */
  history: SignalSample[];
  historySpanSeconds: number;
  historyIntervalSeconds: number;
  gate: GateState;
  demo: boolean;
  /** The simulator's faults in the demo, else null. */
  faults: Faults | null;
}

/** Top-level static/ (beside src/ and dist/): the page's own script and styles. */
const STATIC_DIR = fileURLToPath(new URL('../../static/', import.meta.url));
const UPLOT_DIST = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');

const ASSET_FILES: Record<string, string> = {
  [ASSET_PATHS.uplotJs]: join(UPLOT_DIST, 'uPlot.iife.min.js'),
  [ASSET_PATHS.uplotCss]: join(UPLOT_DIST, 'uPlot.min.css'),
  [ASSET_PATHS.landingJs]: join(STATIC_DIR, 'landing.js'),
  [ASSET_PATHS.landingCss]: join(STATIC_DIR, 'landing.css'),
};

const FAULTS_BODY_LIMIT_BYTES = 16 * 1024;

/** Everything the page loads comes from this origin; the API is fetched from it too. */
const PAGE_CSP = ["default-src 'self'", "img-src 'self' data:", "style-src 'self'", "script-src 'self'", "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join(
  '; ',
);

export function landingRouter(opts: LandingRouterOptions): express.Router {
  const { config, history, gate, faults } = opts;
  const clock = opts.clock ?? Date.now;
  const thresholds = landingThresholds(config);
  const files = lazyFiles(config);
  let page: string | undefined;
  const router = express.Router();

  router.get('/', async (_req, res) => {
    page ??= renderLandingPage({
      version: opts.version,
      telemetryPath: config.web.telemetryPath,
      thresholds,
      packFiles: [...(await files()).pack.keys()],
      demo: faults !== undefined,
    });
    res.set({ 'Content-Security-Policy': PAGE_CSP, 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' }).type('html').send(page);
  });

  for (const [path, file] of Object.entries(ASSET_FILES)) {
    router.get(path, (_req, res, next) => {
      res.sendFile(file, { headers: { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' } }, (err) => {
        if (err !== undefined && !res.headersSent) next(err);
      });
    });
  }

  router.get(SIGNALS_PATH, (req, res) => {
    const since = req.query.since;
    let sinceMs: number | undefined;
    if (since !== undefined) {
      sinceMs = typeof since === 'string' && since.trim() !== '' ? Number(since) : NaN;
      if (!Number.isFinite(sinceMs)) {
        res.status(400).json({ error: 'since: expected milliseconds since the epoch, e.g. ?since=1767225600000' });
        return;
      }
    }
    const window = opts.read();
    const body: SignalsResponse = {
      now: clock(),
      window,
      verdicts: verdicts(window, config.signals),
      requestsPerSecond: history.latest()?.requestsPerSecond ?? null,
      thresholds,
      history: history.samples(sinceMs),
      historySpanSeconds: history.spanMs / 1000,
      historyIntervalSeconds: history.intervalMs / 1000,
      gate: gate.state(),
      demo: faults !== undefined,
      faults: faults?.get() ?? null,
    };
    res.set('Cache-Control', 'no-store').json(body);
  });

  // The pack and the dashboards as this config renders them, so what the page links to matches the
  // running thresholds. File names have folders (kubernetes/…): match the rest of the path, serve only known files.
  for (const prefix of ['/pack', '/dashboards'] as const) {
    const filesUnder = async () => {
      const rendered = await files();
      return prefix === '/pack' ? rendered.pack : rendered.dashboards;
    };
    router.get(`${prefix}/`, async (_req, res) => {
      const links = [...(await filesUnder()).keys()].map((f) => `<li><a href="${prefix}/${escapeHtml(f)}">${escapeHtml(f)}</a></li>`).join('\n');
      res.type('html').send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${prefix.slice(1)}</title></head><body><ul>\n${links}\n</ul></body></html>\n`);
    });
    router.get(`${prefix}/*file`, async (req, res) => {
      const raw: unknown = (req.params as Record<string, unknown>).file;
      const name = Array.isArray(raw) ? raw.join('/') : String(raw);
      const files = await filesUnder();
      const content = files.get(name);
      if (content === undefined) {
        res
          .status(404)
          .type('text/plain')
          .send(`no file "${name}" under ${prefix}/; there are: ${[...files.keys()].join(', ')}\n`);
        return;
      }
      const type = name.endsWith('.json') ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8';
      res.set('Cache-Control', 'no-cache').type(type).send(content);
    });
  }

  if (faults === undefined) {
    router.all(DEMO_FAULTS_PATH, (_req, res) => {
      res.status(404).json({ error: 'fault injection exists only in the demo (`zero-plane-exporter demo`, `npm start`)' });
    });
    return router;
  }

  const json = express.json({ limit: FAULTS_BODY_LIMIT_BYTES, strict: true, type: () => true });
  router.get(DEMO_FAULTS_PATH, (_req, res) => {
    res.set('Cache-Control', 'no-store').json(faults.get());
  });
  // PUT replaces the faults (omitted fields back to 0), as the simulator's /admin/faults does.
  router.put(
    DEMO_FAULTS_PATH,
    json,
    (req: Request, res: Response) => {
      // body-parser turns a zero-length body into {} (which would clear every fault): say what is wrong.
      if (req.body === undefined || req.get('content-length') === '0') {
        res.status(400).json({ error: '(body): empty; expected a JSON object such as {"latencyDriftRatio":0.15,"degradedRate":0.2}' });
        return;
      }
      try {
        res.json(faults.set(req.body));
      } catch (err) {
        if (!(err instanceof FaultValidationError)) throw err;
        res.status(400).json({ error: err.message });
      }
    },
    faultsBodyError,
  );
  router.delete(DEMO_FAULTS_PATH, (_req, res) => {
    res.json(faults.reset());
  });
  router.all(DEMO_FAULTS_PATH, (req, res) => {
    res
      .set('Allow', 'GET, PUT, DELETE')
      .status(405)
      .json({ error: `method ${req.method} not allowed; use GET, PUT or DELETE` });
  });
  return router;
}

interface RenderedFiles {
  pack: Map<string, string>;
  dashboards: Map<string, string>;
}

/**
 * The pack and the dashboards as `config` renders them, made on the first request that needs them and
 * kept: their generators (yaml, the Grafana SDK) are ~12 MiB of RSS that an exporter which is only
 * scraped never needs (serve idle ~94 → ~80 MiB). A failed attempt is not kept: the next request tries again.
 */
function lazyFiles(config: Config): () => Promise<RenderedFiles> {
  let rendered: Promise<RenderedFiles> | undefined;
  return () =>
    (rendered ??= Promise.all([import('../pack/render-pack.js'), import('../dashboards/render-dashboards.js')])
      .then(([pack, dashboards]) => ({ pack: pack.renderPack(config), dashboards: dashboards.renderDashboards(config) }))
      .catch((err: unknown) => {
        rendered = undefined;
        throw err;
      }));
}

/** body-parser failures on the faults PUT, as JSON rather than express's HTML page. */
function faultsBodyError(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) return next(err);
  const e = (typeof err === 'object' && err !== null ? err : {}) as { type?: unknown; message?: unknown; status?: unknown };
  if (e.type === 'entity.parse.failed') {
    res.status(400).json({ error: `body is not valid JSON: ${String(e.message)}` });
  } else if (e.type === 'entity.too.large') {
    res.status(413).json({ error: `body exceeds ${FAULTS_BODY_LIMIT_BYTES} bytes` });
  } else if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    res.status(e.status).json({ error: String(e.message) });
  } else {
    next(err);
  }
}
