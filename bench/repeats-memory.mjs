// Memory and speed of the repeated-prompts top-k (dist/windows/repeated-prompts.js, Space-Saving): feeds
// 10^6 distinct 32-hex-digit hashes (the client's form, each a fresh string) with a heavy hitter in every
// 400th place, for each k, and prints the retained heap after a full GC (the summary only: the stream is
// generated on the fly in chunks and let go) and the CPU time per add() (process.cpuUsage: user + system,
// so a loaded machine's waiting is not counted; making the hashes is outside it). Run: npm run build && node --expose-gc bench/repeats-memory.mjs [N]
import { createHash } from 'node:crypto';
import { RepeatedPrompts } from '../dist/windows/repeated-prompts.js';

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc');
  process.exit(2);
}
const N = Number(process.argv[2] ?? 1_000_000);
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const hex = (i) => createHash('sha256').update(String(i)).digest('hex').slice(0, 32);

console.log(`distinct hashes: ${N.toLocaleString('en')} (+ one heavy hitter every 400th request)`);
console.log('k'.padStart(8), 'retained heap'.padStart(15), 'per kept hash'.padStart(15), 'CPU ns/add'.padStart(12), 'heavy kept');
for (const k of [10, 1000, 10_000, 100_000]) {
  const before = heap();
  let top = new RepeatedPrompts(k);
  let cpuUs = 0;
  const CHUNK = 10_000;
  for (let from = 0; from < N; from += CHUNK) {
    const chunk = [];
    for (let i = from; i < Math.min(N, from + CHUNK); i++) chunk.push(hex(i));
    const c0 = process.cpuUsage();
    for (let j = 0; j < chunk.length; j++) {
      top.add(chunk[j], (j & 3) === 0);
      if ((from + j) % 400 === 0) top.add('heavy-hitter-hash-0000', true);
    }
    const c = process.cpuUsage(c0);
    cpuUs += c.user + c.system;
  }
  const ns = (cpuUs * 1000) / (N + N / 400);
  const after = heap();
  const kept = top.top(1)[0]?.hash === 'heavy-hitter-hash-0000';
  const bytes = after - before;
  console.log(String(k).padStart(8), `${(bytes / 1024 / 1024).toFixed(2)} MiB`.padStart(15), `${Math.round(bytes / top.size)} B`.padStart(15), ns.toFixed(0).padStart(12), kept ? 'yes' : 'NO');
  top = undefined;
}
console.log(
  `(heavy kept: the hash asked every 400th time is the top one; Space-Saving guarantees it once N/400 > N/k, i.e. k > 400; load average ${(await import('node:os')).loadavg()[0].toFixed(1)})`,
);
