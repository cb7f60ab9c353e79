// The engine: one line in → record → signals → window and counters. `serve` and `report` both feed
// lines here, so the two can never compute different numbers from the same log.
import { mergeMetricsState, metricsState, type MetricsState } from './metrics/metrics-state.js';
import type { Config } from './config/schema.js';
import { histogramBuckets } from './metrics/buckets.js';
import { ExporterMetrics } from './metrics/exporter-metrics.js';
import type { HistogramSeries, SeriesHandle } from './metrics/families.js';
import { OVERFLOW_VALUE } from './metrics/label-limiter.js';
import { mappingFor } from './record/presets.js';
import { RecordParser, type ParseResult } from './record/parse-record.js';
import { SignalClassifier } from './signals/classify.js';
import type { OptIn } from './signals/opt-in.js';
import type { LineSink } from './source/line-sink.js';
import { Aggregate, type AggregateState } from './windows/aggregate.js';
import { SlidingWindow, type Clock } from './windows/sliding-window.js';

export interface PipelineOptions {
  clock?: Clock;
  /**
   * Aggregate over everything read (for `report`) instead of the sliding window: a one-shot run has no
   * "last 5 minutes", and skipping the window saves a second sketch insert per line.
   */
  keepTotals?: boolean;
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];
/** Index of 'unknown' in a RequestSeries row, after the five classes. */
const UNKNOWN_STATUS = STATUS_CLASSES.length;

/**
 * The series one request feeds, resolved once per (hit, status class, model, route, cohort): the per-line
 * path then adds to them directly instead of joining labels into a key per metric per line (that join and
 * lookup was ~15 % of `report`; see bench/RESULTS.md).
 */
interface RequestSeries {
  requests: SeriesHandle;
  duration: HistogramSeries;
  degraded: SeriesHandle;
  cached: SeriesHandle;
  /** Only on hit series: warm-up outcomes are only counted for hits. */
  warmupHit: SeriesHandle | undefined;
  warmupMiss: SeriesHandle | undefined;
}

/** A keepTotals pipeline as plain data that crosses threads: `report` on two threads (cli/report-parallel.ts). */
export interface PipelineState {
  metrics: MetricsState;
  total: AggregateState;
}

/** model → route → cohort → row of 12 (hit × status class), filled as combinations appear. */
type SeriesIndex = Map<string, Map<string, Map<string, (RequestSeries | undefined)[]>>>;

interface SourceSeries {
  lines: SeriesHandle;
  /** Created by the first record, so the gauge is absent until a source has one. */
  lastRecord: SeriesHandle | undefined;
}

/** The record parser a config describes, extracting the headers the classifier reads. */
export function recordParserFor(config: Config, classifier: SignalClassifier): RecordParser {
  return new RecordParser({
    mapping: mappingFor(config.input),
    latencyList: config.input.latencyList,
    absentValues: config.input.absentValues,
    responseHeaderNames: classifier.responseHeaderNames,
    requestHeaderNames: classifier.requestHeaderNames,
  });
}

export class Pipeline implements LineSink {
  readonly metrics: ExporterMetrics;
  readonly window: SlidingWindow;
  /** Over every record read, when keepTotals is set (the window then stays empty). */
  readonly total: Aggregate | undefined;
  private readonly parser: RecordParser;
  private readonly classifier: SignalClassifier;
  private readonly clock: Clock;
  private readonly delayProfileHeader: string;
  private readonly seriesIndex: SeriesIndex = new Map();
  private readonly sources = new Map<string, SourceSeries>();
  /** By defect, or by state when there is none (the two sets of names do not overlap). */
  private readonly optInSeries = new Map<string, SeriesHandle>();

  constructor(readonly config: Config, opts: PipelineOptions = {}) {
    this.clock = opts.clock ?? Date.now;
    this.classifier = new SignalClassifier(config.headers);
    this.parser = recordParserFor(config, this.classifier);
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
    this.add(this.parser.parse(text), source);
  }

  /** A line as bytes: read in place when the parser can, else decoded; the same record either way. */
  lineBytes(buf: Buffer, start: number, end: number, source: string): void {
    this.add(this.parser.parseBytes(buf, start, end) ?? this.parser.parse(buf.toString('utf8', start, end)), source);
  }

  private add(parsed: ParseResult, source: string): void {
    const m = this.metrics;
    const src = this.sourceSeries(source);
    src.lines.value++;
    if (!parsed.ok) {
      m.parseErrors.inc([parsed.reason]);
      return;
    }
    const r = parsed.record;
    const s = this.classifier.classify(r);
    const model = m.model.map(r.model);
    const series = this.requestSeries(s.hit, r.status, model, m.route.map(r.route), m.cohort.map(r.cohort));

    series.requests.value++;
    series.duration.observe(r.latencySeconds);
    if (s.degraded) series.degraded.value++;
    if (s.warmup !== undefined) {
      const warm = s.warmup === 'hit' ? series.warmupHit : series.warmupMiss;
      if (warm !== undefined) warm.value++;
      else m.warmup.inc([s.warmup, model]);
    }
    if (s.cached) series.cached.value++;
    if (s.downgradeReason !== undefined) m.downgrades.inc([m.reason.map(s.downgradeReason)]);
    if (s.mode !== undefined) m.throttleModes.inc([s.mode]);
    if (s.optIn !== undefined) this.optInSeriesOf(s.optIn).value++;
    if (s.delayProfileInvalid) m.headerParseErrors.inc([this.delayProfileHeader]);

    const timeSeconds = (r.timeMs ?? this.clock()) / 1000;
    if (timeSeconds > (src.lastRecord?.value ?? 0)) {
      src.lastRecord ??= m.lastRecord.handle([source]);
      src.lastRecord.value = timeSeconds;
    }

    if (this.total === undefined) this.window.add(s, r.latencySeconds, r.timeMs);
    else this.total.add(s, r.latencySeconds);
  }

  /**
   * The series of one label combination, created (with the series it implies) on its first request. When
   * one of the families a request feeds is full (metrics.maxSeriesPerFamily), a new combination goes to
   * __other__ in all of them, so they keep agreeing; each such request is counted once, on the family that
   * was full, and is not indexed, so the index stays as bounded as the families.
   */
  private requestSeries(hit: boolean, status: number | undefined, model: string, route: string, cohort: string): RequestSeries {
    const cls = status === undefined ? UNKNOWN_STATUS : statusIndex(status);
    const i = (hit ? 0 : UNKNOWN_STATUS + 1) + cls;
    const found = this.seriesIndex.get(model)?.get(route)?.get(cohort)?.[i];
    if (found !== undefined) return found;
    const hitLabel = hit ? 'true' : 'false';
    const statusClass = STATUS_CLASSES[cls] ?? 'unknown';
    const full = this.fullFamily(hitLabel, statusClass, model, route, cohort);
    if (full !== undefined) {
      full.overflowed();
      return this.requestSeries(hit, status, OVERFLOW_VALUE, OVERFLOW_VALUE, OVERFLOW_VALUE);
    }
    let byRoute = this.seriesIndex.get(model);
    if (byRoute === undefined) this.seriesIndex.set(model, (byRoute = new Map()));
    let byCohort = byRoute.get(route);
    if (byCohort === undefined) byRoute.set(route, (byCohort = new Map()));
    let row = byCohort.get(cohort);
    if (row === undefined) byCohort.set(cohort, (row = []));
    return (row[i] = this.createRequestSeries(hitLabel, statusClass, model, route, cohort));
  }

  /** The first family a new request series would not fit (so it would go to __other__ there), if any. */
  private fullFamily(hit: string, statusClass: string, model: string, route: string, cohort: string): { overflowed(): void } | undefined {
    const m = this.metrics;
    if (!m.requests.admits([hit, statusClass, model, route, cohort])) return m.requests;
    if (!m.duration.admits([hit, model, route, cohort])) return m.duration;
    if (!m.degraded.admits([model, route, cohort])) return m.degraded;
    if (!m.cached.admits([model, route])) return m.cached;
    if (hit === 'true' && !m.warmup.admits(['hit', model], ['miss', model])) return m.warmup;
    return undefined;
  }

  private createRequestSeries(hit: string, statusClass: string, model: string, route: string, cohort: string): RequestSeries {
    const m = this.metrics;
    const requestLabels = [hit, statusClass, model, route, cohort];
    if (!m.requests.has(requestLabels)) {
      // Prometheus sees no increase in a series that appears already at 1: create the series the rules
      // take increase() of at 0 as soon as their labels exist, so the first degraded request alerts.
      m.degraded.touch([model, route, cohort]);
      m.cached.touch([model, route]);
      if (hit === 'true') for (const outcome of ['hit', 'miss']) m.warmup.touch([outcome, model]);
    }
    return {
      requests: m.requests.handle(requestLabels),
      duration: m.duration.handle([hit, model, route, cohort]),
      degraded: m.degraded.handle([model, route, cohort]),
      cached: m.cached.handle([model, route]),
      warmupHit: hit === 'true' ? m.warmup.handle(['hit', model]) : undefined,
      warmupMiss: hit === 'true' ? m.warmup.handle(['miss', model]) : undefined,
    };
  }

  private sourceSeries(source: string): SourceSeries {
    let s = this.sources.get(source);
    if (s === undefined) {
      // A gauge restored from a checkpoint is picked up, so older lines read again do not move it back.
      const m = this.metrics;
      s = { lines: m.lines.handle([source]), lastRecord: m.lastRecord.has([source]) ? m.lastRecord.handle([source]) : undefined };
      this.sources.set(source, s);
    }
    return s;
  }

  private optInSeriesOf(optIn: OptIn): SeriesHandle {
    const key = optIn.defect ?? optIn.state;
    let h = this.optInSeries.get(key);
    if (h === undefined) {
      h = this.metrics.optIn.handle([optIn.state, optIn.defect ?? '']);
      this.optInSeries.set(key, h);
    }
    return h;
  }

  /** Everything `report` reads from this pipeline (created with keepTotals), as plain data. */
  state(): PipelineState {
    if (this.total === undefined) throw new Error('Pipeline.state needs keepTotals');
    return { metrics: metricsState(this.metrics), total: this.total.state() };
  }

  /**
   * Adds the state of a pipeline that read the lines following the ones this one read. Exact when
   * mergesExactly(this.metrics, later.metrics) holds (the caller checks it first).
   */
  merge(later: PipelineState): void {
    if (this.total === undefined) throw new Error('Pipeline.merge needs keepTotals');
    mergeMetricsState(this.metrics, later.metrics);
    this.total.mergeState(later.total);
    // A source's last-record gauge may exist only now: resolve the source series again on its next line.
    this.sources.clear();
  }

  oversize(source: string): void {
    this.sourceSeries(source).lines.value++;
    this.metrics.parseErrors.inc(['too_long']);
  }
}

/** Index into STATUS_CLASSES, or UNKNOWN_STATUS. */
function statusIndex(status: number): number {
  const i = Math.floor(status / 100) - 1;
  return i >= 0 && i < STATUS_CLASSES.length ? i : UNKNOWN_STATUS;
}
