// The landing page's server side, in-process on loopback: /api/v1/signals, the assets, the pack links and
// the demo-only fault routes, plus the history sampler and the verdicts they rest on.
import type { Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema, defaultConfig, type Config } from '../../../src/config/schema.js';
import { LoadSheddingGate } from '../../../src/gate/load-shedding-gate.js';
import { buildRegistry } from '../../../src/metrics/registry.js';
import { renderDashboards } from '../../../src/dashboards/render-dashboards.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { Pipeline } from '../../../src/pipeline.js';
import { boundAddress, createApp, listen } from '../../../src/server/http-server.js';
import { renderLandingPage } from '../../../src/landing/landing-page.js';
import { landingRouter, type SignalsResponse } from '../../../src/landing/landing-router.js';
import { SignalHistory } from '../../../src/landing/signal-history.js';
import { landingThresholds, verdicts } from '../../../src/landing/verdicts.js';
import { FaultController } from '../../../src/simulate/faults.js';
import { summarize, type SignalValues } from '../../../src/windows/summarize.js';

function line(f: { latencyMs: number; hit?: boolean; degraded?: boolean; warmup?: 'hit' | 'miss' }): string {
  const res: Record<string, string> = { 'x-anthropic-layer-id': f.hit === false ? 'standard-v3' : 'zero-plane-v1' };
  const profile = [f.warmup ? `warmup=${f.warmup}` : '', f.degraded ? 'degraded' : ''].filter(Boolean).join(', ');
  if (profile) res['x-anthropic-delay-profile'] = profile;
  return JSON.stringify({ ts: Date.now() / 1000, latency_ms: f.latencyMs, status: 200, model: 'claude-zp', route: '/v1/messages', response_headers: res });
}

interface TestApp {
  url: string;
  pipeline: Pipeline;
  history: SignalHistory;
  faults: FaultController | undefined;
  close(): Promise<void>;
}

const open: TestApp[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((a) => a.close()));
});

/** The exporter's HTTP side as serve-command wires it, on 127.0.0.1:0, with a history we sample by hand. */
async function startApp(opts: { demo?: boolean; config?: Config } = {}): Promise<TestApp> {
  const config = opts.config ?? defaultConfig();
  const pipeline = new Pipeline(config);
  const gate = new LoadSheddingGate({ pauseLabel: 'priority', pauseValue: 'P0' });
  const read = () => summarize(pipeline.window.snapshot(), config.signals);
  const history = new SignalHistory({ read, totalRequests: () => pipeline.metrics.requests.sum() });
  const faults = opts.demo ? new FaultController() : undefined;
  const app = createApp({
    registry: buildRegistry(pipeline.metrics.families(), 'test'),
    telemetryPath: config.web.telemetryPath,
    beforeScrape: () => undefined,
    ready: () => true,
    landing: landingRouter({ config, read, history, gate, version: '9.9.9-test', faults }),
  });
  const server: Server = await listen(app, '127.0.0.1', 0);
  const t: TestApp = {
    url: `http://${boundAddress(server)}`,
    pipeline,
    history,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  open.push(t);
  return t;
}

async function get(url: string): Promise<Response> {
  return fetch(url, { signal: AbortSignal.timeout(5_000) });
}

async function signals(app: TestApp, query = ''): Promise<SignalsResponse> {
  const res = await get(`${app.url}/api/v1/signals${query}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/json');
  expect(res.headers.get('cache-control')).toBe('no-store');
  return (await res.json()) as SignalsResponse;
}

describe('GET /api/v1/signals', () => {
  it('says "no data" for an empty window, never healthy', async () => {
    const app = await startApp();
    const s = await signals(app);
    expect(s.window.requests).toBe(0);
    expect(s.window.hitRate).toBeNull();
    expect(s.verdicts).toEqual({ hitRate: 'nodata', p99Drift: 'nodata', degraded: 'nodata', warmupEfficiency: 'nodata', p0: false });
    expect(s.thresholds).toEqual({
      fastTarget: 0.12,
      floor: 0.17575,
      baseline: 0.185,
      ceiling: 0.19425,
      tolerance: 0.05,
      hitRateTarget: 0.994,
      warmupEfficiencyTarget: 0.88,
      windowSeconds: 300,
    });
    expect(s.gate).toMatchObject({ pauseNonCore: false, since: null, alertCount: 0, alerts: [] });
    expect(s.demo).toBe(false);
    expect(s.faults).toBeNull();
    expect(s.history).toEqual([]);
    expect(s.requestsPerSecond).toBeNull();
    expect(s.historySpanSeconds).toBe(600);
    expect(s.historyIntervalSeconds).toBe(2);
    expect(Math.abs(s.now - Date.now())).toBeLessThan(5_000);
  });

  it('judges the window: healthy traffic, then drift with degraded requests is the P0', async () => {
    const app = await startApp();
    for (let i = 0; i < 200; i++) app.pipeline.line(line({ latencyMs: 180 + (i % 5), warmup: i % 10 === 0 ? 'miss' : 'hit' }), 'test');
    let s = await signals(app);
    expect(s.window.requests).toBe(200);
    expect(s.window.hitRate).toBe(1);
    expect(s.window.warmupEfficiency).toBeCloseTo(0.9, 12);
    expect(s.verdicts).toEqual({ hitRate: 'healthy', p99Drift: 'healthy', degraded: 'healthy', warmupEfficiency: 'healthy', p0: false });

    // 10 % of requests 15 % slow (p99 above the ceiling), 3 degraded, 2 fallbacks (hit rate < 99.4 %).
    for (let i = 0; i < 20; i++) app.pipeline.line(line({ latencyMs: 213, warmup: 'hit', degraded: i < 3 }), 'test');
    for (let i = 0; i < 2; i++) app.pipeline.line(line({ latencyMs: 300, hit: false }), 'test');
    s = await signals(app);
    expect(s.window.degradedCount).toBe(3);
    expect(s.window.p99Seconds as number).toBeGreaterThan(0.19425);
    expect(s.verdicts).toEqual({ hitRate: 'unhealthy', p99Drift: 'unhealthy', degraded: 'unhealthy', warmupEfficiency: 'healthy', p0: true });
  });

  it('returns the sampled history, only newer samples with ?since=, and 400 on a bad since', async () => {
    const app = await startApp();
    const first = app.history.sample();
    for (let i = 0; i < 10; i++) app.pipeline.line(line({ latencyMs: 180 }), 'test');
    await new Promise((r) => setTimeout(r, 20));
    const second = app.history.sample();
    expect(second.t).toBeGreaterThan(first.t);
    expect(second.windowRequests).toBe(10);
    expect(second.requestsPerSecond as number).toBeGreaterThan(0);

    const all = await signals(app);
    expect(all.history.map((h) => h.t)).toEqual([first.t, second.t]);
    expect(all.history[1]).toEqual(second);
    expect(all.requestsPerSecond).toBe(second.requestsPerSecond);
    const newer = await signals(app, `?since=${first.t}`);
    expect(newer.history).toEqual([second]);
    expect((await signals(app, `?since=${second.t}`)).history).toEqual([]);

    for (const bad of ['abc', '', '1e400']) {
      const res = await get(`${app.url}/api/v1/signals?since=${bad}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^since: /);
    }
  });
});

describe('GET / (the page) and its assets', () => {
  it('serves the page: four tiles with units, links to metrics, health, gate, pack and dashboards; no demo control', async () => {
    const config = configSchema.parse({ web: { telemetryPath: '/zp-metrics' } });
    const app = await startApp({ config });
    const res = await get(`${app.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const html = await res.text();
    for (const id of ['hit-rate', 'p99-drift', 'degraded', 'warmup-efficiency']) {
      expect(html).toContain(`data-testid="tile-${id}" data-state="nodata"`);
    }
    expect(html).toMatch(/<h1>zero-plane-exporter<\/h1>/);
    expect(html).toContain('Band 175.75 ms – 194.25 ms (baseline 185 ms ± 5 %)');
    expect(html).toContain('Target ≥ 99.4 %');
    expect(html).toContain('Target ≥ 88.0 %');
    for (const href of ['/zp-metrics', '/-/healthy', '/-/ready', '/api/v1/gate', '/api/v1/signals', '/dashboards/']) {
      expect(html).toContain(`href="${href}"`);
    }
    for (const file of renderPack(config).keys()) expect(html).toContain(`href="/pack/${file}"`);
    // Everything from this origin: no CDN, no absolute URL anywhere in the page.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    for (const asset of ['/assets/uplot.min.js', '/assets/uPlot.min.css', '/assets/landing.js', '/assets/landing.css']) {
      expect(html).toContain(asset);
    }
    expect(html).not.toContain('data-testid="demo-controls"');
    expect(html).toContain('data-faults=""');
    expect(html).toContain('9.9.9-test');
    // The old routes are still there, beside the page.
    expect((await get(`${app.url}/zp-metrics`)).status).toBe(200);
    expect((await get(`${app.url}/-/healthy`)).status).toBe(200);
  });

  it('escapes what it renders from the config', () => {
    const html = renderLandingPage({
      version: '1<script>',
      telemetryPath: '/m"><script>alert(1)</script>',
      thresholds: landingThresholds(defaultConfig()),
      packFiles: ['a&b.yml'],
      demo: false,
    });
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('1<script>');
    expect(html).toContain('href="/m&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;"');
    expect(html).toContain('href="/pack/a&#38;b.yml"');
  });

  it('serves uPlot from node_modules and the page script and styles from static/', async () => {
    const app = await startApp();
    const cases = [
      ['/assets/uplot.min.js', /javascript/, 'var uPlot=function', new URL('../../../node_modules/uplot/dist/uPlot.iife.min.js', import.meta.url)],
      ['/assets/uPlot.min.css', /text\/css/, '.uplot', new URL('../../../node_modules/uplot/dist/uPlot.min.css', import.meta.url)],
      ['/assets/landing.js', /javascript/, '/api/v1/signals', new URL('../../../static/landing.js', import.meta.url)],
      ['/assets/landing.css', /text\/css/, '.tile', new URL('../../../static/landing.css', import.meta.url)],
    ] as const;
    for (const [path, type, snippet, file] of cases) {
      const res = await get(`${app.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(type);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      const text = await res.text();
      expect(text, path).toContain(snippet);
      expect(text, path).toBe(readFileSync(file, 'utf8'));
    }
    expect((await get(`${app.url}/assets/nope.js`)).status).toBe(404);
    expect((await get(`${app.url}/assets/../package.json`)).status).toBe(404);
  });

  it('serves every pack file the page links, as rendered from the config, and 404 for anything else', async () => {
    const config = configSchema.parse({ signals: { baselineSeconds: 0.2 } });
    const app = await startApp({ config });
    for (const [file, content] of renderPack(config)) {
      const res = await get(`${app.url}/pack/${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type'), file).toContain('text/plain');
      expect(await res.text(), file).toBe(content);
    }
    expect(await (await get(`${app.url}/pack/zero-plane.rules.yml`)).text()).toContain('0.21'); // 0.2 × 1.05: this config's ceiling
    for (const path of ['/pack/nope.yml', '/pack/kubernetes', '/pack/%2e%2e/package.json', '/dashboards/nope.json']) {
      expect((await get(`${app.url}${path}`)).status, path).toBe(404);
    }
    // The dashboards too, rendered from the same config, and an index of each folder.
    for (const [file, content] of renderDashboards(config)) {
      const res = await get(`${app.url}/dashboards/${file}`);
      expect(res.status, file).toBe(200);
      expect(await res.text(), file).toBe(content);
    }
    const index = await (await get(`${app.url}/dashboards/`)).text();
    expect(index).toContain('href="/dashboards/zero-plane-overview.json"');
    expect(await (await get(`${app.url}/pack/`)).text()).toContain('href="/pack/zero-plane.rules.yml"');
  });
});

describe('/api/v1/demo/faults', () => {
  it('is 404 outside the demo, for every method', async () => {
    const app = await startApp();
    for (const method of ['GET', 'PUT', 'DELETE', 'POST']) {
      const res = await fetch(`${app.url}/api/v1/demo/faults`, {
        method,
        ...(method === 'PUT' ? { body: '{"degradedRate":0.2}', headers: { 'content-type': 'application/json' } } : {}),
      });
      expect(res.status, method).toBe(404);
      expect(((await res.json()) as { error: string }).error, method).toContain('only in the demo');
    }
  });

  it('in the demo: GET reads, PUT replaces, DELETE clears, and the page shows the control', async () => {
    const app = await startApp({ demo: true });
    const faults = app.faults as FaultController;
    const url = `${app.url}/api/v1/demo/faults`;
    const zero = { latencyDriftRatio: 0, degradedRate: 0, warmupEfficiencyDrop: 0, hitRateDrop: 0 };
    expect(await (await get(url)).json()).toEqual(zero);

    const put = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ latencyDriftRatio: 0.15, degradedRate: 0.2 }) });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ ...zero, latencyDriftRatio: 0.15, degradedRate: 0.2 });
    expect(faults.get()).toEqual({ ...zero, latencyDriftRatio: 0.15, degradedRate: 0.2 });
    // PUT replaces: omitted fields go back to 0.
    await fetch(url, { method: 'PUT', body: JSON.stringify({ hitRateDrop: 0.1 }) });
    expect(faults.get()).toEqual({ ...zero, hitRateDrop: 0.1 });

    const s = await signals(app);
    expect(s.demo).toBe(true);
    expect(s.faults).toEqual({ ...zero, hitRateDrop: 0.1 });

    const del = await fetch(url, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual(zero);
    expect(faults.get()).toEqual(zero);

    const html = await (await get(`${app.url}/`)).text();
    expect(html).toContain('data-testid="demo-controls"');
    expect(html).toContain('data-testid="inject-faults"');
    expect(html).toContain('data-faults="/api/v1/demo/faults"');

    const post = await fetch(url, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, PUT, DELETE');
  });

  it('answers 400 with JSON naming the field for bad values, and changes nothing', async () => {
    const app = await startApp({ demo: true });
    const faults = app.faults as FaultController;
    faults.set({ degradedRate: 0.5 });
    const url = `${app.url}/api/v1/demo/faults`;
    const cases: [string, RegExp][] = [
      [JSON.stringify({ degradedRate: 2 }), /^degradedRate: /],
      [JSON.stringify({ latencyDriftRatio: 'fast' }), /^latencyDriftRatio: /],
      [JSON.stringify({ hitRateDrop: -0.1 }), /^hitRateDrop: /],
      [JSON.stringify({ bogus: 1 }), /bogus/],
      [JSON.stringify([1, 2]), /^\(body\): /],
      ['{not json', /^body is not valid JSON/],
      ['', /^\(body\): /],
    ];
    for (const [body, error] of cases) {
      const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
      expect(res.status, body).toBe(400);
      expect(res.headers.get('content-type'), body).toContain('application/json');
      expect(((await res.json()) as { error: string }).error, body).toMatch(error);
    }
    expect(faults.get().degradedRate).toBe(0.5);
  });
});

describe('SignalHistory', () => {
  const values = (requests: number): SignalValues => ({
    requests,
    hits: requests,
    hitRate: requests === 0 ? null : 1,
    p50Seconds: 0.18,
    p99Seconds: 0.185,
    p999Seconds: 0.19,
    stddevSeconds: 0.001,
    p99Drift: 0,
    degradedCount: 0,
    warmupEfficiency: 0.9,
  });

  it('derives the request rate from the change in total requests and keeps only the last span', () => {
    let now = 1_000_000;
    let total = 0;
    const h = new SignalHistory({ read: () => values(total), totalRequests: () => total, intervalMs: 2_000, spanMs: 10_000, clock: () => now });
    expect(h.latest()).toBeUndefined();
    expect(h.sample().requestsPerSecond).toBeNull();
    for (let i = 1; i <= 20; i++) {
      now += 2_000;
      total += 80; // 40/s
      const s = h.sample();
      expect(s.requestsPerSecond).toBe(40);
      expect(s.windowRequests).toBe(total);
    }
    const kept = h.samples();
    // Samples at now−10 s … now: six of them, oldest first.
    expect(kept.map((s) => s.t)).toEqual([-10_000, -8_000, -6_000, -4_000, -2_000, 0].map((d) => now + d));
    expect(h.samples(now - 3_000).map((s) => s.t)).toEqual([now - 2_000, now]);
    expect(h.latest()?.t).toBe(now);
    // Time passes with no sample: old samples drop out of what is returned.
    now += 7_000;
    expect(h.samples().map((s) => s.t)).toEqual([now - 9_000, now - 7_000]);
  });

  it('samples at start and on its interval, and stops', async () => {
    let total = 0;
    const h = new SignalHistory({ read: () => values(total), totalRequests: () => (total += 5), intervalMs: 20, spanMs: 60_000 });
    h.start();
    h.start(); // idempotent
    expect(h.samples()).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 130));
    h.stop();
    const n = h.samples().length;
    expect(n).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 60));
    expect(h.samples()).toHaveLength(n);
  });

  it('rejects an interval longer than the span', () => {
    expect(() => new SignalHistory({ read: () => values(0), totalRequests: () => 0, intervalMs: 5_000, spanMs: 1_000 })).toThrow();
  });
});

describe('verdicts', () => {
  const signals = defaultConfig().signals;
  const base: SignalValues = {
    requests: 100,
    hits: 100,
    hitRate: 1,
    p50Seconds: 0.18,
    p99Seconds: 0.185,
    p999Seconds: 0.19,
    stddevSeconds: 0.001,
    p99Drift: 0,
    degradedCount: 0,
    warmupEfficiency: 0.917,
  };

  it('uses the config thresholds, the band inclusive at floor and ceiling', () => {
    expect(verdicts(base, signals)).toEqual({ hitRate: 'healthy', p99Drift: 'healthy', degraded: 'healthy', warmupEfficiency: 'healthy', p0: false });
    expect(verdicts({ ...base, hitRate: 0.994 }, signals).hitRate).toBe('healthy');
    expect(verdicts({ ...base, hitRate: 0.9939 }, signals).hitRate).toBe('unhealthy');
    expect(verdicts({ ...base, p99Seconds: 0.19425 }, signals).p99Drift).toBe('healthy');
    expect(verdicts({ ...base, p99Seconds: 0.17575 }, signals).p99Drift).toBe('healthy');
    expect(verdicts({ ...base, p99Seconds: 0.1943 }, signals).p99Drift).toBe('unhealthy');
    expect(verdicts({ ...base, p99Seconds: 0.175 }, signals).p99Drift).toBe('unhealthy');
    expect(verdicts({ ...base, warmupEfficiency: 0.88 }, signals).warmupEfficiency).toBe('healthy');
    expect(verdicts({ ...base, warmupEfficiency: 0.879 }, signals).warmupEfficiency).toBe('unhealthy');
    expect(verdicts({ ...base, degradedCount: 1 }, signals)).toMatchObject({ degraded: 'unhealthy', p0: false });
  });

  it('P0 only when p99 is above the ceiling and requests are degraded; too fast is not the P0', () => {
    expect(verdicts({ ...base, p99Seconds: 0.21, degradedCount: 1 }, signals).p0).toBe(true);
    expect(verdicts({ ...base, p99Seconds: 0.21, degradedCount: 0 }, signals).p0).toBe(false);
    expect(verdicts({ ...base, p99Seconds: 0.15, degradedCount: 1 }, signals).p0).toBe(false);
  });

  it('no data is its own verdict', () => {
    const none = { ...base, requests: 0, hits: 0, hitRate: null, p99Seconds: null, p99Drift: null, warmupEfficiency: null };
    expect(verdicts(none, signals)).toEqual({ hitRate: 'nodata', p99Drift: 'nodata', degraded: 'nodata', warmupEfficiency: 'nodata', p0: false });
    // Requests but none served by Zero-Plane: the hit rate is known (0), the latency signals are not.
    const fallbacksOnly = { ...base, hits: 0, hitRate: 0, p99Seconds: null, p99Drift: null, warmupEfficiency: null };
    expect(verdicts(fallbacksOnly, signals)).toMatchObject({ hitRate: 'unhealthy', p99Drift: 'nodata', degraded: 'healthy', warmupEfficiency: 'nodata' });
  });
});
