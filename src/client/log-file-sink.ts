// Appends each call's line to a gateway-format log file that `serve` follows. Lines queue while one write
// is in flight and go out together in the next (one append per batch, opened by path each time, so a
// logrotate rename or delete is followed at the next write, as `serve` follows it on its side).
import { appendFile } from 'node:fs/promises';
import type { ClientMetrics } from './client-metrics.js';
import type { Family } from './exposition.js';
import type { RecordSink } from './record-sink.js';

export interface LogFileOptions {
  path: string;
  /** Lines held while the file cannot be written fast enough; past it new lines are dropped (counted). */
  maxPendingRecords: number;
}

export class LogFileSink implements RecordSink {
  private queue: string[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly opts: LogFileOptions,
    private readonly metrics: ClientMetrics,
    private readonly warn: (key: string, message: string) => void,
  ) {}

  write(line: string): void {
    if (this.queue.length >= this.opts.maxPendingRecords) {
      this.metrics.records.inc(['log-file', 'dropped']);
      this.warn('full', `zero-plane client: ${this.opts.path} is not written fast enough; dropping records past ${this.opts.maxPendingRecords} pending`);
      return;
    }
    this.queue.push(line);
    this.metrics.pending.set(['log-file'], this.queue.length);
    this.writing ??= this.drain();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await appendFile(this.opts.path, `${batch.join('\n')}\n`);
        this.metrics.records.inc(['log-file', 'delivered'], batch.length);
      } catch (err) {
        this.metrics.records.inc(['log-file', 'dropped'], batch.length);
        this.warn('write', `zero-plane client: cannot append to ${this.opts.path} (${(err as Error).message}); records are dropped and counted while it fails`);
      }
      this.metrics.pending.set(['log-file'], this.queue.length);
    }
    this.writing = undefined;
  }

  families(): readonly Family[] {
    return [];
  }

  async flush(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }

  close(): Promise<void> {
    return this.flush();
  }
}
