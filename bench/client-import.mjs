// Import cost of zero-plane-exporter/client (dist/client/bundle/index.js, what package.json `exports`
// give): wall time of `await import()` and RSS after it, each in a fresh node, against a bare node doing
// the same with a builtin module (same run, side by side). Other builds' client entry points (another
// checkout's dist/client/bundle/index.js, or an unbundled dist/client/index.js) may be named to compare;
// the sides take turns run by run, so a change in the machine's load falls on all of them alike.
// Usage: npm run build && node bench/client-import.mjs [runs=15] [other/dist/client/index.js ...]
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const runs = Number(process.argv[2] ?? 15);
const client = pathToFileURL(fileURLToPath(new URL('../dist/client/bundle/index.js', import.meta.url))).href;
const others = process.argv.slice(3).map((p) => pathToFileURL(resolve(p)).href);
// Wall time, and the CPU time (user + system) the import took: on a shared machine the wall time grows
// with the load, the CPU time much less, so both are printed.
const probe = (target) =>
  `const c0 = process.cpuUsage(); const t0 = performance.now(); ${target === null ? 'await import("node:os");' : `await import(${JSON.stringify(target)});`} ` +
  `const ms = performance.now() - t0; const c = process.cpuUsage(c0); globalThis.gc?.(); console.log(JSON.stringify({ ms, cpuMs: (c.user + c.system) / 1000, rss: process.memoryUsage().rss }));`;

function once(target) {
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', probe(target)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

const sides = [{ name: 'bare node', target: null }, { name: 'client (this build)', target: client }, ...others.map((target) => ({ name: `client (${fileURLToPath(target)})`, target }))];
const samples = sides.map(() => []);
for (let i = 0; i < runs; i++) sides.forEach((s, j) => samples[j].push(once(s.target)));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const stats = samples.map((xs) => ({ ms: median(xs.map((o) => o.ms)), cpuMs: median(xs.map((o) => o.cpuMs)), rssMB: median(xs.map((o) => o.rss)) / 1e6 }));
const bare = stats[0];
console.log(`runs per side: ${runs} (medians, sides in turn); load average ${(await import('node:os')).loadavg()[0].toFixed(1)}`);
sides.forEach((s, j) => {
  const st = stats[j];
  const above = j === 0 ? '' : `   above bare: ${(st.ms - bare.ms).toFixed(1)} ms (cpu ${(st.cpuMs - bare.cpuMs).toFixed(1)} ms), ${(st.rssMB - bare.rssMB).toFixed(1)} MB`;
  console.log(`${s.name.padEnd(48)} import ${st.ms.toFixed(1).padStart(6)} ms   cpu ${st.cpuMs.toFixed(1).padStart(6)} ms   rss ${st.rssMB.toFixed(1)} MB${above}`);
});
console.log('goal (issue 26): < 20 ms and < 10 MB above bare node');
