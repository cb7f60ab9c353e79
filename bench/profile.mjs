#!/usr/bin/env node
// A CPU profile of `report` held to one thread on one shape of the matrix (bench/shapes.mjs), summarised
// by bench/profile-summary.mjs: where the time of a row of the bench goes.
//   node bench/profile.mjs SHAPE [--lines N] [--top K]     (default 300 000 lines, top 25)
// The .cpuprofile stays in .tmp/bench-data/profiles/ for a closer look (Chrome DevTools reads it).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureShape } from './shapes.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIR = join(ROOT, '.tmp', 'bench-data', 'profiles');

const argv = process.argv.slice(2);
const shape = argv[0];
if (shape === undefined) throw new Error('usage: node bench/profile.mjs SHAPE [--lines N] [--top K]');
const opt = (name, dflt) => {
  const at = argv.indexOf(name);
  return at < 0 ? dflt : Number(argv[at + 1]);
};
const lines = opt('--lines', 300_000);
const { file } = ensureShape(DIR, shape, lines);
const tmp = join(DIR, `run-${process.pid}`);
mkdirSync(tmp, { recursive: true });
const r = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${tmp}`, join(ROOT, 'bin', 'zero-plane-exporter.js'), 'report', '--format', 'json', file], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, ZP_REPORT_PARALLEL_MIN_BYTES: String(Number.MAX_SAFE_INTEGER) },
});
if (r.status !== 0) throw new Error(`report exited ${r.status}`);
const [prof] = readdirSync(tmp);
const out = join(DIR, `${shape}-${lines}.cpuprofile`);
renameSync(join(tmp, prof), out);
rmSync(tmp, { recursive: true, force: true });
spawnSync(process.execPath, [join(ROOT, 'bench', 'profile-summary.mjs'), out, String(opt('--top', 25))], { stdio: 'inherit' });
