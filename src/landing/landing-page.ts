// The landing page's HTML: a static shell rendered once from the config. static/landing.js fills the
// tiles and charts from /api/v1/signals; everything the page loads is served by this exporter.
import type { LandingThresholds } from './verdicts.js';

export interface LandingPageOptions {
  version: string;
  telemetryPath: string;
  thresholds: LandingThresholds;
  /** Relative paths of the alerting pack files, linked as /pack/<file>. */
  packFiles: string[];
  /** The demo: show the fault-injection control. */
  demo: boolean;
}

export const ASSET_PATHS = {
  uplotJs: '/assets/uplot.min.js',
  uplotCss: '/assets/uPlot.min.css',
  landingJs: '/assets/landing.js',
  landingCss: '/assets/landing.css',
} as const;
export const SIGNALS_PATH = '/api/v1/signals';
export const DEMO_FAULTS_PATH = '/api/v1/demo/faults';
export const DASHBOARDS_PATH = '/dashboards/';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const pct = (x: number, digits: number) => `${(x * 100).toFixed(digits)} %`;
const ms = (seconds: number) => `${Number((seconds * 1000).toFixed(2))} ms`;

function duration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

interface TileSpec {
  id: string;
  title: string;
  unit: string;
  target: string;
  /** A second line the script fills (the p99 behind the drift). */
  extra?: string;
}

function tile(t: TileSpec): string {
  const e = escapeHtml;
  return `
      <article class="tile" data-testid="tile-${e(t.id)}" data-state="nodata" aria-labelledby="tile-${e(t.id)}-title">
        <h3 id="tile-${e(t.id)}-title">${e(t.title)}</h3>
        <p class="value"><span data-role="value">–</span><span class="unit">${e(t.unit)}</span></p>
        <p class="verdict"><span class="dot" aria-hidden="true"></span><span data-role="verdict">No data</span></p>
        ${t.extra === undefined ? '' : `<p class="extra" data-role="extra">${e(t.extra)}</p>`}
        <p class="target">${e(t.target)}</p>
      </article>`;
}

export function renderLandingPage(o: LandingPageOptions): string {
  const e = escapeHtml;
  const t = o.thresholds;
  const window = duration(t.windowSeconds);
  const tiles = [
    tile({ id: 'hit-rate', title: 'Hit rate', unit: '%', target: `Target ≥ ${pct(t.hitRateTarget, 1)} of requests served by Zero-Plane` }),
    tile({
      id: 'p99-drift',
      title: 'p99 drift',
      unit: '%',
      extra: 'p99 –',
      target: `Band ${ms(t.floor)} – ${ms(t.ceiling)} (baseline ${ms(t.baseline)} ± ${pct(t.tolerance, 0)})`,
    }),
    tile({ id: 'degraded', title: 'Degraded requests', unit: 'requests', target: 'Target 0 in the window' }),
    tile({ id: 'warmup-efficiency', title: 'Warm-up efficiency', unit: '%', target: `Target ≥ ${pct(t.warmupEfficiencyTarget, 1)} warm-up hits` }),
  ].join('');

  const demo = !o.demo
    ? ''
    : `
    <section class="card demo" aria-labelledby="demo-title" data-testid="demo-controls">
      <h2 id="demo-title">Try it: inject a fault</h2>
      <p>This demo's simulated LLM endpoint can misbehave on request. <strong>Inject</strong> makes its fast layer
        15 % slower and marks 20 % of its answers degraded: the drift and degraded tiles turn red and the P0
        condition appears within seconds. After <strong>Clear</strong>, the tiles recover once the bad requests
        leave the ${e(window)} window.</p>
      <div class="buttons">
        <button type="button" class="danger" data-action="inject" data-testid="inject-faults">Inject drift + degraded (P0)</button>
        <button type="button" data-action="clear" data-testid="clear-faults">Clear faults</button>
      </div>
      <p class="faults" aria-live="polite">Active faults: <span data-testid="faults-status">–</span></p>
    </section>`;

  const pack = o.packFiles.map((f) => `<li><a href="/pack/${e(f)}"><code>${e(f)}</code></a></li>`).join('\n          ');

  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>zero-plane-exporter</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="${ASSET_PATHS.uplotCss}">
  <link rel="stylesheet" href="${ASSET_PATHS.landingCss}">
  <script src="${ASSET_PATHS.uplotJs}" defer></script>
  <script src="${ASSET_PATHS.landingJs}" defer></script>
</head>
<body data-signals="${SIGNALS_PATH}" data-faults="${o.demo ? DEMO_FAULTS_PATH : ''}">
  <header class="top">
    <div>
      <h1>zero-plane-exporter${o.demo ? ' <span class="badge">demo</span>' : ''}</h1>
      <p class="lede">Does the LLM API answer with deterministic latency? The four Zero-Plane signals over the
        last ${e(window)} of gateway logs, live.</p>
    </div>
    <p class="status" data-testid="status" data-state="connecting"><span role="status" data-role="state">Connecting…</span>
      <span data-role="detail"></span></p>
  </header>

  <div class="banner" data-testid="p0-banner" role="alert" hidden>
    <strong>P0 condition:</strong> p99 is above the band while degraded requests are served. If it persists,
    Prometheus fires the P0 alert and the load-shedding gate pauses non-core AI calls.
  </div>

  <main>
    <section aria-labelledby="signals-title">
      <h2 id="signals-title">Signals <span class="sub">last ${e(window)}</span></h2>
      <div class="tiles">${tiles}
      </div>
      <dl class="facts">
        <div><dt>Requests in window</dt><dd data-testid="window-requests">–</dd></div>
        <div><dt>Request rate</dt><dd data-testid="request-rate">–</dd></div>
        <div><dt>p50 / p99.9</dt><dd data-testid="quantiles">–</dd></div>
        <div><dt>Load-shedding gate</dt><dd data-testid="gate-state" data-state="unknown">–</dd></div>
      </dl>
    </section>
${demo}
    <section aria-labelledby="charts-title">
      <h2 id="charts-title">History <span class="sub">last 10 min, sampled every 2 s</span></h2>
      <div class="charts">
        <figure class="card chart-card">
          <figcaption>p99 of Zero-Plane latency (ms) against the band</figcaption>
          <div class="chart" data-chart="p99" data-testid="chart-p99" role="img"
            aria-label="Line chart of the window p99 latency with the band's floor and ceiling"></div>
        </figure>
        <figure class="card chart-card">
          <figcaption>Requests per second read from the log</figcaption>
          <div class="chart" data-chart="rate" data-testid="chart-rate" role="img" aria-label="Line chart of requests per second"></div>
        </figure>
      </div>
    </section>

    <section aria-labelledby="links-title">
      <h2 id="links-title">Endpoints</h2>
      <div class="links">
        <nav class="card" aria-label="Exporter endpoints">
          <h3>Exporter</h3>
          <ul>
            <li><a href="${e(o.telemetryPath)}">Metrics</a> <span class="hint">Prometheus scrapes this</span></li>
            <li><a href="${SIGNALS_PATH}">Signals (JSON)</a> <span class="hint">what this page shows</span></li>
            <li><a href="/-/healthy">Health</a> · <a href="/-/ready">Readiness</a></li>
            <li><a href="/api/v1/gate">Load-shedding gate</a> <span class="hint">the gateway polls this</span></li>
          </ul>
        </nav>
        <nav class="card" aria-label="Alerting pack">
          <h3>Alerting pack</h3>
          <ul>
          ${pack}
          </ul>
        </nav>
        <nav class="card" aria-label="Dashboards">
          <h3>Dashboards</h3>
          <ul>
            <li><a href="${DASHBOARDS_PATH}">Grafana dashboards</a> <span class="hint">JSON to import</span></li>
          </ul>
        </nav>
      </div>
    </section>
  </main>

  <footer>zero-plane-exporter ${e(o.version)} · thresholds from the exporter config</footer>
</body>
</html>
`;
}
