#!/usr/bin/env node
// CPU per line of each stage of `report`'s per-line path, alone, on one shape's file: what a cut in one
// stage can give at most. Each stage runs in a process of its own over the whole file held in memory
// (no reading, no start-up in the figure), the stages alternating round by round:
//   split     Buffer.indexOf('\n') only
//   scan      + RecordScanner.scan (the byte scan that validates the line and finds the kept values)
//   parse     + the record (RecordParser.parseBytes: the scan, then times, numbers, labels, headers)
//   classify  + SignalClassifier.classify of the record
// The rest of a `report` run (counting into the metrics and windows, the read, start-up) is its CPU time
// minus `classify`.
//   node bench/stages.mjs [SHAPE] [--lines N] [--rounds R]      (default: default, 1 000 000 lines, 3 rounds)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureShape, SHAPES } from './shapes.mjs';
import { median } from './stats.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAGES = ['split', 'scan', 'parse', 'classify'];
const argv = process.argv.slice(2);

if (argv[0] === '--stage') {
  const [, stage, preset, file] = argv;
  const dist = (p) => import(pathToFileURL(join(ROOT, 'dist', p)).href);
  const { readDefaultConfig } = await dist('config/default-config.js');
  const { candidateFor } = await dist('record/source-inputs.js');
  const { SignalClassifier } = await dist('signals/classify.js');
  const { chunkStops } = await dist('source/chunk-stops.js');
  const config = await readDefaultConfig();
  const classifier = new SignalClassifier(config.headers);
  const { parser } = candidateFor(config, classifier, preset);
  // The parser's scanner is private in TypeScript; the stage reads it to time the scan alone.
  const scanner = parser.scanner?.scanner;
  if (scanner === undefined) throw new Error(`preset ${preset} is not read byte by byte`);
  const buf = readFileSync(file);
  // As the line splitter does for a chunk: the scan finds strings' ends in the chunk map.
  chunkStops.offer(buf);
  const t0 = process.cpuUsage();
  let lines = 0;
  let kept = 0;
  for (let s = 0; ;) {
    const e = buf.indexOf(10, s);
    if (e < 0) break;
    lines++;
    if (stage === 'scan') {
      if (scanner.scan(buf, s, e) === 0) kept++;
    } else if (stage !== 'split') {
      const r = parser.parseBytes(buf, s, e);
      if (r?.ok === true) {
        kept++;
        if (stage === 'classify') classifier.classify(r.record);
      }
    }
    s = e + 1;
  }
  const u = process.cpuUsage(t0);
  process.stdout.write(JSON.stringify({ lines, kept, ns: ((u.user + u.system) * 1000) / lines }));
  process.exit(0);
}

if (!existsSync(join(ROOT, 'dist', 'record', 'scan-record.js'))) throw new Error('no dist/: run npm run build first');
const shape = argv[0] !== undefined && !argv[0].startsWith('--') ? argv[0] : 'default';
const opt = (name, dflt) => {
  const at = argv.indexOf(name);
  return at < 0 ? dflt : Number(argv[at + 1]);
};
const lines = opt('--lines', 1_000_000);
const rounds = opt('--rounds', 3);
const spec = SHAPES[shape];
if (spec === undefined) throw new Error(`unknown shape ${shape}: ${Object.keys(SHAPES).join(', ')}`);
// The same cached files as npm run bench's (`SHAPE-LINES.ndjson`, checked against the generators' versions).
const { file } = ensureShape(join(ROOT, '.tmp', 'bench-data'), shape, lines, { onWrite: (f) => console.error(`generating ${lines} ${shape} lines into ${f} …`) });
const ns = Object.fromEntries(STAGES.map((s) => [s, []]));
for (let r = 0; r < rounds; r++) {
  for (const stage of STAGES) {
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--stage', stage, spec.preset, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (run.status !== 0) throw new Error(`stage ${stage} exited ${run.status}`);
    const out = JSON.parse(run.stdout);
    // A stage that reads no line times nothing: a figure for it would be a wrong answer, not a fast one.
    if (stage !== 'split' && out.kept === 0) throw new Error(`stage ${stage} read none of the ${out.lines} lines as records (preset ${spec.preset})`);
    ns[stage].push(out.ns);
  }
}
console.log(`${shape}, ${lines} lines, ${rounds} rounds: ns of CPU per line (median; each stage includes the ones above it; JIT warm-up weighs on short files)`);
let before = 0;
for (const stage of STAGES) {
  const m = median(ns[stage]);
  console.log(`  ${stage.padEnd(9)} ${m.toFixed(0).padStart(6)}  (+${(m - before).toFixed(0)})  rounds: ${ns[stage].map((x) => x.toFixed(0)).join(' ')}`);
  before = m;
}
