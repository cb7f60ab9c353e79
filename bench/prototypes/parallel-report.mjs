#!/usr/bin/env node
// PROTOTYPE, not the product: what `report` would gain from the machine's second core. The file is cut in
// two at a line boundary; the main thread runs the real Pipeline over the first half while a worker
// thread runs another over the second, then the worker's counters, histograms and Aggregate (its DDSketch
// merges exactly) are added into the main thread's and the real buildReport prints the usual JSON.
//
//   node bench/prototypes/parallel-report.mjs FILE      (default config, one plain file)
//
// Exactness: counts, series and sketch bins add up exactly; the label limiter cannot be merged exactly
// (which 50 values win depends on order), so when either half overflowed a label, or the halves together
// hold more values than the limit, it falls back to one sequential pass over the whole file. σ comes from
// merged moments (the last bits may differ from the sequential pass; the report allows 0.5 %).
// It uses dist/ internals (private fields included), which a real implementation would expose properly.
import { createReadStream, openSync, readSync, closeSync, statSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const dist = new URL('../../dist/', import.meta.url);
const [{ loadConfig }, { Pipeline }, { LineSplitter }] = await Promise.all([
  import(new URL('config/load.js', dist)),
  import(new URL('pipeline.js', dist)),
  import(new URL('source/line-splitter.js', dist)),
]);

const LIMITED = ['model', 'route', 'cohort', 'reason'];

async function runRange(file, start, end) {
  const config = loadConfig(undefined);
  const pipeline = new Pipeline(config, { keepTotals: true });
  const splitter = new LineSplitter(config.input.maxLineBytes, pipeline, file);
  if (end > start) {
    for await (const chunk of createReadStream(file, { start, end: end - 1, highWaterMark: 1 << 20 })) splitter.push(chunk);
  }
  splitter.flush();
  return pipeline;
}

/** Everything the report reads from a Pipeline, as plain data that crosses threads. */
function state(pipeline) {
  const m = pipeline.metrics;
  return {
    scalars: m.families().filter((f) => f !== m.duration).map((f) => ({ name: f.name, entries: f.entries() })),
    histogram: [...m.duration.series.values()].map((s) => ({ labels: s.labels, counts: s.counts, sum: s.sum, count: s.count })),
    total: pipeline.total,
    seen: Object.fromEntries(LIMITED.map((l) => [l, [...m[l].seen]])),
  };
}

function mergeInto(pipeline, other) {
  const m = pipeline.metrics;
  const byName = new Map(m.families().map((f) => [f.name, f]));
  for (const { name, entries } of other.scalars) {
    const family = byName.get(name);
    for (const [labels, value] of entries) {
      if (name === 'zero_plane_exporter_last_record_timestamp_seconds') {
        if (value > family.get(labels)) family.set(labels, value);
      } else family.inc(labels, value);
    }
  }
  for (const s of other.histogram) {
    const h = m.duration.handle(s.labels);
    for (let i = 0; i < s.counts.length; i++) h.counts[i] += s.counts[i];
    h.sum += s.sum;
    h.count += s.count;
  }
  pipeline.total.merge(other.total);
}

/** Whether label limiting came out the same as in one sequential pass: nothing overflowed, and the union fits. */
function limitsExact(pipeline, other) {
  const m = pipeline.metrics;
  if (m.labelOverflow.sum() > 0) return false;
  if (other.scalars.find((f) => f.name === m.labelOverflow.name).entries.some(([, v]) => v > 0)) return false;
  return LIMITED.every((l) => new Set([...m[l].seen, ...other.seen[l]]).size <= m[l].limit);
}

/** First byte after the first newline at or after the middle: both halves hold whole lines. */
function middle(file, size) {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 16);
    for (let at = Math.floor(size / 2); at < size; at += buf.length) {
      const n = readSync(fd, buf, 0, buf.length, at);
      const nl = buf.subarray(0, n).indexOf(10);
      if (nl >= 0) return at + nl + 1;
    }
    return size;
  } finally {
    closeSync(fd);
  }
}

if (isMainThread) {
  const file = process.argv[2];
  if (file === undefined) throw new Error('usage: parallel-report.mjs FILE');
  const { buildReport } = await import(new URL('report/build-report.js', dist));
  const size = statSync(file).size;
  const mid = middle(file, size);
  const worker = new Worker(new URL(import.meta.url), { workerData: { file, start: mid, end: size } });
  const theirs = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  let pipeline = await runRange(file, 0, mid);
  const other = await theirs;
  await worker.terminate();
  if (limitsExact(pipeline, other)) mergeInto(pipeline, other);
  else pipeline = await runRange(file, 0, size); // the exact fallback: one sequential pass
  process.stdout.write(`${JSON.stringify(buildReport(pipeline, pipeline.config), null, 2)}\n`);
} else {
  const { file, start, end } = workerData;
  parentPort.postMessage(state(await runRange(file, start, end)));
}
