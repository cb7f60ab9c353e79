// The four signals inside the calling application: each call's line goes through the exporter's own
// pipeline (record → signals → window and counters), so the families, the 5 m window and the arithmetic
// are exactly those of `serve`, with no gateway and no exporter in between.
import type { Config } from '../config/schema.js';
import { WindowGauges } from '../metrics/window-gauges.js';
import { Pipeline } from '../pipeline.js';
import { verdicts, type Verdicts as PipelineVerdicts } from '../landing/verdicts.js';
import { summarize, type SignalValues as PipelineSignalValues } from '../windows/summarize.js';
import type { ClientMetrics } from './client-metrics.js';
import type { Family } from './exposition.js';
import type { RecordSink } from './record-sink.js';
import type { SignalValues, Verdicts, WindowSignals } from './window-signals.js';

/** The `source` label of the lines an instrumented fetch feeds its own pipeline. */
export const CLIENT_SOURCE = 'client';

// window-signals.ts declares these shapes for the client's declarations; each must be the other both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameShapes: [Same<SignalValues, PipelineSignalValues>, Same<Verdicts, PipelineVerdicts>] = [true, true];
void sameShapes;

export class InProcessSignals implements RecordSink {
  readonly pipeline: Pipeline;
  private readonly gauges: WindowGauges;

  constructor(
    private readonly config: Config,
    private readonly metrics: ClientMetrics,
    clock?: () => number,
  ) {
    this.pipeline = new Pipeline(config, clock === undefined ? {} : { clock });
    this.gauges = new WindowGauges(this.pipeline.window, config.signals);
  }

  write(line: string): void {
    this.pipeline.line(line, CLIENT_SOURCE);
    this.metrics.records.inc(['in-process', 'delivered']);
  }

  /** The window's signals now, with the healthy/unhealthy verdicts the landing page shows. */
  signals(): WindowSignals {
    const window = summarize(this.pipeline.window.snapshot(), this.config.signals);
    return { window, verdicts: verdicts(window, this.config.signals) };
  }

  families(): readonly Family[] {
    return [...this.pipeline.metrics.families(), ...this.gauges.families()];
  }

  beforeScrape(): void {
    this.gauges.refresh();
  }

  pending(): boolean {
    return false;
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {}
}
