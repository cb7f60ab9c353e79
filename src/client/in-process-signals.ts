// The four signals inside the calling application: each call's line goes through the exporter's own
// pipeline (record → signals → window and counters), so the families, the 5 m window and the arithmetic
// are exactly those of `serve`, with no gateway and no exporter in between.
import { defaultConfig, inputSchema, type Config } from '../config/schema.js';
import type { ClientConfig } from './client-config.js';
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

/**
 * The pipeline's whole Config from the sections the client reads (client-config.ts, checked with the
 * schema's own rules when instrumentFetch() was called); the others, which the pipeline does not read,
 * are the defaults.
 */
export function pipelineConfig(config: ClientConfig): Config {
  return { ...defaultConfig(), ...config };
}

/**
 * The config the client's own lines are read with: the default preset and no envelope, whatever the
 * config says about the files `serve` reads. The client wrote these lines (call-record.ts), so their
 * format is known: with input.preset: auto, lines without a Zero-Plane header were held back while the
 * format was detected, and nothing here ever settles a hold, so such calls were never counted.
 */
export function clientLineConfig(config: Config): Config {
  return { ...config, input: inputSchema.parse({ preset: 'default', envelope: 'none' }) };
}

export class InProcessSignals implements RecordSink {
  readonly pipeline: Pipeline;
  private readonly gauges: WindowGauges;

  constructor(
    private readonly config: Config,
    private readonly metrics: ClientMetrics,
    clock?: () => number,
  ) {
    this.pipeline = new Pipeline(clientLineConfig(config), clock === undefined ? {} : { clock });
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
