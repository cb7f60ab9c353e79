#!/usr/bin/env node
// One contender's per-line work in steady state, in one process over a file held in memory, repeated:
// what bench/instructions.mjs counts under valgrind. No file reads, no start-up, no JIT warm-up in the
// difference between two round counts.
//   node bench/steady-state.mjs CONTENDER FILE PRESET ROUNDS [ROOT]
// ROOT: the checkout whose dist/ `report` runs (default this one; bench/paired.mjs compares two builds).
// CONTENDER: `baseline` (readline over the bytes + JSON.parse of every line, as bench/baseline-readline.mjs)
// or `report` (the bytes through LineSplitter into a report pipeline on the preset, as `report` on one
// thread). Prints the lines seen, so a run that read nothing is noticed.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [contender, file, preset, roundsArg, rootArg] = process.argv.slice(2);
const ROOT = rootArg === undefined ? resolve(dirname(fileURLToPath(import.meta.url)), '..') : resolve(rootArg);
const dist = (p) => import(pathToFileURL(join(ROOT, 'dist', p)).href);
const CHUNK = 1 << 20;

const rounds = Number(roundsArg);
const data = readFileSync(file);
const chunks = [];
for (let at = 0; at < data.length; at += CHUNK) chunks.push(data.subarray(at, Math.min(data.length, at + CHUNK)));

let lines = 0;
if (contender === 'baseline') {
  for (let r = 0; r < rounds; r++) {
    const rl = createInterface({ input: Readable.from(chunks), crlfDelay: Infinity });
    // Counted as bench/baseline-readline.mjs counts, so the work per line is the same; only lines is printed.
    // eslint-disable-next-line no-unused-vars -- the count is the work, not a result
    let objects = 0;
    rl.on('line', (line) => {
      lines++;
      try {
        if (typeof JSON.parse(line).latency_ms === 'number') objects++;
      } catch {
        // counted as read
      }
    });
    await new Promise((done) => rl.on('close', done));
  }
} else if (contender === 'report') {
  const { defaultConfig } = await dist('config/schema.js');
  const { Pipeline } = await dist('pipeline.js');
  const { LineSplitter } = await dist('source/line-splitter.js');
  const base = defaultConfig();
  const config = { ...base, input: { ...base.input, preset } };
  for (let r = 0; r < rounds; r++) {
    const pipeline = new Pipeline(config, { keepTotals: true });
    // The source is one stream (stream undefined), read with input.envelope as `report` reads it. The
    // envelope went 4th → 5th when streams came: passed 4th, a string stood for the stream and every line
    // made a new source (11 µs a line). A build from before either takes the 4th as its envelope: undefined
    // is its default.
    const splitter = new LineSplitter(config.input.maxLineBytes, pipeline, file, undefined, config.input.envelope);
    for (const c of chunks) splitter.push(c);
    splitter.flush();
    pipeline.finish();
    lines += pipeline.metrics.lines.sum();
  }
} else {
  throw new Error('usage: node bench/steady-state.mjs baseline|report FILE PRESET ROUNDS');
}
process.stdout.write(`${JSON.stringify({ lines })}\n`);
