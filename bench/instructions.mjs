#!/usr/bin/env node
// Instructions per line, counted by valgrind (cachegrind without cache simulation): repeatable whatever
// else runs on the machine, unlike CPU seconds, so a change to the hot path can be judged on a loaded box.
// Each contender runs bench/steady-state.mjs over one shape's lines R1 and R2 times; (Ir(R2) − Ir(R1)) /
// ((R2 − R1) × lines) is the cost of a line in steady state, without start-up, file reads or warm-up.
// Node runs with --single-threaded: cachegrind counts every thread, and V8's background compiler and GC
// threads otherwise made one build's count vary 3× between runs (within 2 % with the flag).
// Instructions are not time (cache misses and branches differ), so the final figures are CPU seconds
// from `npm run bench`; this is the tool for A/B while the machine is busy. --cache-sim also simulates the
// caches and branch predictor (valgrind's model of this CPU's L1 sizes, ~2× slower) and adds, per line,
// instruction- and data-cache (L1) misses and mispredicted conditional branches: where instructions and
// CPU seconds disagree, these say why (bench/RESULTS.md, 20:00 UTC section).
//
//   node bench/instructions.mjs [--shapes a,b] [--lines 20000] [--r1 2] [--r2 5] [--contenders baseline,report] [--cache-sim]
//
// Needs valgrind (Debian `valgrind`). A shape takes about a minute per contender (two with --cache-sim).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHAPES, writeShape } from './shapes.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = join(ROOT, '.tmp', 'bench-data', 'instructions');

function parseArgs(argv) {
  const a = { shapes: Object.keys(SHAPES), lines: 20_000, r1: 2, r2: 5, contenders: ['baseline', 'report'], cacheSim: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--shapes') a.shapes = value().split(',');
    else if (flag === '--lines') a.lines = Number(value());
    else if (flag === '--r1') a.r1 = Number(value());
    else if (flag === '--r2') a.r2 = Number(value());
    else if (flag === '--contenders') a.contenders = value().split(',');
    else if (flag === '--cache-sim') a.cacheSim = true;
    else throw new Error(`unknown flag ${flag} (see the header of bench/instructions.mjs)`);
  }
  if (!(a.r2 > a.r1 && a.r1 >= 1)) throw new Error('need --r2 > --r1 ≥ 1');
  return a;
}

/** Events counted per line: instructions, and with --cache-sim L1 misses and mispredicted conditional branches. */
const EVENTS = { Ir: 'instructions', I1mr: 'I1 misses', D1mr: 'D1 read misses', Bcm: 'mispredicted branches' };

/** The cachegrind totals (by event name) of one steady-state run. */
function counts(contender, file, preset, rounds, lines, cacheSim) {
  const out = join(DATA, `cg-${process.pid}.out`);
  const sim = cacheSim ? ['--cache-sim=yes', '--branch-sim=yes'] : ['--cache-sim=no'];
  const r = spawnSync(
    'valgrind',
    ['--tool=cachegrind', ...sim, `--cachegrind-out-file=${out}`, process.execPath, '--single-threaded', join(ROOT, 'bench', 'steady-state.mjs'), contender, file, preset, String(rounds)],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (r.status !== 0) throw new Error(`steady-state ${contender} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const seen = JSON.parse(r.stdout).lines;
  if (seen !== lines * rounds) throw new Error(`${contender} saw ${seen} lines, expected ${lines * rounds}`);
  const text = readFileSync(out, 'utf8');
  rmSync(out, { force: true });
  const names = text
    .match(/^events:\s+(.+)$/m)?.[1]
    .trim()
    .split(/\s+/);
  const values = text
    .match(/^summary:\s+(.+)$/m)?.[1]
    .trim()
    .split(/\s+/)
    .map(Number);
  if (names === undefined || values === undefined) throw new Error('no cachegrind summary');
  return Object.fromEntries(names.map((n, i) => [n, values[i]]));
}

const args = parseArgs(process.argv.slice(2));
mkdirSync(DATA, { recursive: true });
const rows = [];
for (const shape of args.shapes) {
  const file = join(DATA, `${shape}-${args.lines}.ndjson`);
  writeShape(file, shape, args.lines);
  const row = { shape };
  for (const c of args.contenders) {
    const a = counts(c, file, SHAPES[shape].preset, args.r1, args.lines, args.cacheSim);
    const b = counts(c, file, SHAPES[shape].preset, args.r2, args.lines, args.cacheSim);
    const perLine = (event) => ((b[event] ?? NaN) - (a[event] ?? NaN)) / ((args.r2 - args.r1) * args.lines);
    row[c] = perLine('Ir');
    for (const e of Object.keys(EVENTS).slice(1)) if (args.cacheSim) row[`${c} ${e}`] = perLine(e);
    process.stderr.write(`${shape} ${c}: ${Math.round(row[c])} instructions per line\n`);
  }
  rmSync(file, { force: true });
  rows.push(row);
}
const fmt = (x) => Math.round(x).toLocaleString('en-US');
console.log(
  `| shape | ${args.contenders.map((c) => `${c} instructions/line`).join(' | ')} |${args.contenders.includes('baseline') && args.contenders.includes('report') ? ' baseline ÷ report |' : ''}`,
);
console.log(`|---|${args.contenders.map(() => '---:').join('|')}|${args.contenders.includes('baseline') && args.contenders.includes('report') ? '---:|' : ''}`);
for (const r of rows) {
  const ratio = r.baseline !== undefined && r.report !== undefined ? ` ${(r.baseline / r.report).toFixed(2)} |` : '';
  console.log(`| ${r.shape} | ${args.contenders.map((c) => fmt(r[c])).join(' | ')} |${ratio}`);
}
if (args.cacheSim) {
  const events = Object.keys(EVENTS).slice(1);
  console.log(`\nPer line, simulated (valgrind's cache and branch model):\n`);
  console.log(`| shape | contender | ${events.map((e) => EVENTS[e]).join(' | ')} |`);
  console.log(`|---|---|${events.map(() => '---:').join('|')}|`);
  for (const r of rows) for (const c of args.contenders) console.log(`| ${r.shape} | ${c} | ${events.map((e) => fmt(r[`${c} ${e}`])).join(' | ')} |`);
}
