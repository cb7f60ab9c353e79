// Every metric of SPEC §5 that is fed per line, with its name, help and labels in one place.
import { OPT_IN_DEFECTS } from '../signals/opt-in.js';
import { PARSE_ERROR_REASONS } from '../record/parse-record.js';
import { CounterFamily, GaugeFamily, HistogramFamily } from './families.js';
import { LabelLimiter } from './label-limiter.js';

export interface MetricLimits {
  labelValueLimit: number;
  downgradeReasonLimit: number;
}

export class ExporterMetrics {
  readonly requests = new CounterFamily(
    'zero_plane_requests_total',
    'LLM requests seen in the gateway log, by whether Zero-Plane served them.',
    ['hit', 'status_class', 'model', 'route', 'cohort'],
  );
  readonly duration: HistogramFamily;
  readonly degraded = new CounterFamily(
    'zero_plane_degraded_requests_total',
    'Requests whose delay profile says degraded=?1.',
    ['model', 'route', 'cohort'],
  );
  readonly warmup = new CounterFamily(
    'zero_plane_warmup_total',
    'Zero-Plane requests with a known warm-up outcome (hit or miss).',
    ['outcome', 'model'],
  );
  readonly cached = new CounterFamily('zero_plane_cached_responses_total', 'Responses served from cache.', ['model', 'route']);
  readonly downgrades = new CounterFamily('zero_plane_downgrades_total', 'Requests downgraded off Zero-Plane, by reason.', ['reason']);
  readonly throttleModes = new CounterFamily('zero_plane_throttle_mode_total', 'Requests by delay-profile throttle mode.', ['mode']);
  readonly optIn = new CounterFamily(
    'zero_plane_opt_in_header_total',
    'Requests by state of the opt-in request header; defect says why a malformed one is malformed.',
    ['state', 'defect'],
  );

  readonly lines = new CounterFamily('zero_plane_exporter_lines_total', 'Log lines read, by source.', ['source']);
  readonly parseErrors = new CounterFamily(
    'zero_plane_exporter_parse_errors_total',
    'Log lines skipped because they could not be used as a record, by reason.',
    ['reason'],
  );
  readonly headerParseErrors = new CounterFamily(
    'zero_plane_exporter_header_parse_errors_total',
    'Structured-field headers that did not parse; the record still counts as a request.',
    ['header'],
  );
  readonly lastRecord = new GaugeFamily(
    'zero_plane_exporter_last_record_timestamp_seconds',
    'Event time of the newest record read from the source (arrival time when the line has none).',
    ['source'],
  );
  readonly labelOverflow = new CounterFamily(
    'zero_plane_exporter_label_overflow_total',
    'Label values replaced by __other__ because the label reached its value limit.',
    ['label'],
  );
  readonly rotations = new CounterFamily(
    'zero_plane_exporter_file_rotations_total',
    'Rotations of followed files seen (rename, truncate, copytruncate-recovered, symlink, recreate); unrecovered: a generation gone or compressed before it could be read.',
    ['source', 'kind'],
  );
  readonly skippedBytes = new CounterFamily(
    'zero_plane_exporter_skipped_bytes_total',
    'Bytes never read, by reason: truncated (a plain truncate before they were read) or catch_up_cap (after downtime, more than checkpoint.maxCatchUpBytes behind).',
    ['source', 'reason'],
  );
  readonly partialLines = new CounterFamily(
    'zero_plane_exporter_partial_lines_total',
    'Last lines without a newline, delivered when their file was let go of (rotated away or deleted).',
    ['source'],
  );
  readonly sourceErrors = new CounterFamily(
    'zero_plane_exporter_source_errors_total',
    'Problems reading a source (missing file, permission denied, read error); the source is retried.',
    ['source', 'reason'],
  );

  readonly model: LabelLimiter;
  readonly route: LabelLimiter;
  readonly cohort: LabelLimiter;
  readonly reason: LabelLimiter;

  constructor(buckets: readonly number[], limits: MetricLimits) {
    this.duration = new HistogramFamily(
      'zero_plane_request_duration_seconds',
      'Request latency as logged by the gateway; buckets include the drift floor, baseline and ceiling exactly.',
      ['hit', 'model', 'route', 'cohort'],
      buckets,
    );
    const limiter = (label: string, limit: number) => new LabelLimiter(limit, () => this.labelOverflow.inc([label]));
    this.model = limiter('model', limits.labelValueLimit);
    this.route = limiter('route', limits.labelValueLimit);
    this.cohort = limiter('cohort', limits.labelValueLimit);
    this.reason = limiter('reason', limits.downgradeReasonLimit);

    // Series that alerts take increase() of exist from the start, so the first event is an increase.
    for (const reason of PARSE_ERROR_REASONS) this.parseErrors.touch([reason]);
    this.optIn.touch(['valid', '']);
    this.optIn.touch(['missing', '']);
    for (const defect of OPT_IN_DEFECTS) this.optIn.touch(['malformed', defect]);
    for (const label of ['model', 'route', 'cohort', 'reason']) this.labelOverflow.touch([label]);
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
      this.lines,
      this.parseErrors,
      this.headerParseErrors,
      this.lastRecord,
      this.labelOverflow,
      this.rotations,
      this.skippedBytes,
      this.partialLines,
      this.sourceErrors,
    ];
  }
}
