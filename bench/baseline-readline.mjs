#!/usr/bin/env node
// The ceiling the issue measures against: Node's own `readline` over a read stream plus `JSON.parse` of
// every line, and nothing else. Prints {"lines":N,"objects":M} so the harness can check it read the file.
//   node bench/baseline-readline.mjs FILE
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: baseline-readline.mjs FILE');
let lines = 0;
let objects = 0;
// `crlfDelay: Infinity` treats \r\n as one break, as the exporter does; 'line' events are the fastest
// readline API (faster than `for await`), so the baseline is as strong as plain readline gets.
const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
rl.on('line', (line) => {
  lines++;
  try {
    // Looking at one field keeps the parse from being optimised away.
    if (typeof JSON.parse(line).latency_ms === 'number') objects++;
  } catch {
    // an unparseable line still counts as read
  }
});
rl.on('close', () => process.stdout.write(`${JSON.stringify({ lines, objects })}\n`));
