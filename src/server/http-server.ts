// The endpoints Prometheus users expect from an exporter: /metrics, /-/healthy, /-/ready and a landing page
// (src/server/landing/: the four signals live).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Router } from 'express';
import type { Registry } from 'prom-client';

export interface HttpOptions {
  registry: Registry;
  telemetryPath: string;
  /** Called before each scrape so window gauges are computed at scrape time. */
  beforeScrape: () => void;
  ready: () => boolean;
  /** Extra routes with their own absolute paths (the load-shedding gate). */
  routers?: Router[];
  /** The landing page and its API (landingRouter); mounted last, so it never shadows the routes above. */
  landing: Router;
}

export function createApp(opts: HttpOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  for (const router of opts.routers ?? []) app.use(router);
  app.get(opts.telemetryPath, async (_req, res) => {
    try {
      opts.beforeScrape();
      const body = await opts.registry.metrics();
      res.type(opts.registry.contentType).send(body);
    } catch (err) {
      res.status(500).type('text/plain').send(`error collecting metrics: ${(err as Error).message}\n`);
    }
  });
  app.get('/-/healthy', (_req, res) => {
    res.type('text/plain').send('zero-plane-exporter is Healthy.\n');
  });
  app.get('/-/ready', (_req, res) => {
    if (opts.ready()) res.type('text/plain').send('zero-plane-exporter is Ready.\n');
    else res.status(503).type('text/plain').send('zero-plane-exporter is not ready.\n');
  });
  app.use(opts.landing);
  return app;
}

/** Parses a Prometheus-style listen address (":9185", "127.0.0.1:0", "[::1]:9185"). */
export function parseListenAddress(address: string): { host: string | undefined; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}

export function listen(app: express.Express, host: string | undefined, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    // No host: all interfaces, IPv6 and IPv4 where the machine has both.
    const server = host === undefined ? app.listen(port) : app.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

export function boundAddress(server: Server): string {
  const a = server.address() as AddressInfo;
  return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}
