// Live mode for bench/run.mjs: `serve` following a file (start-at end) while bench/live-writer.mjs appends
// at a fixed rate. Everything is read from the outside, the way Prometheus would: lines read come from
// zero_plane_exporter_lines_total on /metrics, CPU and RSS from /proc. Every step is bounded in time.
//
//  1. sustained rate: the highest rate of a ladder the exporter keeps up with, with no lag growth
//  2. memory: RSS of `serve` at 100 000 lines/s for 30 s
//  3. 400 000 lines/s for 60 s, 5 runs, lines spread over ~5 000 series: kept up in each, the time from an
//     append to the scrape that first counts it, and each scrape's own time (scrapes every 50 ms)
//  4. /metrics render time with ~5 000 and ~50 000 series exposed
import { fork, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { writeLog } from './generate-log.mjs';
import { median, quantile } from './stats.mjs';

const RATES = [25_000, 50_000, 100_000, 150_000, 200_000, 250_000, 300_000, 400_000];
const STEP_SECONDS = 8;
const MEMORY_RATE = 100_000;
const MEMORY_SECONDS = 30;
const SUSTAINED_RATE = 400_000;
/** Models in the sustained runs' lines: × 5 routes × 4 cohorts, ~5 300 series on /metrics (as the smaller render). */
const SUSTAINED_LABELS = 5;
const SUSTAINED_SECONDS = 60;
const SUSTAINED_RUNS = 5;
/** Models per render log; × 5 routes × 4 cohorts label sets (generate-log.mjs --labels): ~5 300 and ~50 000 series. */
const RENDER_SIZES = [
  { labels: 5, lines: 100_000 },
  { labels: 47, lines: 400_000 },
];
const RENDER_SCRAPES = 60;

const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** What Prometheus 2.42 sends in Accept. */
const OPENMETRICS_ACCEPT = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
const fmt = (x, digits = 0) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Starts `serve` on a free port and resolves once it logs that it is serving. */
async function startServe(cli, root, args) {
  const child = spawn(process.execPath, [cli, 'serve', '--web.listen-address=127.0.0.1:0', ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const address = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 15_000);
    child.stderr.on('data', (d) => {
      stderr += d;
      for (const line of stderr.split('\n')) {
        if (!line.includes('"serving"')) continue;
        clearTimeout(timer);
        resolve(JSON.parse(line).address);
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return {
    child,
    url: `http://${address}/metrics`,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
    },
  };
}

/** CPU seconds the process has used so far (utime + stime from /proc/PID/stat, in clock ticks of 1/100 s). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1]) / 1024;
}

const LINES_TOTAL = Buffer.from('\nzero_plane_exporter_lines_total{');

/**
 * Lines read, from one scrape, found in the body's bytes: decoding and splitting a 5 000-series body every
 * 50 ms made this process's own collections the slowest "scrapes" (see timedScrape).
 */
function linesRead(url) {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { agent: false }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`scrape answered ${res.statusCode}`));
        const body = Buffer.concat(chunks);
        let n = 0;
        for (let at = body.indexOf(LINES_TOTAL); at !== -1; at = body.indexOf(LINES_TOTAL, at + 1)) {
          const end = body.indexOf(10, at + 1);
          const line = body.toString('latin1', at + 1, end === -1 ? body.length : end);
          n += Number(line.slice(line.lastIndexOf(' ') + 1));
        }
        resolve(n);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** Runs the writer at `rate` for `seconds` against a fresh file that `serve` follows; samples lag every `pollMs`. */
async function followRun({ root, cli, dataDir, serveArgs = [] }, rate, seconds, pollMs, labels = 0) {
  const file = join(dataDir, `live-${rate}.ndjson`);
  const config = join(dataDir, `live-${rate}.yml`);
  writeFileSync(file, '');
  // With labels, room for every label set, as in the render part; without, no config file (loading one
  // loads the YAML parser and the schema: RSS the memory part would count).
  if (labels > 0) writeFileSync(config, 'metrics:\n  labelValueLimit: 100\n  maxSeriesPerFamily: 20000\n');
  const serve = await startServe(cli, root, ['--tail.start-at=end', '--log.level=info', ...(labels > 0 ? [`--config.file=${config}`] : []), ...serveArgs, file]);
  try {
    await sleep(500); // first poll of the file done: start-at=end has taken its offset
    const cpu0 = cpuSeconds(serve.child.pid);
    const writer = fork(join(root, 'bench', 'live-writer.mjs'), [file, String(rate), String(seconds), String(labels)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const marks = [];
    let done;
    writer.on('message', (m) => {
      if (m.marks) marks.push(...m.marks);
      if (m.done) done = m;
    });
    const samples = [];
    const t0 = now();
    const deadline = t0 + (seconds + 10) * 1000;
    let caughtUp;
    while (now() < deadline) {
      const asked = now();
      const read = await linesRead(serve.url);
      const answered = now();
      const written = marks.length ? marks[marks.length - 1].written : 0;
      samples.push({ asked, answered, read, written, rss: rssMiB(serve.child.pid) });
      if (done && read >= done.written) {
        caughtUp = answered;
        break;
      }
      await sleep(Math.max(0, pollMs - (now() - asked)));
    }
    const cpu = cpuSeconds(serve.child.pid) - cpu0;
    writer.kill();
    return { rate, seconds, file, samples, marks, done, caughtUp, t0, cpu };
  } finally {
    await serve.stop();
    rmSync(file, { force: true });
    rmSync(config, { force: true });
  }
}

/**
 * How fast the lag grows (lines per second) while the writer runs: mean lag over the last third of the
 * writing period minus the first third (after a 1 s warm-up), over the time between them. Lag is a
 * saw-tooth (the exporter polls the file every 250 ms), so means over thirds, not single samples.
 */
function lagGrowth(run) {
  const end = run.marks.length ? run.marks[run.marks.length - 1].t : run.t0;
  const from = run.t0 + 1000;
  const third = (end - from) / 3;
  const mean = (a, b) => {
    const xs = run.samples.filter((s) => s.answered >= a && s.answered < b);
    return xs.length ? xs.reduce((sum, s) => sum + (s.written - s.read), 0) / xs.length : NaN;
  };
  return (mean(end - third, end) - mean(from, from + third)) / ((2 * third) / 1000);
}

async function sustained(ctx) {
  const steps = [];
  for (const rate of RATES) {
    ctx.log(`  live: ${fmt(rate)} lines/s for ${STEP_SECONDS} s …`);
    const run = await followRun(ctx, rate, STEP_SECONDS, 250);
    const writing = run.samples.filter((s) => !run.done || s.answered <= run.marks[run.marks.length - 1].t);
    const growth = lagGrowth(run);
    const lagSeconds = writing.map((s) => (s.written - s.read) / rate);
    const writeSeconds = run.done?.seconds ?? NaN;
    const achieved = run.done ? run.done.written / writeSeconds : 0;
    const catchUp = run.caughtUp === undefined ? Infinity : (run.caughtUp - run.marks[run.marks.length - 1].t) / 1000;
    // Kept up: the writer held its rate, lag did not grow by more than 5 % of the rate per second, and
    // everything written was read within 1 s of the last append.
    const ok = achieved >= rate * 0.97 && growth <= rate * 0.05 && catchUp <= 1;
    const step = {
      rate,
      achieved,
      lagGrowthLinesPerSec: growth,
      medianLagSeconds: median(lagSeconds),
      maxLagSeconds: Math.max(...lagSeconds),
      catchUpSeconds: catchUp,
      cpuSeconds: run.cpu,
      cpuCores: run.cpu / (writeSeconds + Math.max(0, Math.min(catchUp, 10))),
      maxRssMiB: Math.max(...run.samples.map((s) => s.rss)),
      ok,
    };
    steps.push(step);
    ctx.log(
      `    lag growth ${fmt(growth)} lines/s, median lag ${fmt(step.medianLagSeconds, 2)} s, caught up ${fmt(catchUp, 2)} s after the last append, ${fmt(step.cpuCores, 2)} cores, ${ok ? 'kept up' : 'fell behind'}`,
    );
    if (!ok) break;
  }
  return steps;
}

/**
 * For every append (mark), the first scrape that answered with at least that many lines and was asked after
 * the append: its answer time minus the append time (ms). Resolution ≈ the scrape interval.
 */
function visibility(run) {
  const lat = [];
  let j = 0;
  for (const m of run.marks) {
    while (j < run.samples.length && (run.samples[j].read < m.written || run.samples[j].asked < m.t)) j++;
    if (j >= run.samples.length) break;
    lat.push(run.samples[j].answered - m.t);
  }
  return lat;
}

/** Whether a run kept up: the writer held its rate, lag did not grow by 5 % of the rate per second, all read ≤ 1 s after the last append. */
function keptUp(run) {
  const writeSeconds = run.done?.seconds ?? NaN;
  const achieved = run.done ? run.done.written / writeSeconds : 0;
  const catchUp = run.caughtUp === undefined ? Infinity : (run.caughtUp - run.marks[run.marks.length - 1].t) / 1000;
  const growth = lagGrowth(run);
  return { ok: achieved >= run.rate * 0.97 && growth <= run.rate * 0.05 && catchUp <= 1, achieved, catchUp, growth, writeSeconds };
}

/** `serve` at MEMORY_RATE for MEMORY_SECONDS: its RSS (and whether it kept up). */
async function memory(ctx) {
  ctx.log(`  live: RSS at ${fmt(MEMORY_RATE)} lines/s for ${MEMORY_SECONDS} s …`);
  const run = await followRun(ctx, MEMORY_RATE, MEMORY_SECONDS, 250);
  const k = keptUp(run);
  const rss = run.samples.map((x) => x.rss);
  return {
    rate: MEMORY_RATE,
    seconds: MEMORY_SECONDS,
    maxRssMiB: Math.max(...rss),
    medianRssMiB: median(rss),
    keptUp: k.ok,
    cpuCores: run.cpu / (k.writeSeconds + Math.max(0, Math.min(k.catchUp, 10))),
  };
}

/** SUSTAINED_RUNS runs at SUSTAINED_RATE for SUSTAINED_SECONDS, scraping every 50 ms: kept up, and append → visible. */
async function sustainedRuns(ctx) {
  const runs = [];
  for (let r = 0; r < SUSTAINED_RUNS; r++) {
    ctx.log(`  live: ${fmt(SUSTAINED_RATE)} lines/s for ${SUSTAINED_SECONDS} s, run ${r + 1}/${SUSTAINED_RUNS}, scraping every 50 ms …`);
    const run = await followRun(ctx, SUSTAINED_RATE, SUSTAINED_SECONDS, 50, SUSTAINED_LABELS);
    const k = keptUp(run);
    const lat = visibility(run);
    // Each scrape's own time while the file grows at full rate (the writing period only).
    const end = run.marks.length ? run.marks[run.marks.length - 1].t : run.t0;
    const scrapes = run.samples.filter((x) => x.asked >= run.t0 + 1000 && x.answered <= end).map((x) => x.answered - x.asked);
    const one = {
      ok: k.ok,
      lagGrowthLinesPerSec: k.growth,
      catchUpSeconds: k.catchUp,
      appends: run.marks.length,
      measured: lat.length,
      p50Ms: median(lat),
      p99Ms: quantile(lat, 0.99),
      maxMs: Math.max(...lat),
      scrapes: scrapes.length,
      scrapeP50Ms: median(scrapes),
      scrapeP99Ms: quantile(scrapes, 0.99),
      maxRssMiB: Math.max(...run.samples.map((x) => x.rss)),
      cpuCores: run.cpu / (k.writeSeconds + Math.max(0, Math.min(k.catchUp, 10))),
    };
    ctx.log(
      `    ${one.ok ? 'kept up' : 'fell behind'}; append → visible p50 ${fmt(one.p50Ms)} ms, p99 ${fmt(one.p99Ms)} ms; /metrics p99 ${fmt(one.scrapeP99Ms, 1)} ms; ${fmt(one.cpuCores, 2)} cores, ${fmt(one.maxRssMiB, 1)} MiB`,
    );
    runs.push(one);
  }
  return runs;
}

/**
 * One scrape's time (ms) from the request to the body's last byte, with a client that only counts the bytes:
 * `fetch` plus decoding and splitting each body made this process's own garbage collections show up as
 * 50–110 ms scrapes, one in 60 (curl against the same exporter: p99 12–15 ms; bench/RESULTS.md).
 */
function timedScrape(url, accept) {
  return new Promise((resolve, reject) => {
    const t = now();
    const req = httpGet(url, { agent: false, headers: accept === undefined ? {} : { accept } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => (bytes += chunk.length));
      res.on('end', () => (res.statusCode === 200 && bytes > 0 ? resolve(now() - t) : reject(new Error(`scrape answered ${res.statusCode} with ${bytes} bytes`))));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** /metrics render time with the series of a log spread over `labels` models × 5 routes × 4 cohorts. */
async function render(ctx, { labels, lines }) {
  const file = join(ctx.dataDir, `render-${labels}.ndjson`);
  const config = join(ctx.dataDir, `render-${labels}.yml`);
  writeLog(file, lines, { labels, startMs: Date.now() - 60_000 });
  // Room for every label set: the default bounds (1 000 per family) would fold most into __other__.
  writeFileSync(config, 'metrics:\n  labelValueLimit: 100\n  maxSeriesPerFamily: 20000\n');
  const serve = await startServe(ctx.cli, ctx.root, ['--tail.start-at=start', '--log.level=info', `--config.file=${config}`, file]);
  try {
    ctx.log(`  live: /metrics render time (${labels} models), ${RENDER_SCRAPES} scrapes …`);
    const deadline = now() + 60_000;
    while ((await linesRead(serve.url)) < lines) {
      if (now() > deadline) throw new Error('serve did not read the render log in 60 s');
      await sleep(100);
    }
    const body = await (await fetch(serve.url)).text();
    const series = body.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
    const bytes = Buffer.byteLength(body);
    const times = [];
    const omTimes = [];
    for (let i = 0; i < RENDER_SCRAPES; i++) {
      times.push(await timedScrape(serve.url));
      // As Prometheus scrapes by default: OpenMetrics.
      omTimes.push(await timedScrape(serve.url, OPENMETRICS_ACCEPT));
    }
    return {
      labels,
      series,
      bytes,
      scrapes: RENDER_SCRAPES,
      p50Ms: median(times),
      p99Ms: quantile(times, 0.99),
      maxMs: Math.max(...times),
      omP50Ms: median(omTimes),
      omP99Ms: quantile(omTimes, 0.99),
    };
  } finally {
    await serve.stop();
    rmSync(file, { force: true });
    rmSync(config, { force: true });
  }
}

/** The parts of the live mode, in the order they run; `ctx.parts` picks some (bench/run.mjs --live-parts). */
export const LIVE_PARTS = ['ladder', 'memory', 'sustained', 'render'];

export async function runLive(ctx) {
  const parts = new Set(ctx.parts ?? LIVE_PARTS);
  const steps = parts.has('ladder') ? await sustained(ctx) : [];
  const mem = parts.has('memory') ? await memory(ctx) : undefined;
  const runs = parts.has('sustained') ? await sustainedRuns(ctx) : [];
  const renders = [];
  if (parts.has('render')) for (const size of RENDER_SIZES) renders.push(await render(ctx, size));
  const kept = steps.filter((x) => x.ok);
  const best = kept.length ? kept[kept.length - 1] : undefined;
  const firstFail = steps.find((x) => !x.ok);
  const allLat = runs.map((r) => r.p99Ms);
  const table = [
    '| live measurement | result |',
    '|---|---|',
    ...(steps.length === 0
      ? []
      : [
          `| highest appended rate kept up with (ladder ${RATES.map((r) => `${r / 1000}k`).join(', ')}; ${STEP_SECONDS} s each) | ${best ? `${fmt(best.rate)} lines/s` : 'none'}${firstFail ? ` (fell behind at ${fmt(firstFail.rate)}: lag growth ${fmt(firstFail.lagGrowthLinesPerSec)} lines/s)` : ''} |`,
        ]),
    ...steps.map(
      (x) =>
        `| — at ${fmt(x.rate)} lines/s | lag growth ${fmt(x.lagGrowthLinesPerSec)} lines/s, median lag ${fmt(x.medianLagSeconds, 2)} s, caught up ${fmt(x.catchUpSeconds, 2)} s after the last append; exporter ${fmt(x.cpuCores, 2)} cores (${fmt(x.rate / Math.max(x.cpuCores, 1e-9))} lines per CPU-second), max RSS ${fmt(x.maxRssMiB, 1)} MiB; ${x.ok ? 'kept up' : 'fell behind'} |`,
    ),
    ...(mem === undefined
      ? []
      : [
          `| RSS of \`serve\` at ${fmt(mem.rate)} lines/s for ${mem.seconds} s | max ${fmt(mem.maxRssMiB, 1)} MiB, median ${fmt(mem.medianRssMiB, 1)} MiB; ${fmt(mem.cpuCores, 2)} cores; ${mem.keptUp ? 'kept up' : 'fell behind'} |`,
        ]),
    ...(runs.length === 0
      ? []
      : [
          `| ${fmt(SUSTAINED_RATE)} lines/s for ${SUSTAINED_SECONDS} s, ~5 300 series, ${runs.length} runs | kept up in ${runs.filter((r) => r.ok).length} of ${runs.length}; append → visible in /metrics p99 per run ${allLat.map((x) => `${fmt(x)} ms`).join(', ')}; /metrics p99 per run ${runs.map((r) => `${fmt(r.scrapeP99Ms, 1)} ms`).join(', ')} |`,
        ]),
    ...runs.map(
      (r, i) =>
        `| — run ${i + 1} | ${r.ok ? 'kept up' : 'fell behind'} (lag growth ${fmt(r.lagGrowthLinesPerSec)} lines/s, caught up ${fmt(r.catchUpSeconds, 2)} s after the last append); append → visible p50 ${fmt(r.p50Ms)} ms, p99 ${fmt(r.p99Ms)} ms, max ${fmt(r.maxMs)} ms (${fmt(r.measured)} appends); /metrics p50 ${fmt(r.scrapeP50Ms, 1)} ms, p99 ${fmt(r.scrapeP99Ms, 1)} ms (${fmt(r.scrapes)} scrapes); ${fmt(r.cpuCores, 2)} cores; max RSS ${fmt(r.maxRssMiB, 1)} MiB |`,
    ),
    ...renders.map(
      (ren) =>
        `| /metrics render, ${fmt(ren.series)} series (${fmt(ren.bytes / 1024)} KiB), ${ren.scrapes} scrapes | text: p50 ${fmt(ren.p50Ms, 1)} ms, p99 ${fmt(ren.p99Ms, 1)} ms, max ${fmt(ren.maxMs, 1)} ms; OpenMetrics: p50 ${fmt(ren.omP50Ms, 1)} ms, p99 ${fmt(ren.omP99Ms, 1)} ms |`,
    ),
  ].join('\n');
  return { steps, memory: mem, sustained: runs, renders, table };
}
