// `report` on both cores: a big plain file is cut at a newline near its middle, a worker thread reads the
// second half into a pipeline of its own while this thread reads the first, and the worker's state is
// added to this pipeline. Exact: counts and histogram buckets add, sketch bins add (same mapping), σ comes
// from merged moments (equal to the one-pass value within float rounding, ~1e-15 relative). Label limits
// cannot always be merged (which values win depends on order): when they would not merge exactly
// (checkpoint-state.ts: mergesExactly), this thread reads the second half itself, after its first half, as
// one sequential pass would have. gzip and stdin are always read sequentially. With input.preset: auto, the
// file's preset is detected from its head first, with the same detector the pipeline runs on its first
// lines, and both threads read with it.
import { existsSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { mergesExactly } from '../metrics/metrics-state.js';
import type { Config } from '../config/schema.js';
import type { Pipeline, PipelineState } from '../pipeline.js';
import { presetCandidates } from '../record/source-inputs.js';
import { SignalClassifier } from '../signals/classify.js';
import { PresetDetector, type Evidence } from '../record/detect-preset.js';
import type { PresetName } from '../record/presets.js';
import type { Logger } from '../server/logger.js';
import { mayJoinPieces } from '../source/envelope.js';
import { LineSplitter } from '../source/line-splitter.js';
import { readFileRange, readInput } from '../source/read-input.js';
import type { GroupLabel } from '../windows/grouped-aggregates.js';

/**
 * Files below this are read on one thread. A worker costs ~50 ms to start (a second V8 isolate importing
 * the pipeline) and ~40 MiB of RSS (its own heap); at ~130 MB/s on one thread, half of 32 MiB is ~120 ms
 * saved, so smaller files gain little or nothing and pay the memory.
 */
export const PARALLEL_MIN_BYTES = 32 * 1024 * 1024;

/**
 * The smallest file read on two threads. Hidden override, read only here: ZP_REPORT_PARALLEL_MIN_BYTES
 * (bytes; 0 splits every plain file with a second line) lets tests force the two-thread path on small files.
 */
export function parallelMinBytes(): number {
  const raw = process.env.ZP_REPORT_PARALLEL_MIN_BYTES;
  const n = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? n : PARALLEL_MIN_BYTES;
}

/** The compiled worker next to this module (dist/cli/report-worker.js). */
const WORKER_URL = new URL('./report-worker.js', import.meta.url);

/** What the worker is given (structured-cloned). */
export interface WorkerJob {
  config: Config;
  path: string;
  start: number;
  /** The label the pipeline groups by (`report --by`), so the worker keeps the same groups. */
  groupBy?: GroupLabel;
}

/**
 * Reads one `report` input into `pipeline`: on two threads when it is a plain regular file of at least
 * minBytes with a newline past its middle, else as readInput does. Lines land exactly as readInput would
 * deliver them, in the same series.
 */
export async function readReportInput(path: string, config: Config, pipeline: Pipeline, log: Logger | undefined, minBytes: number, thread: SecondThread, signal?: AbortSignal): Promise<void> {
  const opts = { maxLineBytes: config.input.maxLineBytes, envelope: config.input.envelope, ...(signal === undefined ? {} : { signal }) };
  const mid = await splitPoint(path, minBytes);
  if (mid === undefined || (config.input.envelope !== 'none' && mayJoinPieces(config.input.envelope, await headBytes(path)))) {
    await readInput(path, opts, pipeline);
    return;
  }
  let jobConfig = config;
  if (config.input.preset === 'auto') {
    // A file given twice was decided by its first reading.
    const given = pipeline.presets()[path];
    const head = given === undefined || given === null ? await detectHead(path, mid, config) : { preset: given, evidence: undefined };
    if (head === undefined) {
      await readInput(path, opts, pipeline);
      return;
    }
    const preset = head.preset;
    pipeline.useDetected(path, preset, head.evidence);
    jobConfig = { ...config, input: { ...config.input, preset } };
  }
  log?.debug('report: 2 threads', { file: path, split: mid });
  const result = thread.read({ config: jobConfig, path, start: mid, ...(pipeline.groups === undefined ? {} : { groupBy: pipeline.groups.label }) });
  const stopWorker = () => void thread.close();
  signal?.addEventListener('abort', stopWorker, { once: true });
  let later: PipelineState;
  try {
    [, later] = await Promise.all([readFileRange(path, 0, mid, opts, pipeline), result]);
  } catch (err) {
    await thread.close();
    throw signal?.aborted ? signal.reason : err;
  } finally {
    signal?.removeEventListener('abort', stopWorker);
  }
  if (mergesExactly(pipeline.metrics, later.metrics)) {
    pipeline.merge(later);
    return;
  }
  log?.debug('report: label limits would not merge exactly, second half read again on one thread', { file: path });
  await readFileRange(path, mid, undefined, opts, pipeline);
}

/** The first 64 KiB of a file (what decides its envelope). */
async function headBytes(path: string): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(1 << 16);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * The first byte of the line after the file's middle, or undefined to read the file on one thread: stdin,
 * not a regular file, smaller than minBytes, gzip, no newline after the middle, or no compiled worker (as
 * when the TypeScript sources run directly under vitest).
 */
export async function splitPoint(path: string, minBytes: number): Promise<number | undefined> {
  if (path === '-') return undefined;
  let size: number;
  try {
    const st = await stat(path);
    if (!st.isFile()) return undefined;
    size = st.size;
  } catch {
    return undefined; // readInput reports it as usual
  }
  if (size === 0 || size < minBytes || !existsSync(fileURLToPath(WORKER_URL))) return undefined;
  const fh = await open(path, 'r').catch(() => undefined);
  if (fh === undefined) return undefined;
  try {
    const buf = Buffer.alloc(1 << 16);
    const { bytesRead } = await fh.read(buf, 0, 2, 0);
    if (bytesRead === 2 && buf[0] === 0x1f && buf[1] === 0x8b) return undefined; // gzip
    for (let at = Math.floor(size / 2); at < size; at += buf.length) {
      const { bytesRead: n } = await fh.read(buf, 0, buf.length, at);
      if (n === 0) return undefined;
      const nl = buf.subarray(0, n).indexOf(0x0a);
      if (nl >= 0) return at + nl + 1 < size ? at + nl + 1 : undefined;
    }
    return undefined;
  } finally {
    await fh.close();
  }
}

/**
 * The preset the pipeline would detect from the first lines of `path` (read up to `end`), or undefined when
 * they do not decide it: the same detector on the same lines, so the two-thread read equals one pass.
 */
async function detectHead(path: string, end: number, config: Config): Promise<{ preset: PresetName; evidence: Evidence } | undefined> {
  const detector = new PresetDetector(presetCandidates(config, new SignalClassifier(config.headers)));
  let decided: { preset: PresetName; evidence: Evidence } | undefined;
  const splitter = new LineSplitter(
    config.input.maxLineBytes,
    {
      line: (text) => {
        if (decided !== undefined) return;
        const offer = detector.offer(text, 0);
        if (offer.kind === 'decided') decided = offer;
        else if (detector.full()) {
          // As SourceInputs does at a bound: held lines no preset reads are counted and detection goes on.
          const choice = detector.decide(undefined);
          if (choice === 'unread') detector.take();
          else decided = choice;
        }
      },
      oversize: () => {},
    },
    path,
    undefined,
    config.input.envelope,
  );
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(1 << 16);
    for (let at = 0; decided === undefined && at < end;) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, end - at), at);
      if (bytesRead === 0) break;
      at += bytesRead;
      splitter.push(buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return decided;
}

/**
 * The second thread of one `report`: a worker started for the first file read on two threads and given
 * every later one, until close(). One worker per file did not give each one's memory back (30 files: RSS
 * 86 → 115 MiB over the run); one worker reuses its heap.
 */
export class SecondThread {
  private worker: Worker | undefined;
  private waiting: { resolve: (state: PipelineState) => void; reject: (err: Error) => void } | undefined;

  /** The state of a pipeline that read `job.path` from `job.start` to its end. One job at a time. */
  read(job: WorkerJob): Promise<PipelineState> {
    if (this.waiting !== undefined) return Promise.reject(new Error('report worker: one file at a time'));
    const worker = this.worker ?? this.start();
    return new Promise<PipelineState>((resolve, reject) => {
      this.waiting = { resolve, reject };
      worker.postMessage(job);
    });
  }

  /** Ends the worker (a job still running is rejected). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) await worker.terminate();
    this.settle(new Error('report worker stopped'));
  }

  private start(): Worker {
    // A young generation of 8 MiB, not V8's default: the same speed, and with 30 files RSS stays under
    // 100 MiB (99 against 107; the worker's scavenges then free each file's garbage sooner).
    const worker = new Worker(WORKER_URL, { resourceLimits: { maxYoungGenerationSizeMb: 8 } });
    worker.on('message', (state: PipelineState) => this.settle(undefined, state));
    worker.on('error', (err: Error) => {
      this.worker = undefined;
      this.settle(err);
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      this.settle(new Error(`report worker exited with code ${code} before sending its result`));
    });
    this.worker = worker;
    return worker;
  }

  private settle(err: Error | undefined, state?: PipelineState): void {
    const w = this.waiting;
    if (w === undefined) return;
    this.waiting = undefined;
    if (err === undefined) w.resolve(state as PipelineState);
    else w.reject(err);
  }
}
