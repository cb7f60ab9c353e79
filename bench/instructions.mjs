#!/usr/bin/env node
// Instructions per line, counted by valgrind (cachegrind without cache simulation): repeatable whatever
// else runs on the machine, unlike CPU seconds, so a change to the hot path can be judged on a loaded box.
// Each contender runs bench/steady-state.mjs over one shape's lines R1 and R2 times; (Ir(R2) − Ir(R1)) /
// ((R2 − R1) × lines) is the cost of a line in steady state, without start-up, file reads or warm-up.
// Node runs with --single-threaded: cachegrind counts every thread, and V8's background compiler and GC
// threads otherwise made one build's count vary 3× between runs (within 2 % with the flag).
// Instructions are not time (cache misses and branches differ), so the final figures are CPU seconds
// from `npm run bench`; this is the tool for A/B while the machine is busy.
//
//   node bench/instructions.mjs [--shapes a,b] [--lines 20000] [--r1 2] [--r2 5] [--contenders baseline,report]
//
// Needs valgrind (Debian `valgrind`). A shape takes about a minute per contender.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHAPES, writeShape } from './shapes.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = join(ROOT, '.tmp', 'bench-data', 'instructions');

function parseArgs(argv) {
  const a = { shapes: Object.keys(SHAPES), lines: 20_000, r1: 2, r2: 5, contenders: ['baseline', 'report'] };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--shapes') a.shapes = value().split(',');
    else if (flag === '--lines') a.lines = Number(value());
    else if (flag === '--r1') a.r1 = Number(value());
    else if (flag === '--r2') a.r2 = Number(value());
    else if (flag === '--contenders') a.contenders = value().split(',');
    else throw new Error(`unknown flag ${flag} (see the header of bench/instructions.mjs)`);
  }
  if (!(a.r2 > a.r1 && a.r1 >= 1)) throw new Error('need --r2 > --r1 ≥ 1');
  return a;
}

/** Instructions (Ir) of one steady-state run under cachegrind. */
function instructions(contender, file, preset, rounds, lines) {
  const out = join(DATA, `cg-${process.pid}.out`);
  const r = spawnSync(
    'valgrind',
    ['--tool=cachegrind', '--cache-sim=no', `--cachegrind-out-file=${out}`, process.execPath, '--single-threaded', join(ROOT, 'bench', 'steady-state.mjs'), contender, file, preset, String(rounds)],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (r.status !== 0) throw new Error(`steady-state ${contender} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const seen = JSON.parse(r.stdout).lines;
  if (seen !== lines * rounds) throw new Error(`${contender} saw ${seen} lines, expected ${lines * rounds}`);
  const summary = readFileSync(out, 'utf8').match(/^summary:\s+(\d+)/m);
  rmSync(out, { force: true });
  if (summary === null) throw new Error('no cachegrind summary');
  return Number(summary[1]);
}

const args = parseArgs(process.argv.slice(2));
mkdirSync(DATA, { recursive: true });
const rows = [];
for (const shape of args.shapes) {
  const file = join(DATA, `${shape}-${args.lines}.ndjson`);
  writeShape(file, shape, args.lines);
  const row = { shape };
  for (const c of args.contenders) {
    const a = instructions(c, file, SHAPES[shape].preset, args.r1, args.lines);
    const b = instructions(c, file, SHAPES[shape].preset, args.r2, args.lines);
    row[c] = (b - a) / ((args.r2 - args.r1) * args.lines);
    process.stderr.write(`${shape} ${c}: ${Math.round(row[c])} instructions per line\n`);
  }
  rmSync(file, { force: true });
  rows.push(row);
}
const fmt = (x) => Math.round(x).toLocaleString('en-US');
console.log(`| shape | ${args.contenders.map((c) => `${c} instructions/line`).join(' | ')} |${args.contenders.includes('baseline') && args.contenders.includes('report') ? ' baseline ÷ report |' : ''}`);
console.log(`|---|${args.contenders.map(() => '---:').join('|')}|${args.contenders.includes('baseline') && args.contenders.includes('report') ? '---:|' : ''}`);
for (const r of rows) {
  const ratio = r.baseline !== undefined && r.report !== undefined ? ` ${(r.baseline / r.report).toFixed(2)} |` : '';
  console.log(`| ${r.shape} | ${args.contenders.map((c) => fmt(r[c])).join(' | ')} |${ratio}`);
}
