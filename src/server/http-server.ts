// The endpoints Prometheus users expect from an exporter: /metrics, /-/healthy, /-/ready and a landing page
// (src/landing/: the four signals live), over HTTP or, with --web.config.file, HTTPS (and HTTP/2),
// on each --web.listen-address or on the sockets systemd passed.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createSecureServer as createHttp2SecureServer } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import express, { type RequestHandler, type Response, type Router } from 'express';
import { prefersOpenMetrics, type MetricsEndpoint } from '../metrics/registry.js';
import { AcceptFirst, probesFirst, watchAccepts } from './accept-first.js';
import { acceptsGzip, compressText } from './compression.js';
import { errorHandler, notFound } from './error-handler.js';
import { answerClientError, HTTP2_MAX_HEADER_LIST_SIZE } from './header-limits.js';
import { http2Dispatch } from './http2-bridge.js';
import type { Logger } from './logger.js';
import type { CounterFamily } from '../metrics/families.js';
import { SharedScrape, type RenderedBody } from './shared-scrape.js';
import { clientCertificateProblem, type TlsSettings } from './web-config.js';

export interface HttpOptions {
  /** Where the error handler logs what a 5xx hid from the client. */
  log?: Logger;
  /** Runs first, before headers and auth, for every request (`rate_limit`, as in the exporter toolkit). */
  limiter?: RequestHandler;
  /** Response headers set on every response (`http_server_config.headers`). */
  headers?: Readonly<Record<string, string>>;
  /** Runs before every route, unknown paths included (basic auth). */
  guard?: RequestHandler;
  registry: MetricsEndpoint;
  telemetryPath: string;
  /** Called before each render of /metrics so window gauges are computed at scrape time. */
  beforeScrape: () => void;
  /**
   * Scrapes of /metrics answered at once (--web.max-requests, as node_exporter's); past it a scrape gets 503
   * at once. 0 = no limit. Other endpoints are not counted: health probes are never refused by it.
   */
  maxRequests?: number;
  /** zero_plane_exporter_scrapes_total{result} (scrapeCounter()), when /metrics shows it. */
  scrapes?: CounterFamily;
  ready: () => boolean;
  /**
   * When set and false, /metrics answers 503 (a failed scrape, not samples): after a restart from a
   * checkpoint, until the lines counted before it are counted again, so Prometheus never sees a counter
   * go down.
   */
  scrapeReady?: () => boolean;
  /** Extra routes with their own absolute paths (the load-shedding gate). */
  routers?: Router[];
  /** The landing page and its API (landingRouter); mounted last, so it never shadows the routes above. */
  landing: Router;
}

export function createApp(opts: HttpOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETag: it is a SHA-1 of every body sent, health probes and refusals included, and no scraper or
  // probe sends If-None-Match (Go's exporters send none either).
  app.set('etag', false);
  if (opts.limiter !== undefined) app.use(opts.limiter);
  const headers = opts.headers;
  if (headers !== undefined && Object.keys(headers).length > 0) {
    app.use((_req, res, next) => {
      res.set(headers);
      next();
    });
  }
  if (opts.guard !== undefined) app.use(opts.guard);
  // After the guard: a 401 or 429 is not worth compressing, and a flood's answers must stay cheap.
  app.use(compressText());
  // Health and readiness first: no router, limiter or render stands before them.
  app.get('/-/healthy', (_req, res) => {
    res.type('text/plain').send('zero-plane-exporter is Healthy.\n');
  });
  app.get('/-/ready', (_req, res) => {
    if (opts.ready()) res.type('text/plain').send('zero-plane-exporter is Ready.\n');
    else res.status(503).type('text/plain').send('zero-plane-exporter is not ready.\n');
  });
  for (const router of opts.routers ?? []) app.use(router);
  const shared = new SharedScrape(opts.registry, opts.beforeScrape, opts.scrapes);
  const maxRequests = opts.maxRequests ?? 0;
  let inFlight = 0;
  const refusedBody = Buffer.from(`too many concurrent scrapes: ${maxRequests} are being answered (--web.max-requests); retry\n`);
  app.get(opts.telemetryPath, async (req, res) => {
    if (maxRequests > 0 && inFlight >= maxRequests) {
      opts.scrapes?.inc(['refused']);
      // Written as it is (no res.send): in a flood this answer is most of the requests, and what each costs
      // is what a health probe read among them waits for.
      res
        .status(503)
        .set({ 'Retry-After': '1', 'Cache-Control': 'no-store', 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(refusedBody.length) })
        .end(refusedBody);
      return;
    }
    // Counted until the response is done or the client is gone, however it ends.
    inFlight++;
    res.once('close', () => inFlight--);
    if (opts.scrapeReady !== undefined && !opts.scrapeReady()) {
      res.status(503).type('text/plain').send('zero-plane-exporter is catching up from its checkpoint; metrics are held back until then.\n');
      return;
    }
    // OpenMetrics 1.0 when the scraper asks for it (Prometheus does by default), else the text format.
    const format = prefersOpenMetrics(req.get('accept')) ? 'openmetrics' : 'text';
    // gzip when asked (Prometheus always asks): one compression per render, shared like the render.
    const encoding = acceptsGzip(req.get('accept-encoding')) ? 'gzip' : 'identity';
    res.vary('Accept');
    res.vary('Accept-Encoding');
    let body: RenderedBody;
    try {
      body = await shared.body(format, encoding);
    } catch (err) {
      opts.log?.error('collecting metrics failed', { error: (err as Error).message });
      res
        .status(500)
        .type('text/plain')
        .send(`error collecting metrics: ${(err as Error).message}\n`);
      return;
    }
    if (encoding === 'gzip') res.set('Content-Encoding', 'gzip');
    await writeBody(res, opts.registry.contentTypeOf(format), body);
  });
  app.use(opts.landing);
  app.use(notFound);
  app.use(errorHandler(opts.log));
  return app;
}

/**
 * Milliseconds of body writing per turn of the event loop, for all responses together. Each response used
 * to hand the loop back after every piece, but every one of them did so in the same check phase: 40
 * responses wrote 40 pieces (2.5 MB into the kernel) before the loop polled again, and a health probe
 * read meanwhile waited for all of them. Now the pieces are written round robin until this budget is
 * spent, then the loop polls (probes, new connections) before the next turn.
 */
export const WRITE_TURN_MS = 2;

/** Responses waiting to write their next piece, served round robin within WRITE_TURN_MS per turn. */
class WriteTurns {
  private waiting: (() => void)[] = [];
  private scheduled = false;
  /** Connections still being accepted go first: one is accepted per turn of the loop (accept-first.ts). */
  private readonly acceptFirst = new AcceptFirst();

  queue(step: () => void): void {
    this.waiting.push(step);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.turn());
    }
  }

  private turn(): void {
    this.scheduled = false;
    if (this.acceptFirst.shouldDefer()) {
      this.scheduled = true;
      setImmediate(() => this.turn());
      return;
    }
    const steps = this.waiting;
    this.waiting = [];
    const t0 = performance.now();
    let i = 0;
    // At least one step per turn, so a slow machine still makes progress.
    do (steps[i++] as () => void)();
    while (i < steps.length && performance.now() - t0 < WRITE_TURN_MS);
    // Those not served this turn go first next turn, before the steps the served ones queued again.
    if (i < steps.length) this.waiting = [...steps.slice(i), ...this.waiting];
    if (this.waiting.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.turn());
    }
  }
}

const writeTurns = new WriteTurns();

/**
 * Writes a body piece by piece, waiting whenever the socket's buffer is full, so a slow reader queues at
 * most one piece of its own (the pieces are shared with the other scrapes of the same render). Content-Length
 * is sent, as res.send would, so the client knows the body is whole. Responses written together take turns,
 * a piece each, within WRITE_TURN_MS per turn of the event loop (WriteTurns).
 */
function writeBody(res: Response, contentType: string, body: RenderedBody): Promise<void> {
  res.status(200).type(contentType).set('Content-Length', String(body.bytes));
  return new Promise<void>((resolve) => {
    let next = 0;
    const step = (): void => {
      if (res.destroyed) return resolve();
      const piece = body.pieces[next++];
      if (piece === undefined) {
        res.end();
        return resolve();
      }
      // On loopback the kernel takes megabytes without blocking: the turn is handed on after every piece.
      if (res.write(piece)) return writeTurns.queue(step);
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        writeTurns.queue(step);
      };
      res.on('drain', done);
      res.on('close', done);
    };
    writeTurns.queue(step);
  });
}

export function listen(app: express.Express, host: string | undefined, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    // No host: all interfaces, IPv6 and IPv4 where the machine has both.
    const server = host === undefined ? app.listen(port) : app.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

export function boundAddress(server: NetServer): string {
  const a = server.address();
  // A unix socket systemd passed has a path, not a port.
  return typeof a === 'string' ? `unix:${a}` : a === null ? 'unknown' : addressOf(a);
}

function addressOf(a: AddressInfo): string {
  return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}

/** Where a server listens: a host and port (no host: every interface), or a descriptor systemd passed. */
export type Endpoint = { host: string | undefined; port: number } | { fd: number };

/** TLS and HTTP/2 for the web servers (from --web.config.file); none = plain HTTP/1.1. */
export interface WebTransport {
  tls?: TlsSettings;
  /** Offer HTTP/2 by ALPN (TLS only, as in the exporter toolkit). */
  http2?: boolean;
}

/** A listening web server, plain or TLS. */
export interface WebServer {
  scheme: 'http' | 'https';
  /** HOST:PORT as bound ("[::]:9185", "127.0.0.1:41234"), or unix:PATH. */
  address: string;
  close(): Promise<void>;
}

/** A client that sends nothing at all is dropped after this long (the TLS handshake's own timeout). */
const FIRST_BYTE_TIMEOUT_MS = 120_000;
const TLS_HANDSHAKE = 0x16;
/** What Go's net/http answers a plain-HTTP request on a TLS port, so Prometheus shows a 400 that says why. */
const PLAIN_HTTP_ON_TLS_PORT = 'Client sent an HTTP request to an HTTPS server.\n';

function listenOn(server: NetServer, at: Endpoint): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.removeListener('error', reject);
      resolve();
    };
    if ('fd' in at) server.listen({ fd: at.fd }, done);
    // No host: all interfaces, IPv6 and IPv4 where the machine has both.
    else if (at.host === undefined) server.listen(at.port, done);
    else server.listen(at.port, at.host, done);
  });
}

/** Serves `app` at `at` over HTTP, or over HTTPS (with HTTP/2 unless turned off) when `transport.tls` is given. */
export async function listenWeb(app: express.Express, at: Endpoint, transport: WebTransport, log: Logger): Promise<WebServer> {
  const tls = transport.tls;
  if (tls === undefined) {
    const server = createHttpServer(probesFirst<IncomingMessage, ServerResponse>(app));
    watchAccepts(server);
    server.on('clientError', answerClientError);
    await listenOn(server, at);
    server.on('error', (err) => log.error('listener error', { error: err.message }));
    return {
      scheme: 'http',
      address: boundAddress(server),
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  }

  const secure =
    transport.http2 === true
      ? createHttp2SecureServer({ ...tls.options, allowHTTP1: true, settings: { maxHeaderListSize: HTTP2_MAX_HEADER_LIST_SIZE } }, probesFirst(http2Dispatch(app)))
      : createHttpsServer(tls.options, probesFirst<IncomingMessage, ServerResponse>(app));
  // HTTP/1.1 requests on either (the HTTP/2 server's allowHTTP1 included).
  secure.on('clientError', answerClientError);
  // A failed handshake (wrong CA, no client certificate, garbage, a TLS version or cipher refused) is the
  // client's problem: logged at debug, the connection dropped; never a crash or a stack trace.
  secure.on('tlsClientError', (err: Error, socket: TLSSocket) => {
    log.debug('TLS handshake failed', { error: err.message, remote: socket.remoteAddress });
    socket.destroy();
  });
  secure.on('secureConnection', (socket: TLSSocket) => {
    const problem = clientCertificateProblem(tls, { authorized: socket.authorized, certificate: socket.getPeerCertificate() });
    if (problem === undefined) return;
    log.debug('TLS client refused', { reason: problem, remote: socket.remoteAddress });
    socket.destroy();
  });

  // The port is a plain TCP server that looks at the first byte: a TLS handshake goes on to the HTTPS
  // server; a plain HTTP request gets a 400 saying so, instead of a reset that looks like a network fault.
  const sockets = new Set<Socket>();
  const front = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', (err) => log.debug('connection error', { error: err.message, remote: socket.remoteAddress }));
    socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE || !isUpperAsciiLetter(first[0])) {
        // The TLS socket reads what is buffered first, the unshifted bytes included.
        secure.emit('connection', socket);
        return;
      }
      log.debug('plain HTTP request on the TLS port refused', { remote: socket.remoteAddress });
      const body = PLAIN_HTTP_ON_TLS_PORT;
      socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      socket.resume();
      socket.setTimeout(5_000, () => socket.destroy());
    });
  });
  watchAccepts(front);
  await listenOn(front, at);
  front.on('error', (err) => log.error('listener error', { error: err.message }));
  return {
    scheme: 'https',
    address: boundAddress(front),
    close: () =>
      new Promise<void>((resolve) => {
        front.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        if ('closeAllConnections' in secure) secure.closeAllConnections();
        // Never listening itself; closing stops its timers.
        secure.close(() => undefined);
      }),
  };
}

function isUpperAsciiLetter(byte: number | undefined): boolean {
  return byte !== undefined && byte >= 0x41 && byte <= 0x5a;
}
