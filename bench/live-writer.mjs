#!/usr/bin/env node
// Appends generated gateway lines to a file at a fixed rate, as a gateway would, for bench/live.mjs.
// Runs as a forked child and reports over IPC: {written, t} marks (t from process.hrtime, which is the
// system-wide monotonic clock, so the parent can compare it with its own) and a final {done}.
//   fork('bench/live-writer.mjs', [FILE, RATE, SECONDS, LABELS])   (LABELS: generate-log.mjs --labels, default 0)
// Lines come from a pool generated once; only their timestamps are rewritten (to "now", so records land
// in the exporter's window), which keeps the writer's own CPU small next to the exporter's.
import { closeSync, openSync, writeSync } from 'node:fs';
import { lineAt } from './generate-log.mjs';

const [file, rateArg, secondsArg, labelsArg = '0'] = process.argv.slice(2);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
const TICK_MS = 10;
const POOL = 20_000;
const TS_AT = '{"ts":"'.length;
const TS_LEN = 24; // 2026-11-01T00:00:00.000Z

const labels = Number(labelsArg);
const lines = Array.from({ length: POOL }, (_, i) => `${lineAt(i, { labels })}\n`);
const pool = Buffer.from(lines.join(''));
const offsets = [];
let at = 0;
for (const l of lines) {
  offsets.push(at);
  at += Buffer.byteLength(l);
}
offsets.push(at);
// A truncated line (no complete ts) must not be patched; they are rare (1 in 20 000) and still lines.
const patchable = lines.map((l) => l.startsWith('{"ts":"') && l.length > TS_AT + TS_LEN && l[TS_AT + TS_LEN] === '"');

const now = () => Number(process.hrtime.bigint()) / 1e6;
const fd = openSync(file, 'a');
let written = 0;
let next = 0;
const start = now();
const marks = [];

function tick() {
  const elapsed = now() - start;
  const due = Math.min(Math.floor((rate * elapsed) / 1000), Math.floor(rate * seconds));
  if (due > written) {
    const ts = new Date().toISOString();
    // Write the due lines in pool-contiguous slices, timestamps set to now.
    while (written < due) {
      const take = Math.min(due - written, POOL - next);
      for (let i = next; i < next + take; i++) if (patchable[i]) pool.write(ts, offsets[i] + TS_AT, 'latin1');
      writeSync(fd, pool, offsets[next], offsets[next + take] - offsets[next]);
      written += take;
      next = (next + take) % POOL;
    }
    marks.push({ written, t: now() });
  }
  if (marks.length >= 10) process.send({ marks: marks.splice(0) });
  if (written >= Math.floor(rate * seconds)) {
    closeSync(fd);
    process.send({ marks: marks.splice(0), done: true, written, seconds: (now() - start) / 1000 }, () => process.exit(0));
    return;
  }
  setTimeout(tick, TICK_MS - (elapsed % TICK_MS));
}

process.send({ ready: true, t: now() });
tick();
