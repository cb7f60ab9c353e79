#!/usr/bin/env node
// The physical limit of any line reader in Node: one pass of `Buffer.indexOf('\n')` over the file, read
// in 1 MiB chunks through one buffer (as the exporter's reader does), nothing done with the lines. No line
// reader can count lines faster on the same machine, so its bytes per CPU-second is the ceiling the
// contenders of `npm run bench` are shown against. Prints {"lines":N,"bytes":B,"passCpuSeconds":S}: S is the
// CPU of the pass alone (process.cpuUsage around it), without Node's start-up, which GNU time counts too.
//   node bench/ceiling-indexof.mjs FILE
import { closeSync, openSync, readSync } from 'node:fs';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: ceiling-indexof.mjs FILE');
const started = process.cpuUsage();
const fd = openSync(file, 'r');
const buf = Buffer.allocUnsafe(1 << 20);
let lines = 0;
let bytes = 0;
let tail = false;
for (;;) {
  const n = readSync(fd, buf, 0, buf.length, bytes);
  if (n === 0) break;
  bytes += n;
  const view = n === buf.length ? buf : buf.subarray(0, n);
  for (let i = view.indexOf(10); i !== -1; i = view.indexOf(10, i + 1)) lines++;
  // A last line without its newline is a line too, as readline and the exporter count it.
  tail = view[n - 1] !== 10;
}
closeSync(fd);
if (tail) lines++;
const used = process.cpuUsage(started);
process.stdout.write(`${JSON.stringify({ lines, bytes, passCpuSeconds: (used.user + used.system) / 1e6 })}\n`);
