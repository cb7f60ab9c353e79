// Every metric of docs/contract.md §5 that is fed per line, with its name, help and labels in one place, and the
// bounds that keep /metrics finite whatever the lines say: each bounded label's values (count and
// length, label-limiter.ts) and each family's series (series-limit.ts).
import { OPT_IN_DEFECTS } from '../signals/opt-in.js';
import { PARSE_ERROR_REASONS } from '../record/parse-record.js';
import { CounterFamily, GaugeFamily, HistogramFamily } from './families.js';
import { LABEL_OVERFLOW_REASONS, LabelLimiter } from './label-limiter.js';
import type { SeriesLimitOptions } from './series-limit.js';

export interface MetricLimits {
  labelValueLimit: number;
  downgradeReasonLimit: number;
  /** Longest label value kept, in UTF-8 bytes; longer ones are cut. Unset: not cut. */
  labelValueMaxBytes?: number;
  /** Series per family before new label sets go to __other__. Unset: unbounded. */
  maxSeriesPerFamily?: number;
}

/** label_overflow_total had only `label` before values were cut; those counts were all past the value limit. */
class LabelOverflowFamily extends CounterFamily {
  override restore(rows: ReadonlyArray<readonly [readonly string[], number]>): void {
    super.restore(rows.map(([labels, value]) => [labels.length === 1 ? [labels[0] as string, 'too_many_values'] : labels, value] as const));
  }
}

export class ExporterMetrics {
  readonly requests: CounterFamily;
  readonly duration: HistogramFamily;
  readonly degraded: CounterFamily;
  readonly warmup: CounterFamily;
  readonly cached: CounterFamily;
  readonly downgrades: CounterFamily;
  readonly throttleModes: CounterFamily;
  readonly optIn: CounterFamily;
  /** Tokens the gateway logged per request (input.fields.tokens*), by type and model. */
  readonly tokens: CounterFamily;

  readonly lines: CounterFamily;
  readonly parseErrors: CounterFamily;
  readonly headerParseErrors: CounterFamily;
  readonly lastRecord: GaugeFamily;
  readonly labelOverflow: CounterFamily = new LabelOverflowFamily(
    'zero_plane_exporter_label_overflow_total',
    'Label values not kept as logged: replaced by __other__ past metrics.labelValueLimit (too_many_values), or cut to metrics.labelValueMaxBytes (too_long).',
    ['label', 'reason'],
  );
  readonly seriesOverflow = new CounterFamily(
    'zero_plane_exporter_series_overflow_total',
    "Events that went to a family's __other__ series because the family already held metrics.maxSeriesPerFamily series.",
    ['family'],
  );
  readonly rotations: CounterFamily;
  readonly skippedBytes: CounterFamily;
  readonly partialLines: CounterFamily;
  readonly unrecoveredLines: CounterFamily;
  readonly sourceErrors: CounterFamily;
  readonly nulBytes: CounterFamily;

  readonly model: LabelLimiter;
  readonly route: LabelLimiter;
  readonly cohort: LabelLimiter;
  readonly reason: LabelLimiter;

  constructor(buckets: readonly number[], limits: MetricLimits) {
    const limiter = (label: string, limit: number) => new LabelLimiter(limit, (why) => this.labelOverflow.inc([label, why]), limits.labelValueMaxBytes);
    this.model = limiter('model', limits.labelValueLimit);
    this.route = limiter('route', limits.labelValueLimit);
    this.cohort = limiter('cohort', limits.labelValueLimit);
    this.reason = limiter('reason', limits.downgradeReasonLimit);

    // Every family that lines (or a checkpoint) can grow is bounded; the labels named here fold to
    // __other__ when it is full, and a family whose labels are all closed sets folds every label.
    const max = limits.maxSeriesPerFamily;
    const bounded = (family: string, limiters: Record<string, LabelLimiter> = {}): SeriesLimitOptions | undefined =>
      max === undefined ? undefined : { maxSeries: max, limiters, onOverflow: () => this.seriesOverflow.inc([family]) };
    const counter = (name: string, help: string, labels: string[], limiters?: Record<string, LabelLimiter>) => new CounterFamily(name, help, labels, bounded(name, limiters));
    const { model, route, cohort } = this;
    const request = { model, route, cohort };

    this.requests = counter('zero_plane_requests_total', 'LLM requests seen in the gateway log, by whether Zero-Plane served them.', ['hit', 'status_class', 'model', 'route', 'cohort'], request);
    this.duration = new HistogramFamily(
      'zero_plane_request_duration_seconds',
      'Request latency as logged by the gateway; buckets include the drift floor, baseline and ceiling exactly.',
      ['hit', 'model', 'route', 'cohort'],
      buckets,
      bounded('zero_plane_request_duration_seconds', request),
    );
    this.degraded = counter('zero_plane_degraded_requests_total', 'Requests whose delay profile says degraded=?1.', ['model', 'route', 'cohort'], request);
    this.warmup = counter('zero_plane_warmup_total', 'Zero-Plane requests with a known warm-up outcome (hit or miss).', ['outcome', 'model'], { model });
    this.cached = counter('zero_plane_cached_responses_total', 'Responses served from cache.', ['model', 'route'], { model, route });
    this.downgrades = counter('zero_plane_downgrades_total', 'Requests downgraded off Zero-Plane, by reason.', ['reason'], { reason: this.reason });
    this.throttleModes = counter('zero_plane_throttle_mode_total', 'Requests by delay-profile throttle mode.', ['mode']);
    this.tokens = counter('zero_plane_tokens_total', 'Tokens the gateway logged for requests, by type (input, output, cache_read, cache_creation) and model.', ['type', 'model'], { model });
    this.optIn = counter('zero_plane_opt_in_header_total', 'Requests by state of the opt-in request header; defect says why a malformed one is malformed.', ['state', 'defect']);

    this.lines = counter('zero_plane_exporter_lines_total', 'Log lines read, by source.', ['source']);
    this.parseErrors = counter('zero_plane_exporter_parse_errors_total', 'Log lines skipped because they could not be used as a record, by reason.', ['reason']);
    this.headerParseErrors = counter('zero_plane_exporter_header_parse_errors_total', 'Structured-field headers that did not parse; the record still counts as a request.', ['header']);
    this.lastRecord = new GaugeFamily(
      'zero_plane_exporter_last_record_timestamp_seconds',
      'Event time of the newest record read from the source (arrival time when the line has none).',
      ['source'],
      bounded('zero_plane_exporter_last_record_timestamp_seconds'),
    );
    this.rotations = counter(
      'zero_plane_exporter_file_rotations_total',
      'Rotations of followed files seen (rename, truncate, copytruncate-recovered, symlink, recreate); unrecovered: a generation gone or compressed before it could be read.',
      ['source', 'kind'],
    );
    this.skippedBytes = counter(
      'zero_plane_exporter_skipped_bytes_total',
      'Bytes never read, by reason: truncated (a plain truncate before they were read), catch_up_cap (after downtime, more than checkpoint.maxCatchUpBytes behind) or unrecovered (a file deleted or compressed before it could be held open).',
      ['source', 'reason'],
    );
    this.partialLines = counter('zero_plane_exporter_partial_lines_total', 'Last lines without a newline, delivered when their file was let go of (rotated away or deleted).', ['source']);
    this.unrecoveredLines = counter(
      'zero_plane_exporter_unrecovered_lines_estimated_total',
      'Lines estimated lost in files deleted or compressed before they could be held open: their bytes (skipped_bytes_total{reason="unrecovered"}) over the average line length of the source.',
      ['source'],
    );
    this.sourceErrors = counter('zero_plane_exporter_source_errors_total', 'Problems reading a source (missing file, permission denied, read error); the source is retried.', ['source', 'reason']);

    this.nulBytes = counter(
      'zero_plane_exporter_nul_bytes_skipped_total',
      'NUL bytes skipped where a line starts: the hole a file truncated under a writer that does not append (Caddy, copytruncate) reads as.',
      ['source'],
    );

    // Series that alerts take increase() of exist from the start, so the first event is an increase.
    for (const reason of PARSE_ERROR_REASONS) this.parseErrors.touch([reason]);
    this.optIn.touch(['valid', '']);
    this.optIn.touch(['missing', '']);
    for (const defect of OPT_IN_DEFECTS) this.optIn.touch(['malformed', defect]);
    for (const label of ['model', 'route', 'cohort', 'reason']) for (const why of LABEL_OVERFLOW_REASONS) this.labelOverflow.touch([label, why]);
  }

  /** The bounded labels by name; a checkpoint keeps what each admitted, so __other__ maps the same after a restart. */
  limiters(): Record<'model' | 'route' | 'cohort' | 'reason', LabelLimiter> {
    return { model: this.model, route: this.route, cohort: this.cohort, reason: this.reason };
  }

  families() {
    return [
      this.requests,
      this.duration,
      this.degraded,
      this.warmup,
      this.cached,
      this.downgrades,
      this.throttleModes,
      this.optIn,
      this.tokens,
      this.lines,
      this.parseErrors,
      this.headerParseErrors,
      this.lastRecord,
      this.labelOverflow,
      this.seriesOverflow,
      this.rotations,
      this.skippedBytes,
      this.partialLines,
      this.unrecoveredLines,
      this.sourceErrors,
      this.nulBytes,
    ];
  }
}
