// zero-plane-exporter landing page: polls /api/v1/signals every second and fills the tiles and charts.
// No framework and nothing from the network beyond this exporter. Text is only ever set with
// textContent, so nothing the API returns can become markup.
(function () {
  'use strict';

  const POLL_MS = 1000;
  const REQUEST_TIMEOUT_MS = 5000;
  const INJECT = { latencyDriftRatio: 0.15, degradedRate: 0.2 };

  const body = document.body;
  const signalsUrl = body.dataset.signals || '/api/v1/signals';
  const faultsUrl = body.dataset.faults || '';
  const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);
  /** Only touches the DOM on a change, so live regions announce changes, not every poll. */
  const setText = (el, text) => {
    if (el && el.textContent !== text) el.textContent = text;
  };

  // ---- formatting -------------------------------------------------------------------------------
  const DASH = '–';
  const isNum = (x) => typeof x === 'number' && Number.isFinite(x);
  const fixed = (x, digits) => (isNum(x) ? x.toFixed(digits) : DASH);
  const percent = (x, digits) => (isNum(x) ? (x * 100).toFixed(digits) : DASH);
  const signedPercent = (x) => (isNum(x) ? `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(2)}` : DASH);
  const millis = (seconds) => (isNum(seconds) ? `${(seconds * 1000).toFixed(1)} ms` : DASH);
  const count = (x) => (isNum(x) ? Math.round(x).toLocaleString('en-US') : DASH);
  const clockTime = (ms) => new Date(ms).toLocaleTimeString([], { hour12: false });
  const VERDICT_TEXT = { healthy: 'Healthy', unhealthy: 'Unhealthy', nodata: 'No data' };

  // ---- tiles ------------------------------------------------------------------------------------
  function tile(id) {
    const el = byTestId(`tile-${id}`);
    return {
      el,
      value: el.querySelector('[data-role="value"]'),
      verdict: el.querySelector('[data-role="verdict"]'),
      extra: el.querySelector('[data-role="extra"]'),
    };
  }
  const tiles = {
    hitRate: tile('hit-rate'),
    p99Drift: tile('p99-drift'),
    degraded: tile('degraded'),
    warmupEfficiency: tile('warmup-efficiency'),
  };

  function setTile(t, state, value, extra) {
    const verdict = VERDICT_TEXT[state] ? state : 'nodata';
    t.el.dataset.state = verdict;
    setText(t.value, value);
    setText(t.verdict, VERDICT_TEXT[verdict]);
    if (extra !== undefined) setText(t.extra, extra);
  }

  function renderTiles(data) {
    const w = data.window;
    const v = data.verdicts;
    setTile(tiles.hitRate, v.hitRate, percent(w.hitRate, 2));
    setTile(tiles.p99Drift, v.p99Drift, signedPercent(w.p99Drift), `p99 ${millis(w.p99Seconds)}`);
    setTile(tiles.degraded, v.degraded, w.requests > 0 ? count(w.degradedCount) : DASH);
    setTile(tiles.warmupEfficiency, v.warmupEfficiency, percent(w.warmupEfficiency, 1));

    setText(byTestId('window-requests'), count(w.requests));
    setText(byTestId('request-rate'), isNum(data.requestsPerSecond) ? `${fixed(data.requestsPerSecond, 1)} req/s` : DASH);
    setText(byTestId('quantiles'), `${millis(w.p50Seconds)} / ${millis(w.p999Seconds)}`);

    const gate = byTestId('gate-state');
    const g = data.gate;
    gate.dataset.state = g.stale ? 'stale' : g.pauseNonCore ? 'paused' : 'open';
    if (g.stale) {
      // No Alertmanager answers the gate: gateways follow their failOpen policy, whatever it last knew.
      setText(gate, `Unknown: no Alertmanager answers (last ${g.confirmedAt ? clockTime(Date.parse(g.confirmedAt)) : 'never'}); gateways follow failOpen`);
    } else if (g.pauseNonCore) {
      // The state lists the first few alerts held; alertCount says how many there are.
      const more = isNum(g.alertCount) && g.alertCount > g.alerts.length ? ` and ${count(g.alertCount - g.alerts.length)} more` : '';
      const names = [...new Set(g.alerts.map((a) => a.alertname).filter(Boolean))].join(', ') + more;
      setText(gate, `Paused since ${g.since ? clockTime(Date.parse(g.since)) : '?'}${names ? ` (${names})` : ''}`);
    } else {
      setText(gate, 'Open: non-core calls flow');
    }

    byTestId('p0-banner').hidden = !v.p0;
  }

  // ---- faults (demo only) -----------------------------------------------------------------------
  const faultsStatus = byTestId('faults-status');
  function describeFaults(f) {
    if (!f) return DASH;
    const parts = [];
    if (f.latencyDriftRatio) parts.push(`latency ${f.latencyDriftRatio > 0 ? '+' : ''}${percent(f.latencyDriftRatio, 0)} %`);
    if (f.degradedRate) parts.push(`${percent(f.degradedRate, 0)} % degraded`);
    if (f.warmupEfficiencyDrop) parts.push(`warm-up −${percent(f.warmupEfficiencyDrop, 0)} pts`);
    if (f.hitRateDrop) parts.push(`${percent(f.hitRateDrop, 0)} % fall back`);
    return parts.length ? parts.join(', ') : 'none';
  }

  async function changeFaults(method, payload) {
    const buttons = document.querySelectorAll('[data-action]');
    buttons.forEach((b) => (b.disabled = true));
    try {
      const init = { method, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) };
      if (payload !== undefined) {
        init.headers = { 'Content-Type': 'application/json' };
        init.body = JSON.stringify(payload);
      }
      const res = await fetch(faultsUrl, init);
      const answer = await res.json().catch(() => ({}));
      if (!res.ok) throw new Error(answer.error || `HTTP ${res.status}`);
      setText(faultsStatus, describeFaults(answer));
    } catch (err) {
      setText(faultsStatus, `could not change the faults: ${err.message}`);
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  if (faultsUrl && faultsStatus) {
    document.querySelector('[data-action="inject"]').addEventListener('click', () => changeFaults('PUT', INJECT));
    document.querySelector('[data-action="clear"]').addEventListener('click', () => changeFaults('DELETE'));
  }

  // ---- charts -----------------------------------------------------------------------------------
  const history = [];
  let lastT;
  let charts;

  function mergeHistory(data) {
    for (const s of data.history) {
      if (lastT === undefined || s.t > lastT) {
        history.push(s);
        lastT = s.t;
      }
    }
    const oldest = data.now - data.historySpanSeconds * 1000;
    while (history.length > 0 && history[0].t < oldest) history.shift();
  }

  const css = (name) => getComputedStyle(body).getPropertyValue(name).trim();

  function createCharts() {
    if (typeof uPlot !== 'function') {
      document.querySelectorAll('[data-chart]').forEach((el) => (el.textContent = 'Charts unavailable: uPlot did not load.'));
      return undefined;
    }
    const axisColor = css('--muted') || '#59636e';
    const gridColor = css('--grid') || '#e6e9ee';
    const axes = (yLabel, values) => [
      { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor } },
      { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor }, label: yLabel, size: 56, values },
    ];
    const bad = css('--bad') || '#cf222e';
    const accent = css('--accent') || '#0969da';
    const ok = css('--ok-fill') || 'rgba(26, 127, 55, 0.08)';
    const msValues = (u, ticks) => ticks.map((v) => `${v.toFixed(0)}`);

    const p99El = document.querySelector('[data-chart="p99"]');
    const rateEl = document.querySelector('[data-chart="rate"]');
    const size = (el) => ({ width: Math.max(200, el.clientWidth), height: 220 });

    const p99 = new uPlot(
      {
        ...size(p99El),
        series: [
          {},
          { label: 'ceiling', stroke: bad, width: 1, dash: [6, 4], points: { show: false }, value: (u, v) => (isNum(v) ? millis(v / 1000) : DASH) },
          { label: 'floor', stroke: bad, width: 1, dash: [6, 4], points: { show: false }, value: (u, v) => (isNum(v) ? millis(v / 1000) : DASH) },
          { label: 'p99', stroke: accent, width: 2, spanGaps: false, points: { show: false }, value: (u, v) => (isNum(v) ? millis(v / 1000) : DASH) },
        ],
        bands: [{ series: [1, 2], fill: ok }],
        scales: {
          x: { time: true },
          y: {
            range: (u, min, max) => {
              const pad = Math.max((max - min) * 0.15, 2);
              return [Math.max(0, Math.floor(min - pad)), Math.ceil(max + pad)];
            },
          },
        },
        axes: axes('ms', msValues),
        cursor: { drag: { x: false, y: false } },
      },
      [[], [], [], []],
      p99El,
    );

    const rate = new uPlot(
      {
        ...size(rateEl),
        series: [
          {},
          {
            label: 'requests/s',
            stroke: accent,
            fill: css('--accent-fill') || 'rgba(9, 105, 218, 0.1)',
            width: 2,
            points: { show: false },
            value: (u, v) => (isNum(v) ? `${v.toFixed(1)} req/s` : DASH),
          },
        ],
        scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, Math.ceil(max * 1.2))] } },
        axes: axes('req/s'),
        cursor: { drag: { x: false, y: false } },
      },
      [[], []],
      rateEl,
    );

    if (typeof ResizeObserver === 'function') {
      const observer = new ResizeObserver(() => {
        p99.setSize(size(p99El));
        rate.setSize(size(rateEl));
      });
      observer.observe(p99El);
      observer.observe(rateEl);
    }
    return { p99, rate };
  }

  function renderCharts(data) {
    if (!charts) return;
    const t = data.thresholds;
    const xs = history.map((s) => s.t / 1000);
    const toMs = (s) => (isNum(s) ? s * 1000 : null);
    charts.p99.setData([xs, xs.map(() => t.ceiling * 1000), xs.map(() => t.floor * 1000), history.map((s) => toMs(s.p99Seconds))]);
    charts.rate.setData([xs, history.map((s) => (isNum(s.requestsPerSecond) ? s.requestsPerSecond : null))]);
    byTestId('chart-p99').dataset.points = String(xs.length);
  }

  // ---- polling ----------------------------------------------------------------------------------
  const status = byTestId('status');
  const statusState = status.querySelector('[data-role="state"]');
  const statusDetail = status.querySelector('[data-role="detail"]');
  function setStatus(state, text, detail) {
    status.dataset.state = state;
    setText(statusState, text);
    setText(statusDetail, detail);
  }

  async function poll() {
    try {
      const url = lastT === undefined ? signalsUrl : `${signalsUrl}?since=${encodeURIComponent(String(lastT))}`;
      const res = await fetch(url, { cache: 'no-store', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const data = await res.json();
      renderTiles(data);
      const before = lastT;
      mergeHistory(data);
      if (lastT !== before || history.length === 0) renderCharts(data);
      if (faultsStatus && data.demo) setText(faultsStatus, describeFaults(data.faults));
      setStatus('live', 'Live', `· updated ${clockTime(data.now)}`);
    } catch (err) {
      setStatus('error', 'Cannot reach the exporter; retrying…', `(${err.message})`);
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }

  charts = createCharts();
  poll();
})();
