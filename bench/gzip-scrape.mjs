// gzip on /metrics: CPU per scrape and bytes, at 5k and 50k series, through the same code serve runs
// (dist/server/shared-scrape.js: a render, then its body gzipped once on the thread pool). Three
// contenders side by side, rotating order, each round measured the same way: identity (render only),
// gzip level 1 (what serve sends: compression.ts GZIP_LEVEL) and, for comparison, zlib's default level 6
// on the same render. CPU is the process's (process.cpuUsage: the thread pool's compression included).
// Usage: npm run build && node bench/gzip-scrape.mjs [--rounds 5] [--series 5000,50000]
import { parseArgs } from 'node:util';
import { gzip } from 'node:zlib';
import { loadavg } from 'node:os';
import { CounterFamily, HistogramFamily } from '../dist/metrics/families.js';
import { buildRegistry } from '../dist/metrics/registry.js';
import { SharedScrape } from '../dist/server/shared-scrape.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, series: { type: 'string', default: '5000,50000' } } });
const rounds = Number(values.rounds);
const sizes = values.series.split(',').map(Number);

/** A registry of about `n` series shaped like serve's: a counter by status, model, route and cohort, and a latency histogram. */
function registryOf(n) {
  const requests = new CounterFamily('zero_plane_requests_total', 'Requests.', ['hit', 'status_class', 'model', 'route', 'cohort']);
  const histogram = new HistogramFamily('zero_plane_request_duration_seconds', 'Latency.', ['model', 'route'], [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
  // A histogram series is 11 lines (8 buckets, +Inf, sum, count); a tenth of the series are histograms'.
  const histogramRoutes = Math.round(n / 10 / 11);
  for (let i = 0; i < n - histogramRoutes * 11; i++) {
    requests.inc([i % 2 === 0 ? 'true' : 'false', `${2 + (i % 4)}xx`, `claude-model-${i % 7}`, `/v1/route/${Math.floor(i / 56)}`, `cohort-${i % 8}`], 1 + ((i * 7919) % 100_000));
  }
  for (let r = 0; r < histogramRoutes; r++) histogram.observe([`claude-model-${r % 7}`, `/v1/route/${r}`], ((r * 37) % 1000) / 100);
  return buildRegistry([requests, histogram], 'bench');
}

const gzipAt = (bytes, level) => new Promise((resolve, reject) => gzip(bytes, { level }, (err, out) => (err ? reject(err) : resolve(out))));

const contenders = {
  identity: async (shared) => (await shared.body('text', 'identity')).bytes,
  'gzip-1 (served)': async (shared) => (await shared.body('text', 'gzip')).bytes,
  'gzip-6': async (shared) => {
    const b = await shared.body('text', 'identity');
    return (await gzipAt(Buffer.concat(b.pieces, b.bytes), 6)).length;
  },
};

async function measure(shared, run, scrapes) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let bytes = 0;
  for (let i = 0; i < scrapes; i++) bytes = await run(shared);
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000 / scrapes, wallMs: (performance.now() - t0) / scrapes, bytes };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, node ${process.version}`,
);
for (const n of sizes) {
  const registry = registryOf(n);
  const shared = new SharedScrape(registry, () => undefined);
  const scrapes = n >= 50_000 ? 4 : 20;
  await measure(shared, contenders['gzip-1 (served)'], 2); // warm-up
  const names = Object.keys(contenders);
  const per = Object.fromEntries(names.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    const round = {};
    for (const k of order) round[k] = await measure(shared, contenders[k], scrapes);
    for (const k of names) per[k].push({ ...round[k], ratio: round[k].cpuMs / round.identity.cpuMs });
  }
  const lines = (await registry.metrics('text')).split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
  console.log(`\n${lines} series (${n} asked), ${rounds} rounds × ${scrapes} scrapes, medians`);
  console.log('| contender | CPU per scrape | × identity CPU (per round) | wall per scrape | bytes | × identity bytes |');
  console.log('|---|---|---|---|---|---|');
  const idBytes = per.identity[0].bytes;
  for (const k of names) {
    const rs = per[k];
    console.log(
      `| ${k} | ${median(rs.map((x) => x.cpuMs)).toFixed(1)} ms | ${median(rs.map((x) => x.ratio)).toFixed(2)} (${rs.map((x) => x.ratio.toFixed(2)).join(', ')}) | ${median(rs.map((x) => x.wallMs)).toFixed(1)} ms | ${rs[0].bytes.toLocaleString('en')} | ${(rs[0].bytes / idBytes).toFixed(3)} |`,
    );
  }
}
