// `serve`'s followed files, parsed off the serving thread (parse.workers): each worker thread follows its
// share of sources.files into a pipeline of its own and hands over counts, never lines (pipeline-delta.ts),
// which are added to the serving thread's pipeline. /metrics then waits for no parsing, however fast the
// files grow. A checkpoint is a consistent cut across the workers: each is asked for its counts and
// offsets at one moment between two of its polls; counts a worker hands over after its cut are held
// back until every worker's cut is in and the checkpoint is taken.
import { Worker } from 'node:worker_threads';
import type { Dropped } from '../checkpoint/checkpoint-state.js';
import type { Config } from '../config/schema.js';
import type { FollowerCounts } from '../metrics/follower-gauges.js';
import { metricsState, type MetricsState } from '../metrics/metrics-state.js';
import { mergeDelta, type PipelineDelta } from '../pipeline-delta.js';
import type { Pipeline } from '../pipeline.js';
import type { HeldLines } from '../record/source-inputs.js';
import type { LogFields, Logger, LogLevel } from '../server/logger.js';
import type { DirectoryMode } from '../source/directory-watch.js';
import type { FilePosition, FollowerState, ResumeFrom } from '../source/file-follower.js';
import { MIN_OPEN_FILES } from '../source/open-files.js';
import { recheckHeapLimits } from './heap-limits.js';

/** What a worker is started with (structured-cloned). */
export interface ParseWorkerInit {
  /** With sources.files cut to this worker's patterns and sources.maxOpenFiles to its share. */
  config: Config;
  resume?: ResumeFrom;
  /** The serving thread's metrics after the restore, for this worker's limits (its counts are not handed back). */
  restored?: MetricsState;
  held: HeldLines[];
  flushMs: number;
}

export interface FollowerCountsState {
  followed: number;
  open: number;
  cap: number;
  modes: [DirectoryMode, number][];
  watched: number;
  fallbacks: number;
}

/** A worker's counts and positions at one moment between two polls. */
export interface WorkerCut {
  delta: PipelineDelta | undefined;
  state: FollowerState;
  held: HeldLines[];
  counts: FollowerCountsState;
}

export type ToParseWorker = { type: 'cut'; id: number } | { type: 'stop' };
export type ToParseThreads =
  | { type: 'delta'; delta?: PipelineDelta; counts?: FollowerCountsState }
  | { type: 'log'; level: LogLevel; msg: string; fields?: LogFields }
  | { type: 'dropped'; dropped: Dropped }
  | { type: 'started'; counts: FollowerCountsState }
  | { type: 'caughtUp' }
  | { type: 'cut'; id: number; cut: WorkerCut }
  | { type: 'stopped'; cut: WorkerCut };

/** How often a worker hands over its counts: the delay a scrape sees them with, at most. */
const FLUSH_MS = 100;

/** The compiled worker beside this module; run from the TypeScript sources (vitest), the build's. */
const WORKER_URL = import.meta.url.endsWith('.ts') ? new URL('../../dist/cli/parse-worker.js', import.meta.url) : new URL('./parse-worker.js', import.meta.url);

export interface ParseThreadsOptions {
  config: Config;
  workers: number;
  /** The serving thread's pipeline, which every count is added to. */
  pipeline: Pipeline;
  log: Logger;
  resume?: ResumeFrom;
  held: readonly HeldLines[];
  dropped: (d: Dropped) => void;
  /** A worker ended or failed: its files are no longer read, and no checkpoint can be taken. */
  failed: (err: Error) => void;
  /** The worker's module; default the compiled parse-worker.js (a test gives one that fails). */
  workerUrl?: URL;
  /** How often a worker hands over its counts; default 100 ms (a test stretches it to see what does not wait for it). */
  flushMs?: number;
}

interface Thread {
  worker: Worker;
  counts: FollowerCountsState;
  started: Deferred<void>;
  caughtUp: Deferred<void>;
  /** Its cut in the cut under way, or its final one once stopped. */
  cut: WorkerCut | undefined;
  /** Deltas that came after its cut, while other workers' cuts were awaited. */
  later: PipelineDelta[];
  stopped: Deferred<void> | undefined;
  final: WorkerCut | undefined;
}

export class ParseThreads implements FollowerCounts {
  private readonly threads: Thread[] = [];
  private readonly patterns: string[];
  private cutId = 0;
  private pendingCut: { id: number; done: Deferred<WorkerCut[]> } | undefined;
  private cutting: Promise<unknown> = Promise.resolve();
  private broken: Error | undefined;
  readonly caughtUp: Promise<void>;

  constructor(private readonly opts: ParseThreadsOptions) {
    const config = opts.config;
    this.patterns = config.sources.files;
    const n = Math.max(1, Math.min(opts.workers, this.patterns.length));
    const shares = Array.from({ length: n }, (_, i) => this.patterns.filter((_p, j) => j % n === i));
    const maxOpenFiles = Math.max(MIN_OPEN_FILES, Math.floor(config.sources.maxOpenFiles / n));
    // Taken once: every worker starts from the same restored series.
    const restored = opts.resume === undefined ? undefined : metricsState(opts.pipeline.metrics);
    shares.forEach((patterns, i) => {
      const init: ParseWorkerInit = {
        config: { ...config, sources: { ...config.sources, files: patterns, stdin: false, maxOpenFiles } },
        ...(opts.resume === undefined ? {} : { resume: { ...opts.resume, state: shareOf(opts.resume.state, patterns, this.patterns, i === 0) } }),
        ...(restored === undefined ? {} : { restored }),
        held: i === 0 ? [...opts.held] : [],
        flushMs: opts.flushMs ?? FLUSH_MS,
      };
      // A young generation of 8 MiB, as report's worker: the same speed, a smaller RSS.
      const worker = new Worker(opts.workerUrl ?? WORKER_URL, { workerData: init, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
      const t: Thread = {
        worker,
        counts: { followed: 0, open: 0, cap: maxOpenFiles, modes: [], watched: 0, fallbacks: 0 },
        started: deferred<void>(),
        caughtUp: deferred<void>(),
        cut: undefined,
        later: [],
        stopped: undefined,
        final: undefined,
      };
      worker.on('online', recheckHeapLimits);
      worker.on('message', (m: ToParseThreads) => this.receive(t, m));
      worker.on('error', (err: Error) => this.fail(t, err));
      worker.on('exit', (code) => {
        if (t.final === undefined) this.fail(t, new Error(`parse worker exited with code ${code}`));
      });
      this.threads.push(t);
    });
    this.caughtUp = Promise.all(this.threads.map((t) => t.caughtUp.promise)).then(() => undefined);
  }

  /** Resolves once every worker's first scan is done. */
  async start(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.started.promise));
  }

  /**
   * Calls `take` with every worker's positions and held lines at a consistent cut: every count a worker
   * handed over before its cut is in the pipeline, none after it. After stop(), the final positions.
   */
  snapshot<T>(take: (state: FollowerState, held: HeldLines[]) => T): Promise<T> {
    const run = this.cutting.then(() => this.cut(take));
    this.cutting = run.catch(() => undefined);
    return run;
  }

  /** Stops every worker after its last counts and positions are in (kept for the final checkpoint). */
  async stop(): Promise<void> {
    await this.cutting;
    await Promise.all(
      this.threads.map(async (t) => {
        if (t.final !== undefined || this.broken !== undefined) return;
        t.stopped = deferred<void>();
        t.worker.postMessage({ type: 'stop' } satisfies ToParseWorker);
        await t.stopped.promise;
      }),
    );
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  get followedCount(): number {
    return this.sum((c) => c.followed);
  }

  get openFileCount(): number {
    return this.sum((c) => c.open);
  }

  get openFileCap(): number {
    return this.sum((c) => c.cap);
  }

  get directoryModes(): Map<DirectoryMode, number> {
    const modes = new Map<DirectoryMode, number>();
    for (const t of this.threads) for (const [mode, n] of t.counts.modes) modes.set(mode, (modes.get(mode) ?? 0) + n);
    return modes;
  }

  get watchedDirectories(): { watched: number; fallbacks: number } {
    return { watched: this.sum((c) => c.watched), fallbacks: this.sum((c) => c.fallbacks) };
  }

  private sum(of: (c: FollowerCountsState) => number): number {
    return this.threads.reduce((n, t) => n + of(t.counts), 0);
  }

  private async cut<T>(take: (state: FollowerState, held: HeldLines[]) => T): Promise<T> {
    if (this.broken !== undefined) throw new Error(`no checkpoint: ${this.broken.message}`);
    let cuts: WorkerCut[];
    if (this.threads.every((t) => t.final !== undefined)) cuts = this.threads.map((t) => t.final as WorkerCut);
    else {
      const id = ++this.cutId;
      const done = deferred<WorkerCut[]>();
      this.pendingCut = { id, done };
      for (const t of this.threads) t.worker.postMessage({ type: 'cut', id } satisfies ToParseWorker);
      try {
        cuts = await done.promise;
      } finally {
        this.pendingCut = undefined;
      }
    }
    try {
      return take(
        union(
          this.patterns,
          cuts.map((c) => c.state),
        ),
        cuts.flatMap((c) => c.held),
      );
    } finally {
      // What came after each worker's cut counts from now on.
      for (const t of this.threads) {
        t.cut = undefined;
        for (const d of t.later.splice(0)) mergeDelta(this.opts.pipeline, d);
      }
    }
  }

  private receive(t: Thread, m: ToParseThreads): void {
    switch (m.type) {
      case 'delta':
        if (m.counts !== undefined) t.counts = m.counts;
        if (m.delta === undefined) return;
        if (t.cut !== undefined) t.later.push(m.delta);
        else mergeDelta(this.opts.pipeline, m.delta);
        return;
      case 'log':
        this.opts.log[m.level](m.msg, m.fields);
        return;
      case 'dropped':
        this.opts.dropped(m.dropped);
        return;
      case 'started':
        t.counts = m.counts;
        t.started.resolve();
        return;
      case 'caughtUp':
        t.caughtUp.resolve();
        return;
      case 'cut':
        // A cut no longer awaited (it failed): its counts still count.
        if (this.pendingCut?.id !== m.id) {
          if (m.cut.delta !== undefined) mergeDelta(this.opts.pipeline, m.cut.delta);
          return;
        }
        this.cutIn(t, m.cut);
        return;
      case 'stopped':
        t.final = m.cut;
        this.cutIn(t, m.cut);
        t.stopped?.resolve();
        return;
    }
  }

  private cutIn(t: Thread, cut: WorkerCut): void {
    t.counts = cut.counts;
    if (cut.delta !== undefined) mergeDelta(this.opts.pipeline, cut.delta);
    cut.state = reviveState(cut.state);
    t.cut = cut;
    const pending = this.pendingCut;
    if (pending !== undefined && this.threads.every((x) => x.cut !== undefined)) pending.done.resolve(this.threads.map((x) => x.cut as WorkerCut));
    // No cut awaited (a worker stopped): nothing of it is held back.
    else if (pending === undefined) t.cut = undefined;
  }

  private fail(t: Thread, err: Error): void {
    // A worker that gave its final cut has nothing left to lose.
    if (this.broken !== undefined || t.final !== undefined) return;
    this.broken = err;
    this.pendingCut?.done.reject(err);
    for (const x of this.threads) {
      x.started.reject(err);
      x.stopped?.resolve();
    }
    this.opts.failed(err);
  }
}

/** Node 20 has no Promise.withResolvers. */
interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (err: Error) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A rejection nobody awaits (a worker failed before start() was called) is not an unhandled one: fail() reports it.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * One worker's part of a checkpoint's positions: the files of its patterns; the first worker also gets
 * those of no configured pattern (it looks for them as one follower would) and the remembered ones.
 */
function shareOf(state: FollowerState, mine: readonly string[], all: readonly string[], first: boolean): FollowerState {
  const own = new Set(mine);
  const configured = new Set(all);
  return {
    patterns: state.patterns.filter((p) => own.has(p) || (first && !configured.has(p))),
    files: state.files.filter((f) => own.has(f.source) || (first && !configured.has(f.source))),
    known: first ? state.known : [],
  };
}

/** The workers' positions as one follower's: each file once (a worker keeps a file it does not follow in `known`). */
function union(patterns: readonly string[], states: readonly FollowerState[]): FollowerState {
  const files = states.flatMap((s) => s.files);
  const followed = new Set(files.map((f) => f.key));
  const known = new Map<string, FollowerState['known'][number]>();
  for (const s of states) for (const k of s.known) if (!followed.has(k.key) && !known.has(k.key)) known.set(k.key, k);
  return { patterns: [...patterns], files, known: [...known.values()] };
}

/** Buffers cross threads as plain Uint8Arrays: made Buffers again (a checkpoint writes them as base64). */
export function reviveState(state: FollowerState): FollowerState {
  const buf = (b: Uint8Array) => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  return {
    patterns: state.patterns,
    files: state.files.map((f): FilePosition => ({ ...f, head: buf(f.head) })),
    known: state.known.map((k) => ({ ...k, head: buf(k.head) })),
  };
}
