// `http_server_config.http2`: Express over node:http2's compatibility API. Express swaps each request's
// prototype for its own, built on http.IncomingMessage / ServerResponse, which breaks an HTTP/2 request
// (its stream is elsewhere). The same methods on prototypes built on Http2ServerRequest / Response let
// the one app, its routes and middleware serve both protocols.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type express from 'express';
import { headerBytes, MAX_REQUEST_HEADER_BYTES } from './header-limits.js';

type Handle = (req: unknown, res: unknown) => void;

/** A request listener for http2.createSecureServer({ allowHTTP1: true }): HTTP/2 and HTTP/1.1 requests alike. */
export function http2Dispatch(app: express.Express): (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void {
  const rebase = (methods: object, base: object, name: 'request' | 'response') =>
    Object.create(Object.create(base, Object.getOwnPropertyDescriptors(methods)), {
      app: { configurable: true, enumerable: true, writable: true, value: app },
      [Symbol.toStringTag]: { value: `express http2 ${name}` },
    }) as object;
  // A view of the app whose request/response prototypes are the HTTP/2 ones; routes and settings are the app's.
  const view = Object.create(app, {
    request: { value: rebase(Object.getPrototypeOf(app.request) as object, Http2ServerRequest.prototype, 'request') },
    response: { value: rebase(Object.getPrototypeOf(app.response) as object, Http2ServerResponse.prototype, 'response') },
  }) as express.Express;
  // `handle` is Express's own entry point (what app(req, res) calls); its typings leave it out.
  const handle = (app as unknown as { handle: Handle }).handle;
  return (req, res) => {
    if (req.httpVersionMajor === 2) {
      // The same limit as HTTP/1.1's parser, answered the same way (header-limits.ts).
      if (headerBytes(req.rawHeaders) > MAX_REQUEST_HEADER_BYTES) {
        res.writeHead(431, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`request header fields too large: request headers above ${MAX_REQUEST_HEADER_BYTES} bytes\n`);
        return;
      }
      handle.call(view, req, res);
    } else app(req as IncomingMessage, res as ServerResponse);
  };
}
