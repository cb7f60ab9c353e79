// gzip for what the exporter serves, when the client asks for it (`Accept-Encoding: gzip`; Prometheus sends
// it on every scrape): 50k series are megabytes of text that compress about tenfold. Compression runs on
// libuv's thread pool (zlib's async API), not on the event loop, so health probes do not wait for it.
import { gzip } from 'node:zlib';
import type { RequestHandler, Response } from 'express';

/**
 * zlib level 1 (Go's gzip.BestSpeed): bench/gzip-scrape.mjs measured it at a quarter to a third of the
 * CPU of the default level 6 (50k series: +10 ms per scrape against +40 ms) for a body 3–4 % bigger; a
 * scrape is compressed once and read once, so speed wins.
 */
export const GZIP_LEVEL = 1;
/** Bodies below this are sent as they are: the gzip header and the CPU cost more than they save. */
const GZIP_MIN_BYTES = 1024;

/** Whether an Accept-Encoding header (RFC 9110 12.5.3) accepts gzip: `gzip` or `*` with a q-value above 0. */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  let star: boolean | undefined;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';').map((p) => p.trim());
    const coding = name.toLowerCase();
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    const q = params.map((p) => /^q=([0-9.]+)$/i.exec(p)).find((m) => m !== null);
    const acceptable = q === undefined || q === null ? true : Number(q[1]) > 0;
    if (coding === '*') star = acceptable;
    else return acceptable;
  }
  return star === true;
}

/** `bytes` gzipped on the thread pool. */
export function gzipped(bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => gzip(bytes, { level: GZIP_LEVEL }, (err, out) => (err === null ? resolve(out) : reject(err))));
}

const COMPRESSIBLE = /^(text\/|application\/(json|yaml|x-yaml|javascript|openmetrics-text)|image\/svg\+xml)/i;

/**
 * Middleware: what routes answer with res.send (the landing page, its JSON, the pack and dashboards files)
 * is gzipped when the request accepts it, the body is at least GZIP_MIN_BYTES and of a text type. /metrics
 * writes its own (shared-scrape.ts: one compression shared by every scrape of a render).
 */
export function compressText(): RequestHandler {
  return (req, res, next) => {
    const wants = acceptsGzip(req.get('accept-encoding'));
    const send = res.send.bind(res) as (body?: unknown) => Response;
    res.send = (body?: unknown): Response => {
      const type = res.get('content-type');
      if (type === undefined || !COMPRESSIBLE.test(type) || res.get('content-encoding') !== undefined) return send(body);
      res.vary('Accept-Encoding');
      const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.isBuffer(body) ? body : undefined;
      if (!wants || bytes === undefined || bytes.length < GZIP_MIN_BYTES || res.statusCode === 204 || res.statusCode === 304) return send(body);
      gzipped(bytes).then(
        (out) => {
          if (res.destroyed) return;
          res.set('Content-Encoding', 'gzip');
          // res.send answers a Buffer with Content-Length and an ETag of what it sends (the gzip bytes).
          send(out);
        },
        () => send(body),
      );
      return res;
    };
    next();
  };
}
