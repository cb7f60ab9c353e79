// Appends each call's line to a gateway-format log file that `serve` follows. Lines queue while one write
// is in flight and go out together in the next (one append per batch, opened by path each time, so a
// logrotate rename or delete is followed at the next write, as `serve` follows it on its side). The file
// is opened non-blocking: a FIFO with no reader fails at once (ENXIO) instead of holding a libuv thread,
// which would also keep process.exit() from returning. flush() and close() wait at most closeTimeout.
import type { ClientMetrics } from './client-metrics.js';
import type { Family } from './exposition.js';
import { nodeFs, nodeFsPromises } from './lazy-builtins.js';
import { PendingRecords, settleWithin, type RecordSink } from './record-sink.js';

export interface LogFileOptions {
  path: string;
  /** Lines held while the file cannot be written fast enough; past it new lines are dropped (counted). */
  maxPendingRecords: number;
  /** How long flush() and close() wait before giving up on what is left (counted as dropped). */
  closeTimeoutMs: number;
}

/** The open(2) flags of an append. O_NONBLOCK is 0 where the platform has none (Windows): there a FIFO path is not a thing to block on. */
function appendFlags(): number {
  const { constants } = nodeFs();
  return constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NONBLOCK ?? 0);
}
/** A full pipe (EAGAIN) is retried this many times, 20 ms apart, before the rest of the batch is dropped. */
const FULL_PIPE_RETRIES = 25;

async function appendNonBlocking(path: string, text: string): Promise<void> {
  const handle = await nodeFsPromises().open(path, appendFlags(), 0o666);
  try {
    let rest = Buffer.from(text, 'utf8');
    for (let tries = 0; rest.length > 0;) {
      try {
        const { bytesWritten } = await handle.write(rest);
        rest = rest.subarray(bytesWritten);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || ++tries > FULL_PIPE_RETRIES) throw err;
        await new Promise((resolve) => setTimeout(resolve, 20).unref());
      }
    }
  } finally {
    await handle.close();
  }
}

export class LogFileSink implements RecordSink {
  private readonly records: PendingRecords;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly opts: LogFileOptions,
    private readonly metrics: ClientMetrics,
    private readonly warn: (key: string, message: string) => void,
  ) {
    this.records = new PendingRecords(
      (outcome, n) => metrics.records.inc(['log-file', outcome], n),
      (n) => metrics.pending.set(['log-file'], n),
    );
  }

  write(line: string): void {
    if (this.records.length >= this.opts.maxPendingRecords) {
      this.metrics.records.inc(['log-file', 'dropped']);
      this.warn('full', `zero-plane client: ${this.opts.path} is not written fast enough; dropping records past ${this.opts.maxPendingRecords} pending`);
      return;
    }
    this.records.push(line);
    if (this.writing === undefined) {
      const writing: Promise<void> = this.drainQueue().finally(() => {
        if (this.writing === writing) this.writing = undefined;
      });
      this.writing = writing;
    }
  }

  private async drainQueue(): Promise<void> {
    while (this.records.length > 0) {
      const flight = this.records.take();
      try {
        await appendNonBlocking(this.opts.path, `${flight.batch.join('\n')}\n`);
        this.records.outcome(flight, 'delivered', flight.batch.length);
      } catch (err) {
        this.records.outcome(flight, 'dropped', flight.batch.length);
        const fifo = (err as NodeJS.ErrnoException).code === 'ENXIO' ? ' (a FIFO with no reader)' : '';
        this.warn('write', `zero-plane client: cannot append to ${this.opts.path}${fifo} (${(err as Error).message}); records are dropped and counted while it fails`);
      }
      this.records.landed(flight);
    }
  }

  families(): readonly Family[] {
    return [];
  }

  pending(): boolean {
    return this.records.length > 0 || this.writing !== undefined;
  }

  /** Waits for the writes, at most closeTimeout; then what is left is dropped and counted. */
  async flush(): Promise<void> {
    if (!(await settleWithin(this.opts.closeTimeoutMs, () => this.writing))) this.giveUpNow();
  }

  private giveUpNow(): void {
    const lost = this.records.giveUp();
    this.warn('gave-up', `zero-plane client: ${this.opts.path} took more than closeTimeout (${this.opts.closeTimeoutMs} ms) to write; ${lost} records dropped and counted`);
  }

  close(): Promise<void> {
    return this.flush();
  }
}
