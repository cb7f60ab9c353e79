// "A bad escape (/pack/%ff) returns Express' development error page with a stack trace and install
// paths." Again, against the built CLI as users run it: a path whose %-escape does not decode, an unknown
// path and a route that throws each get a short JSON error under /api/ and plain text elsewhere, never a
// stack trace, an HTML page or a path of the installation, and the exporter keeps serving.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import { LoadSheddingGate } from '../../../src/gate/load-shedding-gate.js';
import { buildRegistry } from '../../../src/metrics/registry.js';
import { createApp } from '../../../src/server/http-server.js';
import { landingRouter } from '../../../src/landing/landing-router.js';
import { SignalHistory } from '../../../src/landing/signal-history.js';
import { createLogger } from '../../../src/server/logger.js';
import { startServe, type ServeProcess } from '../../helpers/cli-process.js';

const INSTALL_DIR = fileURLToPath(new URL('../../..', import.meta.url));

/** What an error response must never carry. */
function expectNoLeak(body: string): void {
  expect(body).not.toMatch(/<html|<pre|<!DOCTYPE/i);
  expect(body).not.toMatch(/\n\s+at /); // a stack frame
  expect(body).not.toMatch(/URIError|TypeError|Error:/);
  expect(body).not.toContain(INSTALL_DIR);
  expect(body).not.toContain('node_modules');
  expect(body.length).toBeLessThan(512);
}

describe('errors never show a stack trace or an install path', () => {
  let server: ServeProcess;
  beforeAll(async () => {
    server = await startServe(['--log.level=debug']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each([
    ['/pack/%ff', 400],
    ['/dashboards/%ff', 400],
    ['/pack/%E0%A4%A', 400],
    ['/pack/kubernetes/%ff', 400],
    ['/%ff', 404],
    ['/assets/%ff', 404],
    ['/no/such/page', 404],
  ])('%s: %i in plain text', async (path, status) => {
    const res = await fetch(`${server.url}${path}`);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const body = await res.text();
    expectNoLeak(body);
    expect(body).toMatch(status === 400 ? /^the path holds a %-escape that is not UTF-8\n$/ : /^no such endpoint: GET \//);
  });

  it.each([
    ['/api/v1/gate/%ff', 404],
    ['/api/v1/nope', 404],
    ['/api/v1/signals?since=%ff', 400],
  ])('%s: %i in JSON', async (path, status) => {
    const res = await fetch(`${server.url}${path}`);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.text();
    expectNoLeak(body);
    expect(JSON.parse(body)).toEqual({ error: expect.any(String) });
  });

  it('keeps serving after them', async () => {
    for (const path of ['/pack/%ff', '/%ff', '/api/v1/gate/%ff']) await fetch(`${server.url}${path}`);
    expect((await fetch(`${server.url}/-/healthy`)).status).toBe(200);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
    expect(server.logs.some((l) => l.msg === 'request refused' && l.path === '/pack/%ff' && l.status === 400)).toBe(true);
  });
});

describe('a route that throws', () => {
  let http: Server;
  let url: string;
  const logs: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const config = defaultConfig();
    const broken = express.Router();
    broken.get('/api/v1/broken', () => {
      throw new Error(`cannot open ${INSTALL_DIR}secret.json`);
    });
    broken.get('/broken', (_req, _res, next) => next(new Error(`failed at ${INSTALL_DIR}x.js`)));
    const app = createApp({
      log: createLogger('debug', (line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
      registry: buildRegistry([], 'test'),
      telemetryPath: '/metrics',
      beforeScrape: () => undefined,
      ready: () => true,
      routers: [broken],
      landing: landingRouter({
        config,
        read: () => {
          throw new Error('the window is gone');
        },
        history: new SignalHistory({
          read: () => {
            throw new Error('unused');
          },
          totalRequests: () => 0,
        }),
        gate: new LoadSheddingGate({ pauseLabel: 'priority', pauseValue: 'P0' }),
        version: 'test',
      }),
    });
    http = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });

  it('answers 500 with a short error, JSON under /api/, plain elsewhere, and logs the cause', async () => {
    for (const [path, type] of [
      ['/api/v1/broken', /^application\/json/],
      ['/api/v1/signals', /^application\/json/],
      ['/broken', /^text\/plain/],
    ] as const) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(500);
      expect(res.headers.get('content-type'), path).toMatch(type);
      const body = await res.text();
      expectNoLeak(body);
      expect(body).toMatch(/internal error; the exporter logged the cause/);
    }
    expect(logs.filter((l) => l.level === 'error' && l.msg === 'request failed').map((l) => l.error)).toEqual([
      `cannot open ${INSTALL_DIR}secret.json`,
      'the window is gone',
      `failed at ${INSTALL_DIR}x.js`,
    ]);
  });
});
