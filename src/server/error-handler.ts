// The last two handlers of the app: a 404 for paths nothing answered, and the error handler for whatever
// a route (or Express itself: a bad %-escape in the path, a body parser) passed on. Express' own final
// handler renders an HTML page with the stack trace and install paths outside NODE_ENV=production; these
// answer JSON under /api/ and plain text elsewhere, never a stack, and log what a 5xx hid.
import { STATUS_CODES } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from './logger.js';

/** 404 for a path no route answered. */
export function notFound(req: Request, res: Response): void {
  send(req, res, 404, `no such endpoint: ${req.method} ${safePath(req)}`);
}

/** The production error handler: a status and a short message, the detail only in the log. */
export function errorHandler(log: Logger | undefined) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      // Half a response is out: all that is left is to end the connection (the client sees a cut body).
      log?.error('request failed after its response began', { method: req.method, path: safePath(req), error: err instanceof Error ? err.message : String(err) });
      res.destroy();
      return;
    }
    const { status, message } = describe(err);
    if (status >= 500) log?.error('request failed', { method: req.method, path: safePath(req), error: err instanceof Error ? err.message : String(err) });
    else log?.debug('request refused', { method: req.method, path: safePath(req), status, reason: message });
    send(req, res, status, message);
  };
}

function send(req: Request, res: Response, status: number, message: string): void {
  res.status(status).set({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  if (req.path.startsWith('/api/')) res.json({ error: message });
  else res.type('text/plain').send(`${message}\n`);
}

/**
 * A client error keeps its status, and its message only when it was made for the client (http-errors'
 * `expose`, as body-parser's are): others, such as a file error from sendFile, may name install paths.
 * Anything else is a 500 that says only that it failed.
 */
function describe(err: unknown): { status: number; message: string } {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown };
  const raw = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : 500;
  const status = Number.isInteger(raw) && raw >= 400 && raw < 600 ? raw : 500;
  if (status >= 500) return { status, message: 'internal error; the exporter logged the cause' };
  // Express' router throws a URIError (status 400) for a %-escape that does not decode: /pack/%ff.
  if (err instanceof URIError) return { status, message: 'the path holds a %-escape that is not UTF-8' };
  if (e.expose === true && typeof e.message === 'string') return { status, message: e.message };
  return { status, message: (STATUS_CODES[status] ?? 'request refused').toLowerCase() };
}

/** The path as sent (it may not decode), shortened: it is echoed back and logged. */
function safePath(req: Request): string {
  const path = req.originalUrl.split('?')[0] ?? '';
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}
