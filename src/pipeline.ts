// The engine: one line in → record → signals → window and counters. `serve` and `report` both feed
// lines here, so the two can never compute different numbers from the same log.
import { mergeMetricsState, metricsState, type MetricsState } from './metrics/metrics-state.js';
import type { Config } from './config/schema.js';
import { histogramBuckets } from './metrics/buckets.js';
import { ExporterMetrics } from './metrics/exporter-metrics.js';
import { CounterFamily, GaugeFamily, type HistogramSeries, type SeriesHandle } from './metrics/families.js';
import { OVERFLOW_VALUE } from './metrics/label-limiter.js';
import type { Evidence } from './record/detect-preset.js';
import type { HeaderWatchState, WatchOutcome } from './record/input-watch.js';
import type { PresetName, TokenType } from './record/presets.js';
import { TOO_LONG, type ParseResult, type RecordParser } from './record/parse-record.js';
import { candidateFor, headerless, lacksTokens, SourceInputs, type HeadersHint, type HeldLines, type InputEvents, type SourceInput } from './record/source-inputs.js';
import { SignalClassifier } from './signals/classify.js';
import type { OptIn } from './signals/opt-in.js';
import type { Envelope } from './source/envelope.js';
import type { LineSink, Stream } from './source/line-sink.js';
import { Aggregate, type AggregateState } from './windows/aggregate.js';
import { CapacityWindows, type CapacityWindowsState } from './windows/capacity-windows.js';
import { GroupedAggregates, type GroupLabel } from './windows/grouped-aggregates.js';
import { RepeatedPrompts, type RepeatsState } from './windows/repeated-prompts.js';
import { SlidingWindow, type Clock } from './windows/sliding-window.js';

export interface PipelineOptions {
  clock?: Clock;
  /**
   * Aggregate over everything read (for `report`) instead of the sliding window: a one-shot run has no
   * "last 5 minutes", and skipping the window saves a second sketch insert per line.
   */
  keepTotals?: boolean;
  /** With keepTotals: also aggregate per value of this label (`report --by`), into `groups`. */
  groupBy?: GroupLabel;
  /** Told what the first lines of each source showed about its format. */
  input?: InputEvents;
  /**
   * Keep what each source's first lines showed, for state(): the worker thread of `report`, whose half of a
   * file continues the watch of the thread that read the first half.
   */
  keepWatchOutcomes?: boolean;
  /**
   * Only the counters and the histogram, no window or totals (a replay of old logs, src/history, computes
   * its windows from the counters as the rules do).
   */
  countersOnly?: boolean;
  /**
   * Given every line once it is read (a record, or why the line is not one) instead of counting it:
   * src/history holds lines back to count them in the order of their own time, with count().
   */
  hold?: (parsed: ParseResult, source: string) => void;
  /** Told the envelope input.envelope: auto found in the first lines of each file (source/envelope.ts). */
  envelope?: (source: string, envelope: Envelope) => void;
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
  /** [status code, requests] for every code seen. */
  statusCodes: [number, number][];
  /** Per source, what its first lines showed (with keepWatchOutcomes). */
  watches: [string, WatchOutcome[]][];
  /** Per group value, with groupBy. */
  groups?: [string, AggregateState][];
  capacity: CapacityWindowsState;
  /** Per source, its header watch (with keepWatchOutcomes). */
  headerWatches: [string, HeaderWatchState][];
  /** The most repeated prompt hashes. */
  repeats: RepeatsState;
}

/**
 * Lines read from bytes are parsed as they come and counted in batches of up to this many, at the latest
 * when the chunk they came in ends (LineSink.chunkEnd). Parsing and counting are each more code than the
 * CPU's instruction cache holds together: interleaved line by line, each evicted the other (cachegrind:
 * ~480 instruction-cache misses per default line, ~150 for parsing alone); batched, each runs from cache.
 */
const COUNT_BATCH = 64;

/** model → route → cohort → row of 12 (hit × status class), filled as combinations appear. */
type SeriesIndex = Map<string, Map<string, Map<string, (RequestSeries | undefined)[]>>>;

/** What counting a record touches of its source: its name and its two per-source series. */
interface CountedSource {
  readonly name: string;
  lines: SeriesHandle;
  /** Created by the first record, so the gauge is absent until a source has one. */
  lastRecord: SeriesHandle | undefined;
}

/** One source's series, and how its lines are read (record/source-inputs.ts). */
interface SourceState extends SourceInput, CountedSource {}

/** Status codes counted one by one for `report` (0–999: what the record parser accepts). */
const STATUS_CODES = 1000;

/** The record parser of one preset (input.preset, or `preset` when given), extracting the headers the classifier reads. */
export function recordParserFor(config: Config, classifier: SignalClassifier, preset?: PresetName): RecordParser {
  return candidateFor(config, classifier, preset ?? (config.input.preset === 'auto' ? 'default' : config.input.preset)).parser;
}

export class Pipeline implements LineSink {
  readonly metrics: ExporterMetrics;
  readonly window: SlidingWindow;
  /** Over every record read, when keepTotals is set (the window then stays empty). */
  readonly total: Aggregate | undefined;
  /** Per value of the groupBy label (after its label limiter), when keepTotals and groupBy are set. */
  readonly groups: GroupedAggregates | undefined;
  /** Per window of record time, when keepTotals is set: `report`'s capacity figure. */
  readonly capacity: CapacityWindows | undefined;
  /**
   * zero_plane_exporter_input_info{source,preset}: 1 for each preset a stream of the source (a followed
   * file, the latest ingest body) is read with now, 0 for one it no longer is.
   */
  readonly inputInfo = new GaugeFamily(
    'zero_plane_exporter_input_info',
    'The input presets the source is read with now: 1 per preset in use by its files (input.preset, or detected per file when auto), 0 for one no longer in use.',
    ['source', 'preset'],
  );
  /**
   * zero_plane_exporter_input_decisions_total{source,basis}: each stream's format decision by what it rested
   * on (detect-preset.ts DecisionBasis); `signature`, `latency` and `ambiguous` were made without a header.
   */
  readonly inputDecisions = new CounterFamily(
    'zero_plane_exporter_input_decisions_total',
    'Format decisions per stream (a followed file generation, an ingest body, stdin), by basis: evidence (a Zero-Plane header field seen), previous, configured, given; signature, latency or ambiguous when decided without one.',
    ['source', 'basis'],
  );
  /** zero_plane_exporter_headers_unseen{source}: 1 while none of a source's records carried a wanted response header field (after input.headerWatch), 0 once one did. */
  readonly headersUnseen = new GaugeFamily(
    'zero_plane_exporter_headers_unseen',
    'Per source: 1 while none of its records (at least input.headerWatch of them) carried a wanted response header field where its preset keeps them, 0 once one did.',
    ['source'],
  );
  /** zero_plane_exporter_input_envelope_info{source,envelope}: 1 for each envelope a file of the source was found in. */
  readonly inputEnvelope = new GaugeFamily(
    'zero_plane_exporter_input_envelope_info',
    "What wraps the lines of the source's files (input.envelope, or found in each file's first lines when auto): none, cri, docker or syslog.",
    ['source', 'envelope'],
  );
  /** Requests by status code (index), when keepTotals is set: `report` lists the most frequent. */
  readonly statusCodes: number[] | undefined;
  /** The most repeated prompts (records that carry a prompt hash), with their cached answers: repeats.k hashes at most. */
  readonly repeats: RepeatedPrompts;
  private readonly classifier: SignalClassifier;
  private readonly clock: Clock;
  private readonly delayProfileHeader: string;
  private readonly seriesIndex: SeriesIndex = new Map();
  /** By stream key (SourceInputs.streams). */
  private readonly sources: Map<string, SourceState>;
  private readonly inputs: SourceInputs<SourceState>;
  /** By defect, or by state when there is none (the two sets of names do not overlap). */
  private readonly optInSeries = new Map<string, SeriesHandle>();
  private readonly countersOnly: boolean;
  private readonly hold: PipelineOptions['hold'];
  private readonly onEnvelope: PipelineOptions['envelope'];
  /** Parsed by lineBytes, not yet counted, with their sources: in the order read (see COUNT_BATCH). */
  private readonly parsedBatch: ParseResult[] = [];
  /** Sources whose records are read elsewhere (countRecord): no format detection, watch or input.preset. */
  private readonly recordSources = new Map<string, CountedSource>();
  private readonly sourceBatch: SourceState[] = [];

  constructor(
    readonly config: Config,
    opts: PipelineOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    this.classifier = new SignalClassifier(config.headers);
    const events = opts.input;
    this.inputs = new SourceInputs<SourceState>({
      config,
      wanted: this.classifier,
      clock: this.clock,
      keepWatchOutcomes: opts.keepWatchOutcomes,
      events: {
        ...events,
        headersUnseen: (source, hint) => {
          this.headersUnseen.set([source], 1);
          events?.headersUnseen?.(source, hint);
        },
        headersSeen: (source, records, warned) => {
          this.headersUnseen.set([source], 0);
          events?.headersSeen?.(source, records, warned);
        },
      },
      count: (src, parsed) => this.add(parsed, src),
      inUse: (source, preset, on) => this.inputInfo.set([source, preset], on ? 1 : 0),
      decision: (source, basis) => this.inputDecisions.inc([source, basis]),
    });
    this.sources = this.inputs.streams;
    this.metrics = new ExporterMetrics(histogramBuckets(config), config.metrics);
    this.window = new SlidingWindow({
      durationMs: config.window.duration,
      slotMs: config.window.slot,
      relativeAccuracy: config.window.quantileRelativeAccuracy,
      clock: this.clock,
    });
    this.total = opts.keepTotals ? new Aggregate(config.window.quantileRelativeAccuracy) : undefined;
    this.groups = opts.keepTotals && opts.groupBy !== undefined ? new GroupedAggregates(opts.groupBy, config.window.quantileRelativeAccuracy) : undefined;
    this.statusCodes = opts.keepTotals ? new Array<number>(STATUS_CODES).fill(0) : undefined;
    this.repeats = new RepeatedPrompts(config.repeats.k);
    // The histogram's own bounds: countLine hands the window the bucket observe() found.
    this.capacity = opts.keepTotals ? new CapacityWindows(config.pack.rateWindow, this.metrics.duration.bounds) : undefined;
    this.delayProfileHeader = config.headers.delayProfile.name.toLowerCase();
    this.countersOnly = opts.countersOnly === true;
    this.hold = opts.hold;
    this.onEnvelope = opts.envelope;
  }

  line(text: string, source: string, stream?: Stream): void {
    this.chunkEnd();
    const src = this.sourceState(source, stream);
    const parser = src.parser;
    if (parser === undefined) {
      this.inputs.detect(src, text);
      return;
    }
    const parsed = parser.parse(text);
    const tokens = src.tokens;
    if (tokens !== undefined && headerless(parsed) && tokens.every((t) => !text.includes(t.toString()))) {
      this.inputs.recheck(src, text);
      return;
    }
    if (src.watch !== undefined) this.inputs.seen(src, parsed, text);
    this.add(parsed, src);
  }

  /**
   * A line as bytes: read in place when the parser can, else decoded; the same record either way. It is
   * counted with the next lines of its chunk, in order (COUNT_BATCH), by chunkEnd() at the latest; every
   * other method counts what is pending first.
   */
  lineBytes(buf: Buffer, start: number, end: number, source: string, stream?: Stream): void {
    const src = this.sourceState(source, stream);
    const parser = src.parser;
    if (parser === undefined || src.watch !== undefined) {
      // Detection and the watch of a source's first lines may count held lines: they go after the pending ones.
      this.chunkEnd();
      if (parser === undefined) {
        this.inputs.detect(src, buf.toString('utf8', start, end));
        return;
      }
    }
    const parsed = parser.parseBytes(buf, start, end) ?? parser.parse(buf.toString('utf8', start, end));
    // A line with no wanted header and none of the preset's keys may be another gateway's (detect again).
    const tokens = src.tokens;
    if (tokens !== undefined && headerless(parsed) && lacksTokens(buf, start, end, tokens)) {
      this.chunkEnd();
      this.inputs.recheck(src, buf.toString('utf8', start, end));
      return;
    }
    if (src.watch !== undefined) {
      this.inputs.seenBytes(src, parsed, buf, start, end);
      this.add(parsed, src);
      return;
    }
    this.parsedBatch.push(parsed);
    this.sourceBatch.push(src);
    if (this.parsedBatch.length >= COUNT_BATCH) this.chunkEnd();
  }

  /** Counts the lines lineBytes parsed and has not counted yet (LineSplitter calls it after each chunk). */
  chunkEnd(): void {
    const parsed = this.parsedBatch;
    const n = parsed.length;
    if (n === 0) return;
    const sources = this.sourceBatch;
    try {
      for (let i = 0; i < n; i++) this.add(parsed[i] as ParseResult, sources[i] as SourceState);
    } finally {
      // Emptied even if a count throws: a line is never counted twice.
      parsed.length = 0;
      sources.length = 0;
    }
  }

  oversize(source: string, stream?: Stream): void {
    this.chunkEnd();
    const src = this.sourceState(source, stream);
    this.add(TOO_LONG, src);
    this.inputs.oversize(src);
  }

  nulBytes(source: string, bytes: number): void {
    this.metrics.nulBytes.inc([source], bytes);
  }

  envelope(source: string, envelope: Envelope): void {
    this.inputEnvelope.set([source, envelope], 1);
    this.onEnvelope?.(source, envelope);
  }

  /** Counts a line that `hold` was given (a replay, in the order of the lines' own time). */
  count(parsed: ParseResult, source: string): void {
    this.chunkEnd();
    this.countLine(parsed, this.sourceState(source));
  }

  /**
   * Counts a record read elsewhere, by a reader that decides its own format (the OTLP receiver): the source
   * is not one of the files', so input.preset, format detection and the header watch are not its; and
   * input_info and input_decisions_total are the reader's to set.
   */
  countRecord(parsed: ParseResult, source: string): void {
    this.chunkEnd();
    let src = this.recordSources.get(source);
    if (src === undefined) {
      const m = this.metrics;
      src = { name: source, lines: m.lines.handle([source]), lastRecord: m.lastRecord.has([source]) ? m.lastRecord.handle([source]) : undefined };
      this.recordSources.set(source, src);
    }
    this.countLine(parsed, src);
  }

  /**
   * The source has delivered what it has for now (the end of an ingest body): lines held while its format
   * is detected are counted, with the preset they make the most records for.
   */
  drain(source: string, stream?: Stream): void {
    this.chunkEnd();
    const src = this.sources.get(stream?.key ?? source);
    if (src !== undefined) this.inputs.drain(src);
  }

  /** The stream has ended (an ingest body): its held lines are counted and its state let go. */
  release(_source: string, stream: Stream): void {
    this.chunkEnd();
    const src = this.sources.get(stream.key);
    if (src !== undefined) this.inputs.release(src);
  }

  /**
   * The lines held now while streams' formats are detected, for a checkpoint: taken in the same step as
   * the counters and offsets, so the three agree (restoreHeld offers them again after a restart).
   */
  held(): HeldLines[] {
    this.chunkEnd();
    return this.inputs.held();
  }

  /**
   * A checkpoint's held lines, offered again before anything is read: each lineage's lines go to a stream
   * that the first new stream of the lineage (the same file, resumed) takes over, so they are counted once,
   * with the preset its lines show.
   */
  restoreHeld(held: readonly HeldLines[]): void {
    held.forEach((h, i) => {
      const stream: Stream = { key: `${h.lineage}\u0000restored-${i}`, lineage: h.lineage, path: h.path };
      for (const text of h.lines) this.line(text, h.source, stream);
      const src = this.sources.get(stream.key);
      if (src !== undefined) this.inputs.restoredStream(src);
    });
  }

  /**
   * For `serve`, called every second or so: a source whose held lines have waited DETECT_WAIT_MS is decided,
   * and a watch running for WATCH_MS says what it found. Whether anything was (counted or said).
   */
  settle(): boolean {
    this.chunkEnd();
    return this.inputs.settle();
  }

  /** The end of the input (`report`): every held line is counted and every watch says what it found. */
  finish(): void {
    this.chunkEnd();
    this.inputs.finish();
  }

  /** Reads `source` with `preset` from its next line, as if detected (`report` detects a file split across threads up front). */
  useDetected(source: string, preset: PresetName, evidence?: Evidence): void {
    this.chunkEnd();
    this.inputs.useDetected(this.sourceState(source), preset, evidence);
  }

  /** Each source's preset (null: not decided, no line was read by any). */
  presets(): Record<string, PresetName | null> {
    return this.inputs.presets();
  }

  /** Sources said to carry no header, with what was said and whether one showed up later (seenAfter records). */
  headerHints(): [string, HeadersHint & { seenAfter: number | null }][] {
    return this.inputs.headerHints();
  }

  /** Sources with records of which not one (so far) carried a wanted response header field, with their record counts. */
  headersNeverSeen(): [string, number][] {
    return this.inputs.headersNeverSeen();
  }

  private add(parsed: ParseResult, src: SourceState): void {
    if (this.hold === undefined) this.countLine(parsed, src);
    else this.hold(parsed, src.name);
  }

  private countLine(parsed: ParseResult, src: CountedSource): void {
    const m = this.metrics;
    src.lines.value++;
    if (!parsed.ok) {
      m.parseErrors.inc([parsed.reason]);
      return;
    }
    const r = parsed.record;
    const s = this.classifier.classify(r);
    const model = m.model.map(r.model);
    const route = m.route.map(r.route);
    const cohort = m.cohort.map(r.cohort);
    const series = this.requestSeries(s.hit, r.status, model, route, cohort);

    series.requests.value++;
    const bucket = series.duration.observe(r.latencySeconds);
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
    if (r.tokens !== undefined) for (const type in r.tokens) m.tokens.inc([type, model], r.tokens[type as TokenType]);

    const codes = this.statusCodes;
    if (codes !== undefined && r.status !== undefined && r.status >= 0 && r.status < STATUS_CODES) codes[r.status] = (codes[r.status] as number) + 1;

    const timeSeconds = (r.timeMs ?? this.clock()) / 1000;
    // Another stream of the source may have created the gauge since this one was made.
    if (src.lastRecord === undefined && m.lastRecord.has([src.name])) src.lastRecord = m.lastRecord.handle([src.name]);
    if (timeSeconds > (src.lastRecord?.value ?? 0)) {
      src.lastRecord ??= m.lastRecord.handle([src.name]);
      src.lastRecord.value = timeSeconds;
    }

    if (this.countersOnly) return;
    if (r.promptHash !== undefined) this.repeats.add(r.promptHash, s.cached);
    if (this.total === undefined) this.window.add(s, r.latencySeconds, r.timeMs);
    else {
      this.total.add(s, r.latencySeconds);
      this.capacity?.add(r.timeMs, s.hit, r.latencySeconds, bucket);
      const groups = this.groups;
      if (groups !== undefined) groups.add(groups.label === 'model' ? model : groups.label === 'route' ? route : cohort, s, r.latencySeconds);
    }
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

  private sourceState(source: string, stream?: Stream): SourceState {
    let s = this.sources.get(stream === undefined ? source : stream.key);
    if (s === undefined) {
      // A gauge restored from a checkpoint is picked up, so older lines read again do not move it back.
      const m = this.metrics;
      const lines = m.lines.handle([source]);
      const lastRecord = m.lastRecord.has([source]) ? m.lastRecord.handle([source]) : undefined;
      s = this.inputs.create(source, stream, { lines, lastRecord });
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
    this.chunkEnd();
    const codes = (this.statusCodes ?? []).flatMap((n, code): [number, number][] => (n > 0 ? [[code, n]] : []));
    return {
      metrics: metricsState(this.metrics),
      total: this.total.state(),
      statusCodes: codes,
      watches: this.inputs.outcomes(),
      headerWatches: this.inputs.headerStates(),
      repeats: this.repeats.state(),
      ...(this.groups === undefined ? {} : { groups: this.groups.state() }),
      capacity: (this.capacity as CapacityWindows).state(),
    };
  }

  /**
   * Adds the state of a pipeline that read the lines following the ones this one read. Exact when
   * mergesExactly(this.metrics, later.metrics) holds (the caller checks it first).
   */
  merge(later: PipelineState): void {
    if (this.total === undefined) throw new Error('Pipeline.merge needs keepTotals');
    this.chunkEnd();
    mergeMetricsState(this.metrics, later.metrics);
    this.total.mergeState(later.total);
    if (this.groups !== undefined) this.groups.mergeState(later.groups ?? []);
    this.repeats.mergeState(later.repeats);
    this.capacity?.mergeState(later.capacity);
    const codes = this.statusCodes as number[];
    for (const [code, n] of later.statusCodes) codes[code] = (codes[code] as number) + n;
    // A source's last-record gauge may exist only now: pick it up, so the next line sees the merged value.
    for (const s of this.sources.values()) if (s.lastRecord === undefined && this.metrics.lastRecord.has([s.name])) s.lastRecord = this.metrics.lastRecord.handle([s.name]);
    // The later lines continue each watch still open here, as if this pipeline had read them.
    const headers = new Map(later.headerWatches);
    for (const [source, outcomes] of later.watches) {
      const src = this.sources.get(source);
      if (src !== undefined) this.inputs.continueWatch(src, outcomes, headers.get(source));
    }
  }
}

/** Index into STATUS_CLASSES, or UNKNOWN_STATUS. */
function statusIndex(status: number): number {
  const i = Math.floor(status / 100) - 1;
  return i >= 0 && i < STATUS_CLASSES.length ? i : UNKNOWN_STATUS;
}
