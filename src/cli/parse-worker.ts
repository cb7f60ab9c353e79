// A parse worker of `serve` (parse-threads.ts starts it): follows its share of the configured files into a
// pipeline of its own and hands the serving thread what was counted, every FLUSH_MS, so the thread that
// answers /metrics never parses. A checkpoint's cut is taken here between two polls, so the offsets and
// the counts handed over with them agree.
import { parentPort, workerData } from 'node:worker_threads';
import { mergeMetricsState } from '../metrics/metrics-state.js';
import { Pipeline } from '../pipeline.js';
import { PipelineDeltas } from '../pipeline-delta.js';
import type { LogFields, Logger, LogLevel } from '../server/logger.js';
import type { LineSink, SourceEvents } from '../source/line-sink.js';
import { FileFollower, type FollowerState } from '../source/file-follower.js';
import { followerEvents } from './follower-events.js';
import { followOptionsOf } from './follow-options.js';
import { inputLog } from './input-log.js';
import { reviveState, type FollowerCountsState, type ToParseThreads, type ToParseWorker, type WorkerCut, type ParseWorkerInit } from './parse-threads.js';

/** How often the follower's file counts are looked at (they feed gauges read at scrape time). */
const COUNTS_INTERVAL_MS = 1000;
/** As in serve-command.ts: a quiet source whose first lines left its format open is decided after a while. */
const SETTLE_INTERVAL_MS = 500;

const port = parentPort;
if (port === null) throw new Error('parse-worker.js runs as a worker thread');
const init = workerData as ParseWorkerInit;
const config = init.config;
const post = (m: ToParseThreads) => port.postMessage(m);

/**
 * Log lines go to the serving thread's logger (its level and format). A warning or an error says what it
 * counted (a missing file, bytes skipped): the counts go first, on the same port, so a scrape after the log
 * line shows them. Info and debug lines (one per file opened) wait for the next flush.
 */
let flushable = false;
const at = (level: LogLevel) => (msg: string, fields?: LogFields) => {
  if (flushable && touched && (level === 'warn' || level === 'error')) {
    flush();
    // The call that logs may go on counting (a warning in the middle of a line): the next flush takes that.
    touched = true;
  }
  post({ type: 'log', level, msg, ...(fields === undefined ? {} : { fields }) });
};
const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };

const pipeline = new Pipeline(config, {
  input: inputLog(log),
  envelope: (source, envelope) => (envelope === 'none' ? log.debug : log.info).call(log, 'input envelope', { source, envelope }),
});
// The checkpoint's series, so this pipeline's label and series limits start where the serving thread's are;
// their counts are the serving thread's (baseline), only what is read from here on is handed over.
if (init.restored !== undefined) mergeMetricsState(pipeline.metrics, init.restored);
const deltas = new PipelineDeltas(pipeline);
deltas.baseline();
if (init.held.length > 0) pipeline.restoreHeld(init.held);

/**
 * Whether anything reached the pipeline since the last flush: an idle worker following 1,500 files then
 * takes no delta (one walks every series) ten times a second for nothing.
 */
let touched = true;
const sink: LineSink = {
  line: (text, source, stream) => {
    touched = true;
    pipeline.line(text, source, stream);
  },
  lineBytes: (buf, start, end, source, stream) => {
    touched = true;
    pipeline.lineBytes(buf, start, end, source, stream);
  },
  oversize: (source, stream) => {
    touched = true;
    pipeline.oversize(source, stream);
  },
  chunkEnd: () => pipeline.chunkEnd(),
  nulBytes: (source, bytes) => {
    touched = true;
    pipeline.nulBytes(source, bytes);
  },
  envelope: (source, envelope) => {
    touched = true;
    pipeline.envelope(source, envelope);
  },
};

const resume = init.resume === undefined ? undefined : { ...init.resume, state: reviveState(init.resume.state) };
const follower: FileFollower = new FileFollower(
  followOptionsOf(config, resume),
  sink,
  touching(
    followerEvents(pipeline.metrics, log, {
      dropped: (d) => post({ type: 'dropped', dropped: d }),
      watched: () => follower.watchedDirectories,
    }),
  ),
);

/** The events, each marking the pipeline touched (most count something). */
function touching(events: SourceEvents): SourceEvents {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(events) as [string, (...args: unknown[]) => void][]) {
    out[name] = (...args: unknown[]) => {
      touched = true;
      fn(...args);
    };
  }
  return out as unknown as SourceEvents;
}

function counts(): FollowerCountsState {
  const w = follower.watchedDirectories;
  return { followed: follower.followedCount, open: follower.openFileCount, cap: follower.openFileCap, modes: [...follower.directoryModes], watched: w.watched, fallbacks: w.fallbacks };
}

let lastCounts = '';
let countsDue = true;
flushable = true; // flush() and what it reads are declared from here on
/** Hands over what was counted since the last flush (and the follower's counts, about once a second). */
function flush(): void {
  const delta = touched ? deltas.take() : undefined;
  touched = false;
  let c: FollowerCountsState | undefined;
  if (countsDue) {
    countsDue = false;
    c = counts();
    const text = JSON.stringify(c);
    if (text === lastCounts) c = undefined;
    else lastCounts = text;
  }
  if (delta !== undefined || c !== undefined) post({ type: 'delta', ...(delta === undefined ? {} : { delta }), ...(c === undefined ? {} : { counts: c }) });
}

/** The cut of this moment: the held lines first (they count what was parsed and not counted yet), then the counts, with the offsets. */
function cutOf(state: FollowerState): WorkerCut {
  const held = pipeline.held();
  return { delta: deltas.take(), state, held, counts: counts() };
}

const flushing = setInterval(flush, init.flushMs);
const counting = setInterval(() => {
  countsDue = true;
}, COUNTS_INTERVAL_MS);
const settling = setInterval(() => {
  // Settling may count held lines, or end a watch.
  if (pipeline.settle()) touched = true;
}, SETTLE_INTERVAL_MS);

port.on('message', (m: ToParseWorker) => {
  if (m.type === 'cut') {
    void follower.snapshot(cutOf).then((cut) => post({ type: 'cut', id: m.id, cut }));
    return;
  }
  clearInterval(flushing);
  clearInterval(counting);
  clearInterval(settling);
  void follower
    .stop()
    .then(() => follower.snapshot(cutOf))
    .then((cut) => {
      post({ type: 'stopped', cut });
      port.close();
    });
});

await follower.start();
post({ type: 'started', counts: counts() });
void follower.caughtUp.then(() => {
  // The lines read up to here are handed over before the serving thread hears it is caught up.
  flush();
  post({ type: 'caughtUp' });
});
