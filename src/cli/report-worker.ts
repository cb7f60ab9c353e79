// The worker thread of `report` on two threads (report-parallel.ts): reads a file from a line boundary to
// its end into a fresh pipeline and posts back its state.
import { parentPort, workerData } from 'node:worker_threads';
import { Pipeline } from '../pipeline.js';
import { readFileRange } from '../source/read-input.js';
import type { WorkerJob } from './report-parallel.js';

const { config, path, start } = workerData as WorkerJob;
const pipeline = new Pipeline(config, { keepTotals: true, keepWatchOutcomes: true });
await readFileRange(path, start, undefined, { maxLineBytes: config.input.maxLineBytes }, pipeline);
parentPort?.postMessage(pipeline.state());
