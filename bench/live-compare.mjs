#!/usr/bin/env node
// The live mode (bench/live.mjs) of several builds one after the other in one run, for before/after
// figures of a change to `serve`: each ROOT is a checkout with dist/ built (e.g. a `git worktree` of the
// parent commit, `npm ci` run in it). Prints each build's table.
//   node bench/live-compare.mjs PARTS ROOT [ROOT …]     (PARTS: a comma list of ladder,memory,sustained,render)
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LIVE_PARTS, runLive } from './live.mjs';

const [partsArg, ...roots] = process.argv.slice(2);
const parts = partsArg?.split(',') ?? [];
if (roots.length === 0 || parts.some((p) => !LIVE_PARTS.includes(p))) {
  throw new Error(`usage: node bench/live-compare.mjs ${LIVE_PARTS.join('|')}[,…] ROOT [ROOT …]`);
}
const dataDir = join(dirname(fileURLToPath(import.meta.url)), '..', '.tmp', 'bench-data');
mkdirSync(dataDir, { recursive: true });
for (const root of roots.map((r) => resolve(r))) {
  const log = (m) => console.log(`${root}: ${m}`);
  const res = await runLive({ root, cli: join(root, 'bin', 'zero-plane-exporter.js'), dataDir, log, parts });
  console.log(`\n${root}\n\n${res.table}\n`);
}
