#!/usr/bin/env node
// Idle serve: the CPU an idle `serve` spends following many files that do not change, and how soon a line
// appended to one of them shows on /metrics. This build and a baseline build (main's, by default: a
// `git archive main` built in a temp dir) run side by side in one run, each on its own temp dir of files,
// so both see the same machine load.
//
//   node bench/idle-files.mjs [--files 1500] [--seconds 30] [--appends 20] [--baseline ROOT|none] [--ref main]
//
// bench/run.mjs runs it with --baseline none (this build alone) for its idle target, through runIdle().
//
// ROOT is a checkout with dist/ built (bin/zero-plane-exporter.js is run). CPU is utime+stime from
// /proc/PID/stat over the window, after the first scan (the `serving` log line) and 2 s of settling.
// Latency: a line appended to a random file, then /metrics fetched every 10 ms until
// zero_plane_exporter_lines_total grows; the two builds are probed alternately.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineAt } from './generate-log.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
let FILES = 1500;
let REF = 'main';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const temps = [];

/** A build of `ref` in a temp dir: its sources from git, this checkout's node_modules, tsc. */
function buildBaseline() {
  const dir = mkdtempSync(join(tmpdir(), 'zpe-idle-base-'));
  temps.push(dir);
  execFileSync('sh', ['-c', `git -C "${root}" archive ${REF} | tar -x -C "${dir}"`]);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'ignore' });
  return dir;
}

function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function startServe(buildRoot, pattern) {
  const cli = join(buildRoot, 'bin/zero-plane-exporter.js');
  const child = spawn(process.execPath, [cli, 'serve', '--web.listen-address=127.0.0.1:0', '--tail.start-at=end', '--log.level=info', pattern], {
    cwd: buildRoot,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const address = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`serve did not start: ${stderr}`)), 60_000);
    child.stderr.on('data', (d) => {
      stderr += d;
      for (const line of stderr.split('\n')) {
        if (!line.includes('"serving"')) continue;
        clearTimeout(timer);
        res(JSON.parse(line).address);
      }
    });
    child.on('exit', (code) => rej(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { child, url: `http://${address}/metrics` };
}

async function linesRead(url) {
  const body = await (await fetch(url)).text();
  let n = 0;
  for (const line of body.split('\n')) if (line.startsWith('zero_plane_exporter_lines_total{')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

function filesIn(name) {
  const dir = mkdtempSync(join(tmpdir(), `zpe-idle-${name}-`));
  temps.push(dir);
  for (let i = 0; i < FILES; i++) writeFileSync(join(dir, `f${i}.log`), lineAt(i) + '\n');
  return dir;
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

/**
 * Idle CPU (fraction of a core) and append → /metrics latencies (ms) of this build, and of a baseline build
 * unless `baseline` is 'none'; one row per build.
 */
export async function runIdle({ files = 1500, seconds = 30, appends = 20, baseline, ref = 'main' } = {}) {
  FILES = files;
  REF = ref;
  const SECONDS = seconds;
  const APPENDS = appends;
  const runs = [];
  try {
    const builds =
      baseline === 'none'
        ? [['this', root]]
        : [
            ['baseline', baseline ?? buildBaseline()],
            ['this', root],
          ];
    for (const [name, buildRoot] of builds) {
      const dir = filesIn(name);
      runs.push({ name, buildRoot, dir, ...(await startServe(buildRoot, join(dir, '*.log'))), latencies: [] });
    }
    await sleep(2000);
    const before = runs.map((r) => cpuSeconds(r.child.pid));
    await sleep(SECONDS * 1000);
    const cpu = runs.map((r, i) => (cpuSeconds(r.child.pid) - (before[i] ?? 0)) / SECONDS);
    runs.forEach((r, i) => (r.cpu = cpu[i] ?? 0));
    for (let k = 0; k < APPENDS; k++) {
      for (const r of runs) {
        const had = await linesRead(r.url);
        // Just after a poll would be the worst case; a random moment is what a writer does.
        await sleep(Math.random() * 500);
        const t0 = performance.now();
        appendFileSync(join(r.dir, `f${Math.floor(Math.random() * FILES)}.log`), lineAt(FILES + k) + '\n');
        while ((await linesRead(r.url)) <= had && performance.now() - t0 < 10_000) await sleep(10);
        r.latencies.push(performance.now() - t0);
      }
    }
    return runs.map((r) => ({ name: r.name, files: FILES, seconds: SECONDS, cpu: r.cpu, p50Ms: pct(r.latencies, 50), p95Ms: pct(r.latencies, 95), maxMs: Math.max(...r.latencies) }));
  } finally {
    for (const r of runs) r.child.kill('SIGTERM');
    await sleep(300);
    for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = args.indexOf(`--${name}`);
    return i === -1 ? dflt : args[i + 1];
  };
  const rows = await runIdle({
    files: Number(opt('files', 1500)),
    seconds: Number(opt('seconds', 30)),
    appends: Number(opt('appends', 20)),
    baseline: opt('baseline', undefined),
    ref: opt('ref', 'main'),
  });
  const first = rows[0];
  console.log(`idle serve, ${first.files} files, CPU over ${first.seconds} s (${new Date().toISOString()}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
  console.log('| build | CPU (% of a core) | append → /metrics p50 | p95 | max |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.name} | ${(r.cpu * 100).toFixed(1)} | ${r.p50Ms.toFixed(0)} ms | ${r.p95Ms.toFixed(0)} ms | ${r.maxMs.toFixed(0)} ms |`);
  if (rows.length === 2) console.log(`ratio baseline/this CPU: ${(rows[0].cpu / rows[1].cpu).toFixed(2)}x`);
}
