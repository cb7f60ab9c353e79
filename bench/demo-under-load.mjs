#!/usr/bin/env node
// Runs `demo` (from dist/) with BUSY processes spinning beside it and reads /api/v1/signals every 2 s:
// how the four tiles hold up on a busy machine. Prints one row per sample, then the share of samples each
// tile was healthy and the range of p99, with the load average.
//   node bench/demo-under-load.mjs [--busy=2] [--seconds=60] [--skip=10] [--inject-at=SECONDS]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { busy: { type: 'string', default: '2' }, seconds: { type: 'string', default: '60' }, skip: { type: 'string', default: '10' }, 'inject-at': { type: 'string' } },
});
const BIN = fileURLToPath(new URL('../bin/zero-plane-exporter.js', import.meta.url));
const busy = Array.from({ length: Number(values.busy) }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const demo = spawn(process.execPath, [BIN, 'demo', '--web.listen-address=127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
const stopAll = () => {
  for (const b of busy) b.kill('SIGKILL');
  demo.kill('SIGTERM');
};
process.on('SIGINT', () => {
  stopAll();
  process.exit(130);
});

let url;
let buffered = '';
demo.stderr.on('data', (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    try {
      const entry = JSON.parse(line);
      if (entry.msg === 'serving') url = `http://${entry.address}`;
    } catch {
      // not a log line
    }
  }
});

const t0 = Date.now();
const rows = [];
let injected = false;
while (Date.now() - t0 < Number(values.seconds) * 1000) {
  await new Promise((r) => setTimeout(r, 2000));
  if (url === undefined) continue;
  const t = Math.round((Date.now() - t0) / 1000);
  if (values['inject-at'] !== undefined && !injected && t >= Number(values['inject-at'])) {
    injected = true;
    await fetch(`${url}/api/v1/demo/faults`, { method: 'PUT', body: JSON.stringify({ latencyDriftRatio: 0.15, degradedRate: 0.2 }) });
    console.log(`${t}s injected latencyDriftRatio 0.15, degradedRate 0.2`);
  }
  const s = await (await fetch(`${url}/api/v1/signals`)).json();
  const w = s.window;
  const row = {
    t,
    injected,
    requests: w.requests,
    p99ms: w.p99Seconds === null ? null : +(w.p99Seconds * 1000).toFixed(1),
    drift: w.p99Drift === null ? null : `${(w.p99Drift * 100).toFixed(1)}%`,
    hitRate: w.hitRate,
    warmup: w.warmupEfficiency,
    degraded: w.degradedCount,
    verdicts: s.verdicts,
  };
  rows.push(row);
  console.log(
    JSON.stringify({
      ...row,
      verdicts: Object.entries(s.verdicts)
        .map(([k, v]) => `${k}=${v}`)
        .join(' '),
    }),
  );
}
stopAll();
const judged = rows.filter((r) => r.t >= Number(values.skip) && !r.injected);
const share = (tile) => `${judged.filter((r) => r.verdicts[tile] === 'healthy').length}/${judged.length}`;
const p99s = judged.map((r) => r.p99ms).filter((v) => v !== null);
console.log(
  `busy=${values.busy} samples=${judged.length} (from ${values.skip}s, no fault) healthy: hitRate ${share('hitRate')} p99Drift ${share('p99Drift')} degraded ${share('degraded')} warmupEfficiency ${share('warmupEfficiency')}; ` +
    `p99 ${Math.min(...p99s)}–${Math.max(...p99s)} ms; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
);
