#!/usr/bin/env node
// Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time per function and inclusive time of
// the functions that matter, so a profile can be read without a browser.
//   node bench/profile-summary.mjs FILE.cpuprofile [TOP]
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: profile-summary.mjs FILE.cpuprofile [TOP]');
const top = Number(topArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...dt.values()].reduce((a, b) => a + b, 0);
const name = (n) => {
  const cf = n.callFrame;
  const where = cf.url ? `${cf.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${cf.lineNumber + 1}` : '';
  return `${cf.functionName || '(anonymous)'} ${where}`.trim();
};
const self = new Map();
for (const [id, t] of dt) {
  const key = name(byId.get(id));
  self.set(key, (self.get(key) ?? 0) + t);
}
// Inclusive: a function's own samples plus its descendants', counted once per stack.
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (const [id, t] of dt) {
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const key = name(byId.get(cur));
    if (seen.has(key)) continue;
    seen.add(key);
    incl.set(key, (incl.get(key) ?? 0) + t);
  }
}
const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)} %`;
console.log(`total sampled ${(total / 1e6).toFixed(2)} s`);
console.log('\nself time');
for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${k}`);
console.log('\ninclusive time');
for (const [k, t] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${k}`);
