// The in-process destination, loaded when an instrumented fetch first needs it: the exporter's pipeline
// (record parsing, the sliding window and its DDSketches, the verdicts) is most of what the client
// weighs (with zod and the exporter's config schema), and an application sending its records to a file or an exporter never uses it. The module is
// imported when instrumentFetch() is called with `to: 'in-process'`; lines recorded before it is there
// wait in order and are counted the moment it is, and a call does not return before it is, so after
// `await zpFetch(...)` the call is in signals() and on /metrics.
import type { ClientConfig } from './client-config.js';
import type { ClientMetrics } from './client-metrics.js';
import type { Family } from './exposition.js';
import type { InProcessSignals } from './in-process-signals.js';
import type { RecordSink } from './record-sink.js';
import type { WindowSignals } from './window-signals.js';

export class LazyInProcess implements RecordSink {
  /** Resolves once the pipeline is loaded (or its loading failed, counted): never rejects. */
  readonly ready: Promise<void>;
  private sink: InProcessSignals | undefined;
  private failed = false;
  private queue: string[] = [];

  constructor(
    config: ClientConfig,
    private readonly metrics: ClientMetrics,
    warn: (key: string, message: string) => void,
  ) {
    this.ready = import('./in-process-signals.js').then(
      (m) => {
        const sink = new m.InProcessSignals(m.pipelineConfig(config), metrics);
        this.sink = sink;
        const queued = this.queue;
        this.queue = [];
        for (const line of queued) sink.write(line);
      },
      (err: unknown) => {
        // Never expected (the module ships beside this one); if it happens, what waited is counted, not lost silently.
        this.failed = true;
        metrics.records.inc(['in-process', 'dropped'], this.queue.length);
        this.queue = [];
        warn('in-process-load', `zero-plane client: the in-process pipeline could not be loaded (${(err as Error).message}); records are counted as dropped`);
      },
    );
  }

  /** Whether the pipeline is there (or will never be): a call need not wait for it. */
  get settled(): boolean {
    return this.sink !== undefined || this.failed;
  }

  write(line: string): void {
    if (this.sink !== undefined) this.sink.write(line);
    else if (this.failed) this.metrics.records.inc(['in-process', 'dropped']);
    else this.queue.push(line);
  }

  /** The window's signals now; undefined only before the pipeline is loaded (no call has returned yet). */
  signals(): WindowSignals | undefined {
    return this.sink?.signals();
  }

  families(): readonly Family[] {
    return this.sink?.families() ?? [];
  }

  beforeScrape(): void {
    this.sink?.beforeScrape();
  }

  pending(): boolean {
    return this.queue.length > 0;
  }

  flush(): Promise<void> {
    return this.ready;
  }

  close(): Promise<void> {
    return this.ready;
  }
}
