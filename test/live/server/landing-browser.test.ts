// `npm start` as a newcomer sees it: the demo as a real process (simulator + load generator + exporter),
// its landing page in headless Chromium: four live tiles, and injected faults turning drift and degraded red.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { sample, startCommand, waitFor, type ServeProcess } from '../../helpers/cli-process.js';

const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url));
const TILES = ['hit-rate', 'p99-drift', 'degraded', 'warmup-efficiency'] as const;
/** A number and its unit, as each tile shows them once there is data. */
const TILE_TEXT: Record<(typeof TILES)[number], RegExp> = {
  'hit-rate': /^\d{1,3}\.\d{2} ?%$/,
  'p99-drift': /^[+−]\d+\.\d{2} ?%$/,
  degraded: /^\d[\d,]* ?requests$/,
  'warmup-efficiency': /^\d{1,3}\.\d ?%$/,
};

let demo: ServeProcess | undefined;
let browser: Browser | undefined;
const pageErrors: string[] = [];

beforeAll(async () => {
  demo = await startCommand('demo', ['--web.listen-address=127.0.0.1:0', '--demo.rate=40', '--seed=1'], 15_000);
}, 20_000);

afterAll(async () => {
  await browser?.close();
  await demo?.stop('SIGTERM');
}, 20_000);

async function tileText(page: Page, id: string): Promise<string> {
  const t = page.getByTestId(`tile-${id}`);
  const value = (await t.locator('[data-role="value"]').textContent()) ?? '';
  const unit = (await t.locator('.unit').textContent()) ?? '';
  return `${value} ${unit}`.trim();
}

async function tileStates(page: Page): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  for (const id of TILES) out[id] = await page.getByTestId(`tile-${id}`).getAttribute('data-state');
  return out;
}

/** Polls the page until `check` holds, within `timeoutMs`; the error says what was last seen. */
async function until(page: Page, what: string, timeoutMs: number, check: (states: Record<string, string | null>) => Promise<boolean> | boolean): Promise<void> {
  let last: Record<string, string | null> = {};
  await waitFor(
    async () => {
      last = await tileStates(page);
      return (await check(last)) ? true : undefined;
    },
    timeoutMs,
    what,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; tiles: ${JSON.stringify(last)}`);
  });
}

const attr = (page: Page, testId: string, name: string) => page.getByTestId(testId).getAttribute(name);
const text = async (page: Page, testId: string) => (await page.getByTestId(testId).textContent()) ?? '';

describe('demo (npm start)', () => {
  it('prints its URLs and serves /metrics with a non-empty zero_plane_hit_rate within 15 s', async () => {
    const d = demo as ServeProcess;
    const text = await waitFor(
      async () => {
        const res = await fetch(`${d.url}/metrics`, { signal: AbortSignal.timeout(5_000) });
        const body = await res.text();
        return sample(body, 'zero_plane_hit_rate') === undefined ? undefined : body;
      },
      15_000,
      'zero_plane_hit_rate in /metrics',
    );
    const hitRate = sample(text, 'zero_plane_hit_rate') as number;
    expect(hitRate).toBeGreaterThan(0.9);
    expect(hitRate).toBeLessThanOrEqual(1);
    expect(sample(text, 'zero_plane_window_requests')).toBeGreaterThan(0);

    let stdout = '';
    d.child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    await waitFor(() => (stdout.includes('\n') ? true : undefined), 5_000, 'the demo line on stdout');
    expect(stdout).toContain(`open ${d.url}/`);
    expect(stdout).toContain(`metrics ${d.url}/metrics`);
    expect(d.logs.find((l) => l.msg === 'demo running')).toMatchObject({ exporter: `${d.url}/`, metrics: `${d.url}/metrics` });
  }, 25_000);

  it('shows four live tiles in headless Chromium; injecting faults turns drift and degraded unhealthy', async () => {
    const d = demo as ServeProcess;
    // A missing browser is a failure, not a skip.
    const executablePath = requireBinary('chromium');
    browser = await chromium.launch({
      executablePath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      timeout: 30_000,
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: false });
    // Offline for everything but this exporter: the page must need no CDN.
    const origin = new URL(d.url).origin;
    const foreign: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.on('console', (msg) => {
      if (msg.type() === 'error') pageErrors.push(msg.text());
    });
    await page.goto(`${d.url}/`, { waitUntil: 'load', timeout: 15_000 });
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('zero-plane-exporter');
    expect(await page.title()).toBe('zero-plane-exporter');

    // Four tiles with numbers and units, within a few polls.
    await until(page, 'four tiles with data', 15_000, (st) => TILES.every((id) => st[id] !== 'nodata' && st[id] !== null));
    for (const id of TILES) expect(await tileText(page, id), id).toMatch(TILE_TEXT[id]);
    // No fault, no degraded request: that tile is green and there is no P0. The band is ±9 ms around the
    // simulator's 180 ms ± 5 ms, and the measured latency includes this busy machine's event-loop delays
    // (cold start, Chromium starting, other test files), so drift is given time to settle but not required.
    await until(page, 'drift healthy before injection', 15_000, (st) => st['p99-drift'] === 'healthy').catch(() => undefined);
    expect((await tileStates(page)).degraded).toBe('healthy');
    expect(await page.getByTestId('p0-banner').isHidden()).toBe(true);
    expect(await page.getByTestId('status').getAttribute('data-state')).toBe('live');
    for (const verdict of await page.locator('.tile [data-role="verdict"]').allTextContents()) {
      expect(['Healthy', 'Unhealthy', 'No data']).toContain(verdict);
    }

    // They update: the window grows with the load, and the charts get samples.
    const requests1 = await text(page, 'window-requests');
    expect(requests1).toMatch(/^\d[\d,]*$/);
    await until(page, 'the window-requests number to change', 10_000, async () => (await text(page, 'window-requests')) !== requests1);
    await until(page, 'two samples in the p99 chart', 10_000, async () => Number(await attr(page, 'chart-p99', 'data-points')) >= 2);
    expect(await page.locator('[data-chart="p99"] canvas').count()).toBe(1);
    expect(await page.locator('[data-chart="rate"] canvas').count()).toBe(1);
    expect(await page.getByTestId('request-rate').textContent()).toMatch(/^\d+\.\d req\/s$/);
    expect(await page.getByTestId('gate-state').getAttribute('data-state')).toBe('open');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}landing.png`, fullPage: true });

    // Inject drift + degraded: within 30 s both tiles are unhealthy and the P0 banner shows.
    await page.getByTestId('inject-faults').click();
    await until(page, 'the control to report the faults', 5_000, async () => (await text(page, 'faults-status')) === 'latency +15 %, 20 % degraded');
    await until(page, 'drift and degraded unhealthy after injection', 30_000, (st) => st['p99-drift'] === 'unhealthy' && st.degraded === 'unhealthy');
    // +15 % on every fast answer: the window p99 is well above the ceiling, whatever it was before.
    expect(await tileText(page, 'p99-drift')).toMatch(/^\+\d+\.\d{2} ?%$/);
    await until(page, 'p99 drift of at least +10 %', 15_000, async () => parseFloat((await tileText(page, 'p99-drift')).slice(1)) >= 10);
    expect(await page.getByTestId('tile-degraded').locator('[data-role="verdict"]').textContent()).toBe('Unhealthy');
    await page.getByTestId('p0-banner').waitFor({ state: 'visible', timeout: 10_000 });
    // A few more samples, so the screenshot's chart shows p99 leaving the band.
    const points = Number(await attr(page, 'chart-p99', 'data-points'));
    await until(page, 'three more chart samples', 15_000, async () => Number(await attr(page, 'chart-p99', 'data-points')) >= points + 3);
    await page.screenshot({ path: `${ARTIFACTS}landing-p0.png`, fullPage: true });

    const faults = (await (await fetch(`${d.url}/api/v1/demo/faults`)).json()) as Record<string, number>;
    expect(faults).toMatchObject({ latencyDriftRatio: 0.15, degradedRate: 0.2 });
    await page.getByTestId('clear-faults').click();
    await until(page, 'the control to report no faults', 5_000, async () => (await text(page, 'faults-status')) === 'none');
    expect(await (await fetch(`${d.url}/api/v1/demo/faults`)).json()).toMatchObject({ latencyDriftRatio: 0, degradedRate: 0 });

    expect(foreign).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  }, 120_000);
});
