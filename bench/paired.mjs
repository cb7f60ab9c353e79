#!/usr/bin/env node
// CPU seconds of two builds' `report` on the same lines, in pairs run one right after the other: on a
// machine whose speed drifts (this VM: ±20 % between rounds of the same build), the ratio within a pair
// is steadier than either figure. Each run is bench/steady-state.mjs (one thread, the file held in memory,
// R rounds) under GNU time; a pair's ratio is CPU(A) ÷ CPU(B), so above 1 means B is faster.
//   node bench/paired.mjs ROOT_A ROOT_B [--shapes a,b] [--lines 300000] [--rounds 2] [--pairs 8]
// ROOT_*: checkouts with dist/ built (e.g. `git worktree add /tmp/a HEAD~1`, node_modules linked or
// installed, `npm run build`). Needs GNU time at /usr/bin/time (Debian `time`).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHAPES, writeShape } from './shapes.mjs';
import { median } from './stats.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = join(ROOT, '.tmp', 'bench-data', 'paired');

function parseArgs(argv) {
  const a = { roots: [], shapes: ['default'], lines: 300_000, rounds: 2, pairs: 8 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (!flag.startsWith('--')) a.roots.push(resolve(flag));
    else if (flag === '--shapes') a.shapes = value().split(',');
    else if (flag === '--lines') a.lines = Number(value());
    else if (flag === '--rounds') a.rounds = Number(value());
    else if (flag === '--pairs') a.pairs = Number(value());
    else throw new Error(`unknown flag ${flag} (see the header of bench/paired.mjs)`);
  }
  if (a.roots.length !== 2) throw new Error('usage: node bench/paired.mjs ROOT_A ROOT_B [--shapes a,b] [--lines N] [--rounds R] [--pairs P]');
  for (const s of a.shapes) if (SHAPES[s] === undefined) throw new Error(`unknown shape ${s} (one of ${Object.keys(SHAPES).join(', ')})`);
  return a;
}

/** User + system CPU seconds of one steady-state run of `root`'s report. */
function cpuSeconds(root, file, preset, rounds, lines) {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, join(ROOT, 'bench', 'steady-state.mjs'), 'report', file, preset, String(rounds), root], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`steady-state of ${root} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const seen = JSON.parse(r.stdout).lines;
  if (seen !== lines * rounds) throw new Error(`${root} saw ${seen} lines, expected ${lines * rounds}`);
  const [user, sys] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return user + sys;
}

const args = parseArgs(process.argv.slice(2));
mkdirSync(DATA, { recursive: true });
const [a, b] = args.roots;
console.log(`| shape | CPU(A) ÷ CPU(B) per pair | median | A s (median) | B s (median) |\n|---|---|---:|---:|---:|`);
for (const shape of args.shapes) {
  const file = join(DATA, `${shape}-${args.lines}.ndjson`);
  writeShape(file, shape, args.lines);
  const pairs = [];
  for (let i = 0; i < args.pairs; i++) {
    const ca = cpuSeconds(a, file, SHAPES[shape].preset, args.rounds, args.lines);
    const cb = cpuSeconds(b, file, SHAPES[shape].preset, args.rounds, args.lines);
    pairs.push([ca, cb]);
    process.stderr.write(`${shape} pair ${i + 1}: ${ca.toFixed(2)} s, ${cb.toFixed(2)} s\n`);
  }
  rmSync(file, { force: true });
  const ratios = pairs.map(([x, y]) => x / y);
  console.log(
    `| ${shape} | ${ratios.map((r) => r.toFixed(2)).join(' ')} | ${median(ratios).toFixed(2)}× | ${median(pairs.map((p) => p[0])).toFixed(2)} | ${median(pairs.map((p) => p[1])).toFixed(2)} |`,
  );
}
console.log(`\nA: ${a}\nB: ${b}`);
