#!/usr/bin/env node
// How fast `backtest` and `export` replay a log on its own timeline, against `report` held to one thread
// (the same parse path, no timeline), and whether memory stays flat when the same lines span a month
// instead of a day. Every contender runs under GNU time (wall, CPU, peak RSS), alternating, in rounds.
//
//   node bench/history.mjs [--lines 1000000] [--rounds 3]
//
// Inputs (written once into .tmp/bench-data/, git-ignored): bench/generate-log.mjs's lines with their
// timestamps spread evenly over one day (1M lines: 11.6 requests/s) and over 30 days. Needs dist/ (npm
// run build) and /usr/bin/time.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineAt, writeLines } from './generate-log.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin', 'zero-plane-exporter.js');
const data = join(root, '.tmp', 'bench-data');
const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 1);

function args() {
  const a = { lines: 1_000_000, rounds: 3 };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => Number(inline ?? argv[++i]);
    if (flag === '--lines') a.lines = value();
    else if (flag === '--rounds') a.rounds = value();
    else throw new Error(`unknown flag ${flag}`);
  }
  return a;
}

/** The generator's lines, their timestamps spread evenly over `spanMs`. */
function logOver(lines, spanMs, name) {
  const path = join(data, name);
  if (existsSync(path)) return path;
  mkdirSync(data, { recursive: true });
  writeLines(path, lines, (i) => lineAt(i, { tsMs: START + Math.floor((i * spanMs) / lines) }));
  return path;
}

/** Runs `node bin ARGS` under GNU time, stdout into `out`; wall s, CPU s, peak RSS MiB, output bytes. */
function timed(cliArgs, out, env = {}) {
  const fd = openSync(out, 'w');
  try {
    const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, bin, ...cliArgs], { stdio: ['ignore', fd, 'pipe'], env: { ...process.env, ...env }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cliArgs.join(' ')} exited ${r.status}: ${r.stderr}`);
    const [wall, user, sys, rssKb] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
    return { wall, cpu: user + sys, rss: rssKb / 1024, bytes: statSync(out).size };
  } finally {
    closeSync(fd);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const { lines, rounds } = args();
const day = logOver(lines, DAY, `history-${lines}-1d.log`);
const month = logOver(lines, 30 * DAY, `history-${lines}-30d.log`);
const out = join(data, 'history-out');
const one = { ZP_REPORT_PARALLEL_MIN_BYTES: String(Number.MAX_SAFE_INTEGER) };
const contenders = [
  { name: '`report` held to one thread (1 day)', args: ['report', '--format', 'json', day], env: one },
  { name: '`backtest --format csv` (1 day, 30 s steps)', args: ['backtest', '--format', 'csv', day] },
  { name: '`backtest --format csv` (30 days, 30 s steps)', args: ['backtest', '--format', 'csv', month] },
  { name: '`export --format openmetrics` (1 day, 15 s steps, stdout)', args: ['export', '--format', 'openmetrics', day] },
  {
    name: '`export --format openmetrics --out DIR` (1 day; MB: the files)',
    args: ['export', '--format', 'openmetrics', '--out', join(data, 'history-blocks'), day],
    dir: join(data, 'history-blocks'),
  },
];

// The counts agree: the backtest's records on the timeline are the report's records.
const report = JSON.parse(spawnSync(process.execPath, [bin, 'report', '--format', 'json', day], { encoding: 'utf8', maxBuffer: 1 << 26 }).stdout);
timed(['backtest', '--format', 'json', day], out);
const bt = JSON.parse(readFileSync(out, 'utf8'));
if (bt.records !== report.records) throw new Error(`backtest placed ${bt.records} records, report read ${report.records}`);

const load = loadavg()[0];
const results = contenders.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < contenders.length; k++) {
    const i = (k + r) % contenders.length;
    rmSync(join(data, 'history-blocks'), { recursive: true, force: true });
    const t = timed(contenders[i].args, out, contenders[i].env);
    if (contenders[i].dir !== undefined) t.bytes = readdirSync(contenders[i].dir).reduce((n, f) => n + statSync(join(contenders[i].dir, f)).size, 0);
    results[i].push(t);
  }
}
rmSync(out, { force: true });
rmSync(join(data, 'history-blocks'), { recursive: true, force: true });

const mb = (b) => (b / 1e6).toFixed(1);
process.stdout.write(`${lines.toLocaleString('en')} lines (${mb(statSync(day).size)} MB), ${rounds} rounds, medians; load average ${load.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after\n\n`);
process.stdout.write('| command | wall s | CPU s | s per million lines (wall) | lines/s (wall) | peak RSS MiB | output MB |\n|---|---:|---:|---:|---:|---:|---:|\n');
contenders.forEach((c, i) => {
  const w = median(results[i].map((x) => x.wall));
  const cpu = median(results[i].map((x) => x.cpu));
  const rss = median(results[i].map((x) => x.rss));
  const bytes = median(results[i].map((x) => x.bytes));
  process.stdout.write(`| ${c.name} | ${w.toFixed(2)} | ${cpu.toFixed(2)} | ${((w * 1e6) / lines).toFixed(2)} | ${Math.round(lines / w).toLocaleString('en')} | ${rss.toFixed(1)} | ${mb(bytes)} |\n`);
});
process.stdout.write(
  `\nbacktest records on the timeline: ${bt.records.toLocaleString('en')} (report: ${report.records.toLocaleString('en')}); steps: ${bt.steps.length}; first P0: ${bt.firstP0 === null ? 'never' : bt.firstP0.start}\n`,
);
