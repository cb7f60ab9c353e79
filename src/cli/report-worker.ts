// The worker thread of `report` on two threads (report-parallel.ts): for each job it is sent, reads a file
// from a line boundary to its end into a fresh pipeline and posts back its state.
import { parentPort } from 'node:worker_threads';
import { Pipeline } from '../pipeline.js';
import { readFileRange } from '../source/read-input.js';
import type { WorkerJob } from './report-parallel.js';

// A failed read is an unhandled rejection here, which ends the worker with an 'error' event in the thread that started it.
// eslint-disable-next-line @typescript-eslint/no-misused-promises -- that rejection is the way a failure is reported (above)
parentPort?.on('message', async (job: WorkerJob) => {
  const pipeline = new Pipeline(job.config, { keepTotals: true, keepWatchOutcomes: true, ...(job.groupBy === undefined ? {} : { groupBy: job.groupBy }) });
  await readFileRange(job.path, job.start, undefined, { maxLineBytes: job.config.input.maxLineBytes, envelope: job.config.input.envelope }, pipeline);
  parentPort?.postMessage(pipeline.state());
});
