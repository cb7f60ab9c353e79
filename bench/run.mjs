#!/usr/bin/env node
// `npm run bench`: throughput of `zero-plane-exporter report` against the `readline` + `JSON.parse`
// ceiling and against `mtail --one_shot`, side by side in the same run, then the live (`serve`) figures.
// Absolute numbers drift ±25 % between runs on shared 2-core machines, so the targets are ratios of
// contenders run in alternation (A B C, B C A, C A B, …) and compared round by round.
//
//   npm run bench [-- --lines N] [--rounds R] [--no-mtail] [--no-one-thread] [--no-live] [--growth]
//                    [--compare BIN] [--json FILE]
//
//   --lines N    lines in the generated log (default 1 000 000, ~357 MB)
//   --rounds R   alternating rounds (default 5)
//   --no-mtail   skip mtail (it is ~5× slower than the rest, so it dominates the run time)
//   --no-one-thread  skip the row of `report` held to one thread (ZP_REPORT_PARALLEL_MIN_BYTES): the
//                figure to compare per core, as `report` reads files ≥ 32 MiB on two threads
//   --no-live    skip the live (serve) measurements
//   --growth     only the memory-growth run: one `report` over the log with RSS sampled as it runs
//                (use with --lines 10000000)
//   --compare BIN  also run `node BIN report` (another build, e.g. of the parent commit) in the rounds,
//                and print report ÷ that build: before/after ratios from the same run
//   --json FILE  also write every measurement as JSON
//
// Needs: Node ≥ 20, GNU time at /usr/bin/time (Debian `time`), and for the mtail column Debian `mtail`.
// The log goes to .tmp/bench-data/ (git-ignored) and is reused while its generator version and size match.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync, createReadStream, rmSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATOR_VERSION, writeLog } from './generate-log.mjs';
import { runLive } from './live.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = join(ROOT, '.tmp', 'bench-data');
const CLI = join(ROOT, 'bin', 'zero-plane-exporter.js');
const TIME = '/usr/bin/time';

function parseArgs(argv) {
  const a = { lines: 1_000_000, rounds: 5, mtail: true, oneThread: true, live: true, growth: false, compare: undefined, json: undefined };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--lines') a.lines = Number(value());
    else if (flag === '--rounds') a.rounds = Number(value());
    else if (flag === '--no-mtail') a.mtail = false;
    else if (flag === '--no-one-thread') a.oneThread = false;
    else if (flag === '--no-live') a.live = false;
    else if (flag === '--growth') a.growth = true;
    else if (flag === '--json') a.json = value();
    else if (flag === '--compare') a.compare = resolve(value());
    else throw new Error(`unknown flag ${flag} (see the header of bench/run.mjs)`);
  }
  if (!Number.isInteger(a.lines) || a.lines < 1000) throw new Error('--lines must be an integer ≥ 1000');
  if (!Number.isInteger(a.rounds) || a.rounds < 1) throw new Error('--rounds must be a positive integer');
  return a;
}

const log = (text) => process.stderr.write(`${text}\n`);

function ensureBuilt() {
  if (existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) return;
  log('dist/ is missing: npm run build');
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
}

function which(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim() || undefined;
}

/** The generated log for `lines`, reused when its sidecar says it is the same generator and size. */
function ensureLog(lines) {
  mkdirSync(DATA, { recursive: true });
  const file = join(DATA, `gateway-${lines}.ndjson`);
  const metaFile = `${file}.meta.json`;
  const want = { generator: GENERATOR_VERSION, lines };
  if (existsSync(file) && existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
    if (meta.generator === want.generator && meta.lines === lines && meta.bytes === statSync(file).size) return { file, bytes: meta.bytes };
  }
  log(`generating ${lines} lines into ${file} …`);
  const bytes = writeLog(file, lines);
  writeFileSync(metaFile, JSON.stringify({ ...want, bytes }));
  return { file, bytes };
}

/** Reads the file once so every contender starts from the page cache. */
async function warmPageCache(file) {
  for await (const _ of createReadStream(file, { highWaterMark: 1 << 20 })) void _;
}

/** Runs one command under GNU time; wall and CPU seconds, peak RSS, and its stdout. */
function timed(cmd, args, env = {}) {
  const out = join(DATA, `time-${process.pid}.txt`);
  const r = spawnSync(TIME, ['-f', '%e %U %S %M', '-o', out, cmd, ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const [wall, user, sys, maxKiB] = readFileSync(out, 'utf8').trim().split('\n').pop().split(' ').map(Number);
  rmSync(out, { force: true });
  return { wall, cpu: user + sys, user, sys, rssMiB: maxKiB / 1024, stdout: r.stdout };
}

/** Each contender: how to run it, and how to read the counts it printed (checked against the report). */
function contenders(file, withMtail, withOneThread, compareBin) {
  const reportCounts = (stdout) => {
    const r = JSON.parse(stdout);
    return { lines: r.lines, requests: r.requests, hits: r.hits, degraded: r.degradedCount };
  };
  const list = [
    {
      key: 'baseline',
      label: 'readline + JSON.parse (Node baseline)',
      run: () => timed(process.execPath, [join(ROOT, 'bench', 'baseline-readline.mjs'), file]),
      counts: (stdout) => ({ lines: JSON.parse(stdout).lines }),
    },
    {
      key: 'report',
      label: '`zero-plane-exporter report`',
      run: () => timed(process.execPath, [CLI, 'report', '--format', 'json', file]),
      counts: reportCounts,
    },
  ];
  if (compareBin !== undefined) {
    list.push({
      key: 'compare',
      label: `\`report\` of the build at ${compareBin.startsWith(ROOT) ? compareBin.slice(ROOT.length + 1) : compareBin}`,
      run: () => timed(process.execPath, [compareBin, 'report', '--format', 'json', file]),
      counts: reportCounts,
    });
  }
  if (withOneThread) {
    list.push({
      key: 'oneThread',
      label: '`report` held to one thread',
      run: () => timed(process.execPath, [CLI, 'report', '--format', 'json', file], { ZP_REPORT_PARALLEL_MIN_BYTES: String(Number.MAX_SAFE_INTEGER) }),
      counts: reportCounts,
    });
  }
  if (withMtail) {
    list.push({
      key: 'mtail',
      label: '`mtail --one_shot` (regex program)',
      run: () =>
        timed('mtail', ['--one_shot', '--one_shot_format', 'prometheus', '--progs', join(ROOT, 'bench', 'mtail'), '--logs', file, '--address', '127.0.0.1', '--port', '0', '--logtostderr']),
      counts: (stdout) => {
        const value = (re) => stdout.split('\n').filter((l) => re.test(l)).reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
        return {
          lines: value(/^zero_plane_exporter_lines_total\{/),
          requests: value(/^zero_plane_requests_total\{/),
          hits: value(/^zero_plane_requests_total\{hit="true"/),
          degraded: value(/^zero_plane_degraded_requests_total\{/),
        };
      },
    });
  }
  return list;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function machine() {
  const cpuModel = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? cpus()[0]?.model ?? 'unknown';
  const mtail = which('mtail') ? spawnSync('mtail', ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0] : 'not installed';
  return {
    date: new Date().toISOString(),
    nproc: Number(spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()),
    cpuModel,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    mtail,
    kernel: spawnSync('uname', ['-r'], { encoding: 'utf8' }).stdout.trim(),
  };
}

const fmt = (x, digits = 0) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function offline(args, logFile) {
  const list = contenders(logFile.file, args.mtail, args.oneThread, args.compare);
  const rounds = [];
  for (let r = 0; r < args.rounds; r++) {
    // Rotate who goes first, so no contender always runs right after the heaviest one.
    const order = list.map((_, i) => list[(i + r) % list.length]);
    const round = {};
    for (const c of order) {
      const m = c.run();
      const counts = c.counts(m.stdout);
      if (counts.lines !== args.lines) throw new Error(`${c.key} read ${counts.lines} lines, expected ${args.lines}`);
      delete m.stdout;
      round[c.key] = { ...m, counts };
      log(`round ${r + 1}/${args.rounds} ${c.key.padEnd(8)} ${fmt(m.wall, 2)} s wall, ${fmt(m.cpu, 2)} s CPU, ${fmt(m.rssMiB, 1)} MiB`);
    }
    // Everyone must have counted what the report counted, or the comparison means nothing.
    for (const k of Object.keys(round)) {
      if (k === 'baseline' || k === 'report') continue;
      for (const [name, value] of Object.entries(round[k].counts)) {
        if (value !== round.report.counts[name]) throw new Error(`${k} counted ${name}=${value}, report ${round.report.counts[name]}`);
      }
    }
    rounds.push(round);
  }
  return rounds;
}

function summarize(args, logFile, rounds) {
  const keys = Object.keys(rounds[0]);
  const rows = keys.map((k) => {
    const lps = rounds.map((r) => args.lines / r[k].wall);
    return {
      key: k,
      linesPerSec: median(lps),
      mbPerSec: median(rounds.map((r) => logFile.bytes / 1e6 / r[k].wall)),
      wall: median(rounds.map((r) => r[k].wall)),
      cpu: median(rounds.map((r) => r[k].cpu)),
      linesPerCpuSec: median(rounds.map((r) => args.lines / r[k].cpu)),
      rssMiB: median(rounds.map((r) => r[k].rssMiB)),
      maxRssMiB: Math.max(...rounds.map((r) => r[k].rssMiB)),
    };
  });
  /** Per-round ratio a/b of lines per second (wall) and per CPU second, then the median over rounds. */
  const paired = (a, b) => ({
    wall: median(rounds.map((r) => r[b].wall / r[a].wall)),
    cpu: median(rounds.map((r) => r[b].cpu / r[a].cpu)),
    perRound: rounds.map((r) => r[b].wall / r[a].wall),
  });
  const ratios = { reportVsBaseline: paired('report', 'baseline') };
  if (keys.includes('mtail')) ratios.reportVsMtail = paired('report', 'mtail');
  if (keys.includes('compare')) {
    ratios.compareVsBaseline = paired('compare', 'baseline');
    ratios.reportVsCompare = paired('report', 'compare');
  }
  if (keys.includes('oneThread')) {
    ratios.oneThreadVsBaseline = paired('oneThread', 'baseline');
    ratios.reportVsOneThread = paired('report', 'oneThread');
  }
  return { rows, ratios };
}

function offlineTable(args, logFile, s, list) {
  const label = Object.fromEntries(list.map((c) => [c.key, c.label]));
  const lines = [
    `Input: ${fmt(args.lines)} lines, ${fmt(logFile.bytes / 1e6, 1)} MB (${fmt(logFile.bytes / args.lines, 1)} B/line), page cache warm; ${args.rounds} alternating rounds, medians.`,
    '',
    '| contender | lines/s (wall) | MB/s | wall s | CPU s | lines per CPU-second | peak RSS MiB (median / max) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...s.rows.map(
      (r) =>
        `| ${label[r.key]} | ${fmt(r.linesPerSec)} | ${fmt(r.mbPerSec, 1)} | ${fmt(r.wall, 2)} | ${fmt(r.cpu, 2)} | ${fmt(r.linesPerCpuSec)} | ${fmt(r.rssMiB, 1)} / ${fmt(r.maxRssMiB, 1)} |`,
    ),
    '',
    '| ratio (paired per round, median) | per process (wall) | per core (CPU) | rounds (wall) |',
    '|---|---:|---:|---|',
    `| report ÷ readline+JSON.parse | ${fmt(s.ratios.reportVsBaseline.wall, 3)}× | ${fmt(s.ratios.reportVsBaseline.cpu, 3)}× | ${s.ratios.reportVsBaseline.perRound.map((x) => fmt(x, 2)).join(' ')} |`,
  ];
  const row = (name, r) => `| ${name} | ${fmt(r.wall, 3)}× | ${fmt(r.cpu, 3)}× | ${r.perRound.map((x) => fmt(x, 2)).join(' ')} |`;
  if (s.ratios.reportVsMtail) lines.push(row('report ÷ mtail', s.ratios.reportVsMtail));
  if (s.ratios.reportVsCompare) {
    lines.push(row('compared build ÷ readline+JSON.parse', s.ratios.compareVsBaseline));
    lines.push(row('report ÷ compared build', s.ratios.reportVsCompare));
  }
  if (s.ratios.oneThreadVsBaseline) {
    lines.push(row('report held to one thread ÷ readline+JSON.parse', s.ratios.oneThreadVsBaseline));
    lines.push(row('report (two threads) ÷ report held to one thread', s.ratios.reportVsOneThread));
  }
  return lines.join('\n');
}

/** One report over the log with its RSS sampled from /proc as it runs: memory must not grow with the input. */
async function growth(logFile, lines) {
  const child = spawn(process.execPath, [CLI, 'report', '--format', 'json', logFile.file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const samples = [];
  const started = performance.now();
  const timer = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kib = (name) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
      samples.push({ t: (performance.now() - started) / 1000, rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 });
    } catch {
      // the process just exited
    }
  }, 250);
  const code = await new Promise((done) => child.on('close', done));
  clearInterval(timer);
  const wall = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`report exited ${code}`);
  const report = JSON.parse(stdout);
  if (report.lines !== lines) throw new Error(`report read ${report.lines} lines, expected ${lines}`);
  // RSS by tenth of the run: flat after warm-up means no growth with the input.
  const deciles = Array.from({ length: 10 }, (_, i) => {
    const inTenth = samples.filter((s) => s.t >= (i * wall) / 10 && s.t < ((i + 1) * wall) / 10);
    return inTenth.length ? Math.max(...inTenth.map((s) => s.rssMiB)) : NaN;
  });
  const peak = Math.max(...samples.map((s) => s.hwmMiB).filter(Number.isFinite));
  return { lines, wall, linesPerSec: lines / wall, peakMiB: peak, decilesMiB: deciles };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(TIME)) throw new Error(`${TIME} not found: apt-get install time`);
  ensureBuilt();
  if (args.mtail && !which('mtail')) {
    log('mtail not found (apt-get install mtail): skipping the mtail column');
    args.mtail = false;
  }
  const m = machine();
  const load = { before: loadavg().map((x) => x.toFixed(2)).join(' ') };
  const logFile = ensureLog(args.lines);
  await warmPageCache(logFile.file);
  const results = { machine: m, args };
  const out = [];
  out.push(`Machine: ${m.nproc} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB RAM, Linux ${m.kernel}, Node ${m.node}, ${m.mtail}. Date: ${m.date}.`);

  if (args.growth) {
    log(`growth run: one report over ${args.lines} lines, RSS sampled every 250 ms …`);
    const g = await growth(logFile, args.lines);
    results.growth = g;
    out.push(
      '',
      `Memory over one \`report\` of ${fmt(g.lines)} lines (${fmt(logFile.bytes / 1e9, 2)} GB): ${fmt(g.wall, 1)} s, ${fmt(g.linesPerSec)} lines/s, peak RSS ${fmt(g.peakMiB, 1)} MiB.`,
      `Max RSS per tenth of the run (MiB): ${g.decilesMiB.map((x) => fmt(x, 1)).join(' | ')}`,
    );
  } else {
    const rounds = await offline(args, logFile);
    const s = summarize(args, logFile, rounds);
    results.rounds = rounds;
    results.summary = s;
    out.push('', '### One-shot (`report`) throughput', '', offlineTable(args, logFile, s, contenders(logFile.file, args.mtail, args.oneThread, args.compare)));
    if (args.live) {
      log('live mode (serve) …');
      const live = await runLive({ root: ROOT, cli: CLI, dataDir: DATA, log });
      results.live = live;
      out.push('', '### Live (`serve`)', '', live.table);
    }
  }
  load.after = loadavg().map((x) => x.toFixed(2)).join(' ');
  results.load = load;
  out.push('', `Load average (1/5/15 min) before: ${load.before}; after: ${load.after}. Other work on the machine shows up here.`);
  if (args.json) writeFileSync(args.json, JSON.stringify(results, null, 2));
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
