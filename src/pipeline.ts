// The engine: one line in → record → signals → window and counters. `serve` and `report` both feed
// lines here, so the two can never compute different numbers from the same log.
import type { Config } from './config/schema.js';
import { histogramBuckets } from './metrics/buckets.js';
import { ExporterMetrics } from './metrics/exporter-metrics.js';
import { mappingFor } from './record/presets.js';
import { RecordParser } from './record/parse-record.js';
import { SignalClassifier } from './signals/classify.js';
import type { LineSink } from './source/line-sink.js';
import { Aggregate } from './windows/aggregate.js';
import { SlidingWindow, type Clock } from './windows/sliding-window.js';

export interface PipelineOptions {
  clock?: Clock;
  /** Keep aggregates over everything read (for `report`), not only the sliding window. */
  keepTotals?: boolean;
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

export class Pipeline implements LineSink {
  readonly metrics: ExporterMetrics;
  readonly window: SlidingWindow;
  /** Over every record read, when keepTotals is set. */
  readonly total: Aggregate | undefined;
  private readonly parser: RecordParser;
  private readonly classifier: SignalClassifier;
  private readonly clock: Clock;
  private readonly delayProfileHeader: string;

  constructor(readonly config: Config, opts: PipelineOptions = {}) {
    this.clock = opts.clock ?? Date.now;
    this.classifier = new SignalClassifier(config.headers);
    this.parser = new RecordParser({
      mapping: mappingFor(config.input),
      latencyList: config.input.latencyList,
      absentValues: config.input.absentValues,
      responseHeaderNames: this.classifier.responseHeaderNames,
      requestHeaderNames: this.classifier.requestHeaderNames,
    });
    this.metrics = new ExporterMetrics(histogramBuckets(config), config.metrics);
    this.window = new SlidingWindow({
      durationMs: config.window.duration,
      slotMs: config.window.slot,
      relativeAccuracy: config.window.quantileRelativeAccuracy,
      clock: this.clock,
    });
    this.total = opts.keepTotals ? new Aggregate(config.window.quantileRelativeAccuracy) : undefined;
    this.delayProfileHeader = config.headers.delayProfile.name.toLowerCase();
  }

  line(text: string, source: string): void {
    const m = this.metrics;
    m.lines.inc([source]);
    const parsed = this.parser.parse(text);
    if (!parsed.ok) {
      m.parseErrors.inc([parsed.reason]);
      return;
    }
    const r = parsed.record;
    const s = this.classifier.classify(r);
    const hit = s.hit ? 'true' : 'false';
    const model = m.model.map(r.model);
    const route = m.route.map(r.route);
    const cohort = m.cohort.map(r.cohort);

    if (m.requests.inc([hit, statusClass(r.status), model, route, cohort])) {
      // Prometheus sees no increase in a series that appears already at 1: create the series the rules
      // take increase() of at 0 as soon as their labels exist, so the first degraded request alerts.
      m.degraded.touch([model, route, cohort]);
      m.cached.touch([model, route]);
      if (s.hit) for (const outcome of ['hit', 'miss']) m.warmup.touch([outcome, model]);
    }
    m.duration.observe([hit, model, route, cohort], r.latencySeconds);
    if (s.degraded) m.degraded.inc([model, route, cohort]);
    if (s.warmup !== undefined) m.warmup.inc([s.warmup, model]);
    if (s.cached) m.cached.inc([model, route]);
    if (s.downgradeReason !== undefined) m.downgrades.inc([m.reason.map(s.downgradeReason)]);
    if (s.mode !== undefined) m.throttleModes.inc([s.mode]);
    if (s.optIn !== undefined) m.optIn.inc([s.optIn.state, s.optIn.defect ?? '']);
    if (s.delayProfileInvalid) m.headerParseErrors.inc([this.delayProfileHeader]);

    const timeSeconds = (r.timeMs ?? this.clock()) / 1000;
    if (timeSeconds > m.lastRecord.get([source])) m.lastRecord.set([source], timeSeconds);

    this.window.add(s, r.latencySeconds, r.timeMs);
    this.total?.add(s, r.latencySeconds);
  }

  oversize(source: string): void {
    this.metrics.lines.inc([source]);
    this.metrics.parseErrors.inc(['too_long']);
  }
}

function statusClass(status: number | undefined): string {
  if (status === undefined) return 'unknown';
  return STATUS_CLASSES[Math.floor(status / 100) - 1] ?? 'unknown';
}
