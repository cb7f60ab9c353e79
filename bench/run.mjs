#!/usr/bin/env node
// `npm run bench`: `zero-plane-exporter report` on every log shape of bench/shapes.mjs against the
// `readline` + `JSON.parse` baseline, `mtail --one_shot` and a plain `Buffer.indexOf('\n')` pass (the
// ceiling of any line reader), side by side in the same run; `report` over 30 files at once; then the
// live (`serve`) figures. Absolute numbers drift between runs on a shared 2-core
// machine, so the targets are ratios of contenders run in alternation (A B C, B C A, C A B, …) and
// compared round by round, and the run prints the load average before and after.
//
//   npm run bench [-- --shapes a,b] [--lines N] [--rounds R] [--no-mtail] [--no-files] [--no-live]
//                    [--live-parts ladder,memory,sustained,render] [--growth] [--compare BIN] [--json FILE]
//
//   --shapes a,b  only these shapes (default: all of bench/shapes.mjs)
//   --lines N     lines of the default shape (default 1 000 000, ~357 MB); every other shape gets a file of
//                 about as many bytes (so ~4 KB lines make ~89 000 lines), rounded to 1 000 lines
//   --rounds R    alternating rounds (default 5)
//   --no-mtail    skip mtail (it is ~8× slower than the rest, so it dominates the run time)
//   --no-files    skip `report` over 30 files at once
//   --no-live     skip the live (serve) measurements; --live-parts picks some of them (bench/live.mjs)
//   --serve-arg A give `serve` this argument too in the live part (repeatable), e.g. --serve-arg=--parse.workers=0
//   --no-idle     skip idle `serve` over 1 500 unchanging files (bench/idle-files.mjs, this build alone)
//   --growth      only the memory runs: one `report` per shape over 10× the lines (10M of the default
//                 shape, ~3.6 GB each, written then removed one shape at a time), RSS sampled as it runs
//   --compare BIN also run `node BIN report` (another build, e.g. of the parent commit) in the rounds,
//                 and print report ÷ that build: before/after ratios from the same run
//   --json FILE   also write every measurement as JSON
//
// Needs: Node ≥ 20, GNU time at /usr/bin/time (Debian `time`), and for the mtail column Debian `mtail`.
// Logs go to .tmp/bench-data/ (git-ignored) and are reused while their generator version and size match.
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fallbackShare } from './fallback-share.mjs';
import { GENERATOR_VERSION } from './generate-log.mjs';
import { runIdle } from './idle-files.mjs';
import { LIVE_PARTS, runLive } from './live.mjs';
import { ensureShape as ensureShapeFile, lineBytes, SHAPES, SHAPES_VERSION, writeShape } from './shapes.mjs';
import { median } from './stats.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = join(ROOT, '.tmp', 'bench-data');
const CLI = join(ROOT, 'bin', 'zero-plane-exporter.js');
const TIME = '/usr/bin/time';
const ONE_THREAD = { ZP_REPORT_PARALLEL_MIN_BYTES: String(Number.MAX_SAFE_INTEGER) };
/** `report` over this many files at once (each ≥ 32 MiB, so each is read on two threads). */
const FILES = 30;
const FILE_LINES = 100_000;

/** The targets of issue 16, checked on every run. */
const TARGET = { perCore: 1.5, perProcess: 1.5, rssMiB: 100, mtailPerCore: 6, sustainedP99Ms: 1000, sustainedScrapeP99Ms: 50, render5kP99Ms: 50, render50kP99Ms: 250, idleCpuPct: 3 };

function parseArgs(argv) {
  const a = {
    shapes: Object.keys(SHAPES),
    lines: 1_000_000,
    rounds: 5,
    mtail: true,
    files: true,
    live: true,
    idle: true,
    serveArgs: [],
    liveParts: LIVE_PARTS,
    growth: false,
    compare: undefined,
    json: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--shapes') a.shapes = value().split(',');
    else if (flag === '--lines') a.lines = Number(value());
    else if (flag === '--rounds') a.rounds = Number(value());
    else if (flag === '--no-mtail') a.mtail = false;
    else if (flag === '--no-files') a.files = false;
    else if (flag === '--no-live') a.live = false;
    else if (flag === '--no-idle') a.idle = false;
    else if (flag === '--serve-arg') a.serveArgs.push(inline === undefined ? argv[++i] : argv[i].slice('--serve-arg='.length));
    else if (flag === '--live-parts') a.liveParts = value().split(',');
    else if (flag === '--growth') a.growth = true;
    else if (flag === '--json') a.json = value();
    else if (flag === '--compare') a.compare = resolve(value());
    else throw new Error(`unknown flag ${flag} (see the header of bench/run.mjs)`);
  }
  for (const s of a.shapes) if (!(s in SHAPES)) throw new Error(`unknown shape ${s} (one of ${Object.keys(SHAPES).join(', ')})`);
  for (const p of a.liveParts) if (!LIVE_PARTS.includes(p)) throw new Error(`unknown live part ${p} (one of ${LIVE_PARTS.join(', ')})`);
  if (!Number.isInteger(a.lines) || a.lines < 1000) throw new Error('--lines must be an integer ≥ 1000');
  if (!Number.isInteger(a.rounds) || a.rounds < 1) throw new Error('--rounds must be a positive integer');
  return a;
}

const log = (text) => process.stderr.write(`${text}\n`);
const fmt = (x, digits = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : String(x));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

function ensureBuilt() {
  if (existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) return;
  log('dist/ is missing: npm run build');
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
}

function which(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim() || undefined;
}

/** Bytes per line of a shape, from its first 2 000 lines. */
function bytesPerLine(shape) {
  let bytes = 0;
  for (let i = 0; i < 2000; i++) bytes += lineBytes(SHAPES[shape].lineAt(i)).length;
  return bytes / 2000;
}

/** Lines of `shape` for a budget of `lines` default-shape lines: about as many bytes, rounded to 1 000. */
function linesFor(shape, lines) {
  if (shape === 'default') return lines;
  return Math.max(1000, Math.round((lines * bytesPerLine('default')) / bytesPerLine(shape) / 1000) * 1000);
}

/** The log of `shape` with `lines` lines in DATA, reused while it is the same generator and size. */
function ensureShape(shape, lines, name = `${shape}-${lines}`) {
  return ensureShapeFile(DATA, shape, lines, { name, onWrite: (file) => log(`generating ${fmt(lines)} ${shape} lines into ${file} …`) });
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

const reportCounts = (stdout) => {
  const r = JSON.parse(stdout);
  return { lines: r.lines, requests: r.requests, hits: r.hits, degraded: r.degradedCount, input: r.input };
};

/** Each contender of a shape: how to run it, and how to read the counts it printed (checked against the report). */
function contenders(shape, file, withMtail, compareBin) {
  const list = [
    {
      key: 'baseline',
      label: 'readline + JSON.parse',
      run: () => timed(process.execPath, [join(ROOT, 'bench', 'baseline-readline.mjs'), file]),
      counts: (stdout) => ({ lines: JSON.parse(stdout).lines }),
    },
    {
      key: 'ceiling',
      label: "`Buffer.indexOf('\\n')` pass (the ceiling)",
      run: () => timed(process.execPath, [join(ROOT, 'bench', 'ceiling-indexof.mjs'), file]),
      counts: (stdout) => ({ lines: JSON.parse(stdout).lines, passCpuSeconds: JSON.parse(stdout).passCpuSeconds }),
    },
    { key: 'report', label: '`report`', run: () => timed(process.execPath, [CLI, 'report', '--format', 'json', file]), counts: reportCounts },
    { key: 'oneThread', label: '`report` held to one thread', run: () => timed(process.execPath, [CLI, 'report', '--format', 'json', file], ONE_THREAD), counts: reportCounts },
  ];
  if (compareBin !== undefined) {
    list.push({
      key: 'compare',
      label: `\`report\` of ${compareBin}, one thread`,
      run: () => timed(process.execPath, [compareBin, 'report', '--format', 'json', file], ONE_THREAD),
      counts: reportCounts,
    });
  }
  const program = SHAPES[shape].mtail;
  if (withMtail && program !== undefined) {
    list.push({
      key: 'mtail',
      label: `\`mtail --one_shot\` (bench/mtail/${program})`,
      run: () =>
        timed('mtail', ['--one_shot', '--one_shot_format', 'prometheus', '--progs', join(ROOT, 'bench', 'mtail', program), '--logs', file, '--address', '127.0.0.1', '--port', '0', '--logtostderr']),
      counts: (stdout) => {
        const value = (re) =>
          stdout
            .split('\n')
            .filter((l) => re.test(l))
            .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
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

/** The alternating rounds of one shape; every contender must count what the report counts. */
function rounds(shape, data, args) {
  const list = contenders(shape, data.file, args.mtail, args.compare);
  const all = [];
  for (let r = 0; r < args.rounds; r++) {
    // Rotate who goes first, so no contender always runs right after the heaviest one.
    const order = list.map((_, i) => list[(i + r) % list.length]);
    const round = {};
    for (const c of order) {
      const m = c.run();
      const counts = c.counts(m.stdout);
      if (counts.lines !== data.lines) throw new Error(`${shape}: ${c.key} read ${counts.lines} lines, expected ${data.lines}`);
      delete m.stdout;
      round[c.key] = { ...m, counts };
      log(`${shape} round ${r + 1}/${args.rounds} ${c.key.padEnd(9)} ${fmt(m.wall, 2)} s wall, ${fmt(m.cpu, 2)} s CPU, ${fmt(m.rssMiB, 1)} MiB`);
    }
    const preset = round.report.counts.input[data.file];
    if (preset !== SHAPES[shape].preset) throw new Error(`${shape}: report read it as ${preset}, not ${SHAPES[shape].preset}`);
    for (const k of Object.keys(round)) {
      if (k === 'baseline' || k === 'ceiling' || k === 'report') continue;
      for (const [name, value] of Object.entries(round[k].counts)) {
        if (name !== 'input' && value !== round.report.counts[name]) throw new Error(`${shape}: ${k} counted ${name}=${value}, report ${round.report.counts[name]}`);
      }
    }
    all.push(round);
  }
  return { contenders: list.map((c) => ({ key: c.key, label: c.label })), rounds: all };
}

/** Medians per contender and paired ratios (per round, then the median): per process = wall, per core = CPU. */
function summarize(data, measured) {
  const rs = measured.rounds;
  const keys = Object.keys(rs[0]);
  const rows = Object.fromEntries(
    keys.map((k) => [
      k,
      {
        linesPerSec: median(rs.map((r) => data.lines / r[k].wall)),
        linesPerCpuSec: median(rs.map((r) => data.lines / r[k].cpu)),
        wall: median(rs.map((r) => r[k].wall)),
        cpu: median(rs.map((r) => r[k].cpu)),
        rssMiB: median(rs.map((r) => r[k].rssMiB)),
        maxRssMiB: Math.max(...rs.map((r) => r[k].rssMiB)),
      },
    ]),
  );
  /** a ÷ b: how many times faster a is than b, per round, then the median. */
  const paired = (a, b) =>
    keys.includes(a) && keys.includes(b)
      ? { wall: median(rs.map((r) => r[b].wall / r[a].wall)), cpu: median(rs.map((r) => r[b].cpu / r[a].cpu)), perRoundCpu: rs.map((r) => r[b].cpu / r[a].cpu) }
      : undefined;
  return {
    rows,
    perCore: paired('oneThread', 'baseline'),
    perProcess: paired('report', 'baseline'),
    twoThreads: paired('report', 'oneThread'),
    mtail: paired('oneThread', 'mtail'),
    compare: paired('oneThread', 'compare'),
  };
}

function matrixTable(results, withCompare) {
  const head = [
    'shape',
    'lines',
    'B/line',
    'fell back to JSON.parse',
    'per core ÷ baseline (one thread)',
    'per process ÷ baseline',
    'two threads ÷ one (wall)',
    'per core ÷ mtail',
    'peak RSS MiB: report / one thread / baseline',
  ];
  if (withCompare) head.push('per core ÷ compared build');
  const lines = [
    `| ${head.join(' | ')} |`,
    `|---|${head
      .slice(1)
      .map(() => '---:')
      .join('|')}|`,
  ];
  for (const r of results) {
    const s = r.summary;
    const x = (p, key) => (p === undefined ? '—' : `${fmt(p[key], 2)}×`);
    const cells = [
      r.shape,
      fmt(r.data.lines),
      fmt(r.data.bytes / r.data.lines, 0),
      `${fmt(100 * r.fallback.share, 2)} %`,
      `${x(s.perCore, 'cpu')} (${s.perCore.perRoundCpu.map((v) => fmt(v, 2)).join(' ')})`,
      x(s.perProcess, 'wall'),
      x(s.twoThreads, 'wall'),
      x(s.mtail, 'cpu'),
      `${fmt(s.rows.report.maxRssMiB, 1)} / ${fmt(s.rows.oneThread.maxRssMiB, 1)} / ${fmt(s.rows.baseline.maxRssMiB, 1)}`,
    ];
    if (withCompare) cells.push(x(s.compare, 'cpu'));
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * The physical limit: bytes per CPU-second of a plain `Buffer.indexOf('\n')` pass over each shape's file
 * (bench/ceiling-indexof.mjs), measured in the same rounds, beside what `report` on one thread and the
 * readline baseline reach: the share of the ceiling each gets to.
 */
function ceilingTable(results) {
  const lines = [
    '| shape | B/line | ceiling: the pass alone, MB per CPU-s | with Node start-up | `report` one thread | ÷ ceiling | readline + JSON.parse | ÷ ceiling |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    const rows = r.summary.rows;
    if (rows.ceiling === undefined) continue;
    const pass = median(r.measured.rounds.map((round) => round.ceiling.counts.passCpuSeconds));
    const mb = (cpu) => fmt(r.data.bytes / cpu / 1e6);
    // Against the whole process's CPU (start-up included) of each: what the contender spends beyond finding line ends.
    const share = (row) => `${fmt((100 * rows.ceiling.cpu) / row.cpu, 1)} %`;
    lines.push(
      `| ${r.shape} | ${fmt(r.data.bytes / r.data.lines, 0)} | ${mb(pass)} | ${mb(rows.ceiling.cpu)} | ${mb(rows.oneThread.cpu)} | ${share(rows.oneThread)} | ${mb(rows.baseline.cpu)} | ${share(rows.baseline)} |`,
    );
  }
  return lines.join('\n');
}

function absoluteTable(results) {
  const lines = ['| shape | contender | lines/s (wall) | lines per CPU-second | wall s | CPU s | peak RSS MiB (median / max) |', '|---|---|---:|---:|---:|---:|---:|'];
  for (const r of results) {
    for (const c of r.measured.contenders) {
      const row = r.summary.rows[c.key];
      lines.push(`| ${r.shape} | ${c.label} | ${fmt(row.linesPerSec)} | ${fmt(row.linesPerCpuSec)} | ${fmt(row.wall, 2)} | ${fmt(row.cpu, 2)} | ${fmt(row.rssMiB, 1)} / ${fmt(row.maxRssMiB, 1)} |`);
    }
  }
  return lines.join('\n');
}

/** Runs `report` (two threads where it reads so) over `files`, sampling its RSS from /proc every 250 ms. */
async function sampledReport(files, env = {}) {
  const child = spawn(process.execPath, [CLI, 'report', '--format', 'json', ...files], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
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
  // RSS by tenth of the run: flat after warm-up means no growth with the input.
  const deciles = Array.from({ length: 10 }, (_, i) => {
    const inTenth = samples.filter((s) => s.t >= (i * wall) / 10 && s.t < ((i + 1) * wall) / 10);
    return inTenth.length ? Math.max(...inTenth.map((s) => s.rssMiB)) : NaN;
  });
  const peak = Math.max(...samples.map((s) => s.hwmMiB).filter(Number.isFinite));
  return { lines: report.lines, wall, linesPerSec: report.lines / wall, peakMiB: peak, decilesMiB: deciles };
}

/** `report` over FILES files of the default shape at once: RSS must stay flat, whatever the number of files. */
async function manyFiles() {
  const files = [];
  for (let k = 0; k < FILES; k++) {
    // Different lines in each file: file k holds lines [k × FILE_LINES, (k + 1) × FILE_LINES) of one log.
    const file = join(DATA, `files-${k}-of-${FILES}-${FILE_LINES}.ndjson`);
    const meta = `${file}.meta.json`;
    const want = JSON.stringify({ shapes: SHAPES_VERSION, generator: GENERATOR_VERSION, k, lines: FILE_LINES });
    if (!existsSync(file) || !existsSync(meta) || readFileSync(meta, 'utf8') !== want) {
      writeShape(file, 'default', FILE_LINES, k * FILE_LINES);
      writeFileSync(meta, want);
    }
    files.push(file);
  }
  for (const f of files) await warmPageCache(f);
  log(`report over ${FILES} files at once, RSS sampled every 250 ms …`);
  const r = await sampledReport(files);
  if (r.lines !== FILES * FILE_LINES) throw new Error(`report read ${r.lines} lines of ${FILES} files, expected ${FILES * FILE_LINES}`);
  return { files: FILES, linesPerFile: FILE_LINES, bytes: files.reduce((s, f) => s + statSync(f).size, 0), ...r };
}

/** One `report` per shape over 10× the lines, RSS sampled; each file is written, read and removed in turn. */
async function growth(args) {
  const rows = [];
  for (const shape of args.shapes) {
    const lines = linesFor(shape, args.lines * 10);
    const data = ensureShape(shape, lines, `growth-${shape}-${lines}`);
    await warmPageCache(data.file);
    log(`growth: report over ${fmt(lines)} ${shape} lines (${fmt(data.bytes / 1e9, 2)} GB) …`);
    const r = await sampledReport([data.file]);
    if (r.lines !== lines) throw new Error(`${shape}: report read ${r.lines} lines, expected ${lines}`);
    rows.push({ shape, bytes: data.bytes, ...r });
    rmSync(data.file, { force: true });
    rmSync(`${data.file}.meta.json`, { force: true });
  }
  return rows;
}

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

/** Each target with what this run measured and whether it is met. */
function targetsTable(results, files, live, idle) {
  const rows = [];
  const all = (pick) => results.filter((r) => pick(r) !== undefined).map((r) => [r.shape, pick(r)]);
  const worst = (pairs, better) => pairs.reduce((w, p) => (w === undefined || better(w[1], p[1]) ? p : w), undefined);
  const perCore = all((r) => r.summary.perCore?.cpu);
  if (perCore.length) {
    const w = worst(perCore, (a, b) => b < a);
    rows.push([`per core, one thread: \`report\` ≥ ${TARGET.perCore}× the baseline on every shape`, `lowest ${fmt(w[1], 2)}× (${w[0]})`, perCore.every(([, v]) => v >= TARGET.perCore)]);
  }
  const perProcess = all((r) => r.summary.perProcess?.wall);
  if (perProcess.length) {
    const w = worst(perProcess, (a, b) => b < a);
    rows.push([`per process: \`report\` ≥ ${TARGET.perProcess}× the baseline (idle machine)`, `lowest ${fmt(w[1], 2)}× (${w[0]})`, perProcess.every(([, v]) => v >= TARGET.perProcess)]);
  }
  const rss = all((r) => Math.max(r.summary.rows.report.maxRssMiB, r.summary.rows.oneThread.maxRssMiB));
  if (rss.length) {
    const w = worst(rss, (a, b) => b > a);
    rows.push([`peak RSS of \`report\` ≤ ${TARGET.rssMiB} MiB on every shape`, `highest ${fmt(w[1], 1)} MiB (${w[0]})`, rss.every(([, v]) => v <= TARGET.rssMiB)]);
  }
  if (files !== undefined)
    rows.push([
      `peak RSS ≤ ${TARGET.rssMiB} MiB with ${files.files} files at once, flat`,
      `${fmt(files.peakMiB, 1)} MiB; per tenth ${files.decilesMiB.map((x) => fmt(x, 0)).join(' ')}`,
      files.peakMiB <= TARGET.rssMiB,
    ]);
  const mtail = all((r) => r.summary.mtail?.cpu);
  if (mtail.length) {
    const w = worst(mtail, (a, b) => b < a);
    rows.push([`≥ ${TARGET.mtailPerCore}× mtail per core on every shape mtail reads`, `lowest ${fmt(w[1], 2)}× (${w[0]})`, mtail.every(([, v]) => v >= TARGET.mtailPerCore)]);
  }
  if (live?.memory)
    rows.push([`\`serve\` ≤ ${TARGET.rssMiB} MiB at ${fmt(live.memory.rate)} lines/s`, `max ${fmt(live.memory.maxRssMiB, 1)} MiB`, live.memory.maxRssMiB <= TARGET.rssMiB && live.memory.keptUp]);
  if (live?.sustained?.length) {
    const ok = live.sustained.filter((r) => r.ok).length;
    const p99 = Math.max(...live.sustained.map((r) => r.p99Ms));
    const scrapeP99 = Math.max(...live.sustained.map((r) => r.scrapeP99Ms));
    rows.push([
      `\`serve\` keeps up with 400k lines/s for 60 s in 5 of 5 runs, append → /metrics p99 < 1 s`,
      `${ok} of ${live.sustained.length}; worst p99 ${fmt(p99)} ms`,
      ok === live.sustained.length && live.sustained.length >= 5 && p99 < TARGET.sustainedP99Ms,
    ]);
    rows.push([
      `/metrics p99 < ${TARGET.sustainedScrapeP99Ms} ms at 5k series while \`serve\` parses 400k lines/s`,
      `worst run p99 ${fmt(scrapeP99, 1)} ms`,
      live.sustained.length >= 5 && scrapeP99 < TARGET.sustainedScrapeP99Ms,
    ]);
  }
  for (const ren of live?.renders ?? []) {
    const limit = ren.series < 20_000 ? TARGET.render5kP99Ms : TARGET.render50kP99Ms;
    rows.push([`/metrics p99 < ${limit} ms at ${ren.series < 20_000 ? '5k' : '50k'} series`, `${fmt(ren.series)} series: p99 ${fmt(ren.p99Ms, 1)} ms`, ren.p99Ms < limit]);
  }
  if (idle !== undefined)
    rows.push([
      `idle \`serve\`, ${fmt(idle.files)} files: < ${TARGET.idleCpuPct} % of a core, a new line on /metrics within 1 s`,
      `${fmt(idle.cpu * 100, 1)} %; append → /metrics max ${fmt(idle.maxMs)} ms`,
      idle.cpu * 100 < TARGET.idleCpuPct && idle.maxMs < 1000,
    ]);
  return ['| target | this run | met? |', '|---|---|---|', ...rows.map(([t, v, ok]) => `| ${t} | ${v} | ${ok ? 'yes' : '**no**'} |`)].join('\n');
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
  const loadBefore = load();
  const results = { machine: m, args, load: { before: loadBefore } };
  const out = [`Machine: ${m.nproc} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB RAM, Linux ${m.kernel}, Node ${m.node}, ${m.mtail}. Date: ${m.date}.`];

  if (args.growth) {
    const rows = await growth(args);
    results.growth = rows;
    out.push(
      '',
      `### Memory over 10× the lines (\`npm run bench -- --growth\`)`,
      '',
      '| shape | lines | GB | wall s | lines/s | peak RSS MiB | max RSS per tenth of the run (MiB) |',
      '|---|---:|---:|---:|---:|---:|---|',
      ...rows.map(
        (r) => `| ${r.shape} | ${fmt(r.lines)} | ${fmt(r.bytes / 1e9, 2)} | ${fmt(r.wall, 1)} | ${fmt(r.linesPerSec)} | ${fmt(r.peakMiB, 1)} | ${r.decilesMiB.map((x) => fmt(x, 1)).join(', ')} |`,
      ),
    );
  } else {
    const shapeResults = [];
    for (const shape of args.shapes) {
      const data = ensureShape(shape, linesFor(shape, args.lines));
      await warmPageCache(data.file);
      const fallback = await fallbackShare(data.file, SHAPES[shape].preset);
      const measured = rounds(shape, data, args);
      shapeResults.push({ shape, data, fallback, measured, summary: summarize(data, measured) });
    }
    results.shapes = shapeResults;
    out.push(
      '',
      '### One-shot (`report`) on every shape',
      '',
      `Each shape's file holds about as many bytes as ${fmt(args.lines)} lines of the default shape; page cache warm; ${args.rounds} alternating rounds; ratios paired per round, medians (per core: the rounds in brackets).`,
      '',
      matrixTable(shapeResults, args.compare !== undefined),
      '',
      absoluteTable(shapeResults),
      '',
      "#### The physical limit: one `Buffer.indexOf('\\n')` pass",
      '',
      "MB per CPU-second, CPU medians of the same rounds. \"÷ ceiling\": the ceiling process's CPU over the contender's, both with Node's start-up; a contender at 100 % would do nothing but find the line ends.",
      '',
      ceilingTable(shapeResults),
    );
    let files;
    if (args.files) {
      files = await manyFiles();
      results.files = files;
      out.push(
        '',
        `### \`report\` over ${files.files} files at once`,
        '',
        `${files.files} files of ${fmt(files.linesPerFile)} default-shape lines (${fmt(files.bytes / 1e9, 2)} GB, each read on two threads): ${fmt(files.wall, 1)} s, ${fmt(files.linesPerSec)} lines/s, peak RSS ${fmt(files.peakMiB, 1)} MiB; max RSS per tenth of the run (MiB): ${files.decilesMiB.map((x) => fmt(x, 1)).join(', ')}.`,
      );
    }
    let live;
    if (args.live) {
      log('live mode (serve) …');
      live = await runLive({ root: ROOT, cli: CLI, dataDir: DATA, log, parts: args.liveParts, serveArgs: args.serveArgs });
      results.live = live;
      out.push('', '### Live (`serve`)', '', live.table);
    }
    let idle;
    if (args.idle) {
      log('idle serve over 1 500 files …');
      [idle] = await runIdle({ files: 1500, seconds: 30, appends: 20, baseline: 'none' });
      results.idle = idle;
      out.push(
        '',
        '### Idle (`serve`)',
        '',
        `${fmt(idle.files)} files that do not change: ${fmt(idle.cpu * 100, 1)} % of a core over ${idle.seconds} s; a line appended to one of them on /metrics after p50 ${fmt(idle.p50Ms)} ms, p95 ${fmt(idle.p95Ms)} ms, max ${fmt(idle.maxMs)} ms.`,
      );
    }
    out.push('', '### Targets', '', targetsTable(shapeResults, files, live, idle));
  }
  results.load.after = load();
  out.push('', `Load average (1/5/15 min) before: ${results.load.before}; after: ${results.load.after}. Other work on the machine shows up here.`);
  if (args.json) writeFileSync(args.json, JSON.stringify(results, null, 2));
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
