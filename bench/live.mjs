// Live mode for bench/run.mjs: `serve` following a file (start-at end) while bench/live-writer.mjs appends
// at a fixed rate. Everything is read from the outside, the way Prometheus would: lines read come from
// zero_plane_exporter_lines_total on /metrics, CPU from /proc. Every step is bounded in time.
//
//  1. sustained rate: the highest rate of a ladder the exporter keeps up with, with no lag growth
//  2. visibility latency: time from an append to the scrape that first counts it, at 50 000 lines/s
//  3. /metrics render time with ~5 000 series exposed
import { fork, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeLog } from './generate-log.mjs';

const RATES = [25_000, 50_000, 100_000, 150_000, 200_000, 250_000, 300_000, 400_000];
const STEP_SECONDS = 8;
const LATENCY_RATE = 50_000;
const LATENCY_SECONDS = 10;
const RENDER_LABELS = 5; // models; × 5 routes × 4 cohorts (see generate-log.mjs --labels): ~5 300 series exposed
const RENDER_LINES = 100_000;
const RENDER_SCRAPES = 60;

const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};
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

async function linesRead(url) {
  const body = await (await fetch(url)).text();
  let n = 0;
  for (const line of body.split('\n')) if (line.startsWith('zero_plane_exporter_lines_total{')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

/** Runs the writer at `rate` for `seconds` against a fresh file that `serve` follows; samples lag every `pollMs`. */
async function followRun({ root, cli, dataDir }, rate, seconds, pollMs) {
  const file = join(dataDir, `live-${rate}.ndjson`);
  writeFileSync(file, '');
  const serve = await startServe(cli, root, ['--tail.start-at=end', '--log.level=info', file]);
  try {
    await sleep(500); // first poll of the file done: start-at=end has taken its offset
    const cpu0 = cpuSeconds(serve.child.pid);
    const writer = fork(join(root, 'bench', 'live-writer.mjs'), [file, String(rate), String(seconds)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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
    ctx.log(`    lag growth ${fmt(growth)} lines/s, median lag ${fmt(step.medianLagSeconds, 2)} s, caught up ${fmt(catchUp, 2)} s after the last append, ${fmt(step.cpuCores, 2)} cores, ${ok ? 'kept up' : 'fell behind'}`);
    if (!ok) break;
  }
  return steps;
}

async function latency(ctx) {
  ctx.log(`  live: visibility latency at ${fmt(LATENCY_RATE)} lines/s for ${LATENCY_SECONDS} s, scraping every 50 ms …`);
  const run = await followRun(ctx, LATENCY_RATE, LATENCY_SECONDS, 50);
  // For every append (mark), the first scrape that answered with at least that many lines, and was asked
  // after the append: its answer time minus the append time. Resolution ≈ the 50 ms scrape interval.
  const lat = [];
  let j = 0;
  for (const m of run.marks) {
    while (j < run.samples.length && (run.samples[j].read < m.written || run.samples[j].asked < m.t)) j++;
    if (j >= run.samples.length) break;
    lat.push(run.samples[j].answered - m.t);
  }
  return { rate: LATENCY_RATE, appends: run.marks.length, measured: lat.length, p50Ms: median(lat), p99Ms: quantile(lat, 0.99), maxMs: Math.max(...lat) };
}

async function render(ctx) {
  const file = join(ctx.dataDir, 'render-series.ndjson');
  writeLog(file, RENDER_LINES, { labels: RENDER_LABELS, startMs: Date.now() - 60_000 });
  const serve = await startServe(ctx.cli, ctx.root, ['--tail.start-at=start', '--log.level=info', file]);
  try {
    ctx.log(`  live: /metrics render time, ${RENDER_SCRAPES} scrapes …`);
    const deadline = now() + 30_000;
    while ((await linesRead(serve.url)) < RENDER_LINES) {
      if (now() > deadline) throw new Error('serve did not read the render log in 30 s');
      await sleep(100);
    }
    const times = [];
    let series = 0;
    let bytes = 0;
    for (let i = 0; i < RENDER_SCRAPES; i++) {
      const t = now();
      const body = await (await fetch(serve.url)).text();
      times.push(now() - t);
      series = body.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
      bytes = Buffer.byteLength(body);
    }
    return { series, bytes, scrapes: RENDER_SCRAPES, p50Ms: median(times), p99Ms: quantile(times, 0.99), maxMs: Math.max(...times) };
  } finally {
    await serve.stop();
    rmSync(file, { force: true });
  }
}

export async function runLive(ctx) {
  const steps = await sustained(ctx);
  const lat = await latency(ctx);
  const ren = await render(ctx);
  const kept = steps.filter((s) => s.ok);
  const best = kept.length ? kept[kept.length - 1] : undefined;
  const firstFail = steps.find((s) => !s.ok);
  const table = [
    '| live measurement | result |',
    '|---|---|',
    `| highest appended rate kept up with (ladder ${RATES.map((r) => `${r / 1000}k`).join(', ')}; ${STEP_SECONDS} s each) | ${best ? `${fmt(best.rate)} lines/s` : 'none'}${firstFail ? ` (fell behind at ${fmt(firstFail.rate)}: lag growth ${fmt(firstFail.lagGrowthLinesPerSec)} lines/s)` : ''} |`,
    ...steps.map(
      (s) =>
        `| — at ${fmt(s.rate)} lines/s | lag growth ${fmt(s.lagGrowthLinesPerSec)} lines/s, median lag ${fmt(s.medianLagSeconds, 2)} s, caught up ${fmt(s.catchUpSeconds, 2)} s after the last append; exporter ${fmt(s.cpuCores, 2)} cores (${fmt(s.rate / Math.max(s.cpuCores, 1e-9))} lines per CPU-second), max RSS ${fmt(s.maxRssMiB, 1)} MiB; ${s.ok ? 'kept up' : 'fell behind'} |`,
    ),
    `| append → visible in /metrics at ${fmt(lat.rate)} lines/s (${fmt(lat.measured)} appends, 50 ms scrapes) | p50 ${fmt(lat.p50Ms)} ms, p99 ${fmt(lat.p99Ms)} ms, max ${fmt(lat.maxMs)} ms |`,
    `| /metrics render, ${fmt(ren.series)} series (${fmt(ren.bytes / 1024)} KiB), ${ren.scrapes} scrapes | p50 ${fmt(ren.p50Ms, 1)} ms, p99 ${fmt(ren.p99Ms, 1)} ms, max ${fmt(ren.maxMs, 1)} ms |`,
  ].join('\n');
  return { steps, latency: lat, render: ren, table };
}
