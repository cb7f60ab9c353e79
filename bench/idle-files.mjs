#!/usr/bin/env node
// Idle serve: the CPU an idle `serve` spends following many files that do not change, and how soon a line
// appended to one of them shows on /metrics. This build and a baseline build (main's, by default: a
// `git archive main` built in a temp dir) run side by side in one run, each on its own temp dir of files,
// so both see the same machine load.
//
//   node bench/idle-files.mjs [--files 1500] [--seconds 30] [--appends 20] [--baseline ROOT] [--ref main]
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

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? dflt : args[i + 1];
};
const FILES = Number(opt('files', 1500));
const SECONDS = Number(opt('seconds', 30));
const APPENDS = Number(opt('appends', 20));
const REF = opt('ref', 'main');
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
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

const runs = [];
try {
  const baseRoot = opt('baseline', undefined) ?? buildBaseline();
  for (const [name, buildRoot] of [
    ['baseline', baseRoot],
    ['this', root],
  ]) {
    const dir = filesIn(name);
    runs.push({ name, buildRoot, dir, ...(await startServe(buildRoot, join(dir, '*.log'))), latencies: [] });
  }
  await sleep(2000);
  const before = runs.map((r) => cpuSeconds(r.child.pid));
  await sleep(SECONDS * 1000);
  const cpu = runs.map((r, i) => (cpuSeconds(r.child.pid) - (before[i] ?? 0)) / SECONDS);
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
  console.log(`idle serve, ${FILES} files, CPU over ${SECONDS} s, ${APPENDS} appends (${new Date().toISOString()}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
  console.log('| build | CPU (% of a core) | append → /metrics p50 | p95 | max |');
  console.log('|---|---|---|---|---|');
  runs.forEach((r, i) => {
    const l = r.latencies;
    console.log(`| ${r.name} | ${((cpu[i] ?? 0) * 100).toFixed(1)} | ${pct(l, 50).toFixed(0)} ms | ${pct(l, 95).toFixed(0)} ms | ${Math.max(...l).toFixed(0)} ms |`);
  });
  console.log(`ratio baseline/this CPU: ${((cpu[0] ?? 0) / (cpu[1] ?? 1)).toFixed(2)}x`);
} finally {
  for (const r of runs) r.child.kill('SIGTERM');
  await sleep(300);
  for (const d of temps) rmSync(d, { recursive: true, force: true });
}
