// Import cost of zero-plane-exporter/client: wall time of `await import()` and RSS after it, each in a
// fresh node, against a bare node doing the same with an empty module (same run, side by side).
// Usage: npm run build && node bench/client-import.mjs [runs=15]
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const runs = Number(process.argv[2] ?? 15);
const client = pathToFileURL(fileURLToPath(new URL('../dist/client/index.js', import.meta.url))).href;
const probe = (target) =>
  `const t0 = performance.now(); ${target === null ? 'await import("node:os");' : `await import(${JSON.stringify(target)});`} ` +
  `const ms = performance.now() - t0; globalThis.gc?.(); console.log(JSON.stringify({ ms, rss: process.memoryUsage().rss }));`;

function measure(target) {
  const out = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', probe(target)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    out.push(JSON.parse(r.stdout));
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { ms: median(out.map((o) => o.ms)), rssMB: median(out.map((o) => o.rss)) / 1e6 };
}

const bare = measure(null);
const withClient = measure(client);
console.log(`runs per side: ${runs} (medians)`);
console.log(`bare node        import ${bare.ms.toFixed(1)} ms   rss ${bare.rssMB.toFixed(1)} MB`);
console.log(`client           import ${withClient.ms.toFixed(1)} ms   rss ${withClient.rssMB.toFixed(1)} MB`);
console.log(`client - bare    import ${(withClient.ms - bare.ms).toFixed(1)} ms   rss ${(withClient.rssMB - bare.rssMB).toFixed(1)} MB   (goal: < 20 ms, < 10 MB)`);
