import type { Readable } from 'node:stream';
import type { LineSink, SourceEvents } from './line-sink.js';
import type { EnvelopeMode } from './envelope.js';
import { LineSplitter } from './line-splitter.js';
import { errorMessage } from './fs-error-reason.js';

const STDIN_SOURCE = 'stdin';

/** Delivers the lines of stdin (or any injected byte stream) as they arrive, flushing the last one at its end. */
export class StdinFollower {
  /** Resolves when the input ends, fails, or the follower is stopped. */
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private readonly splitter: LineSplitter;
  private readonly input: Readable;

  private readonly onData = (chunk: Buffer | string): void => {
    this.splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  };
  private readonly onEnd = (): void => {
    this.splitter.flush();
    this.finish();
  };
  private readonly onError = (err: Error): void => {
    if (this.finished) return;
    this.events.error(STDIN_SOURCE, 'read_error', errorMessage(err));
    this.finish();
  };
  private finished = false;

  constructor(
    maxLineBytes: number,
    sink: LineSink,
    private readonly events: SourceEvents,
    input?: Readable,
    envelope: EnvelopeMode = 'none',
  ) {
    this.input = input ?? process.stdin;
    this.splitter = new LineSplitter(maxLineBytes, sink, STDIN_SOURCE, undefined, envelope);
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  start(): void {
    this.input.on('data', this.onData);
    this.input.once('end', this.onEnd);
    this.input.on('error', this.onError);
  }

  /** Stops reading; a pending partial line is dropped. */
  stop(): void {
    // Pausing (rather than destroying) lets the process exit without closing fd 0 under others.
    this.input.pause();
    this.finish();
  }

  private finish(): void {
    this.finished = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    // The error listener stays: an error on an unlistened stream would crash the process.
    this.resolveDone();
  }
}
