// The instrumented fetch's own metrics: what the opt-in guard did, calls without a response, records
// delivered or lost, failures of the instrumentation itself (which never fail the call), and GenAI label
// values past their bounds.
import { CounterFamily, GaugeFamily } from '../metrics/families.js';
import { LABEL_OVERFLOW_REASONS } from '../metrics/label-limiter.js';
import { OPT_IN_DEFECTS } from '../signals/opt-in.js';
import { GEN_AI_BOUNDED_LABELS } from './genai-metrics.js';
import type { OptInAction } from './opt-in-guard.js';

/** Where records go; the `to` label. */
export type Destination = 'in-process' | 'log-file' | 'ingest';

/** Stages of the instrumentation that can fail without failing the call. */
export const INSTRUMENTATION_STAGES = ['guard', 'record', 'deliver'] as const;
export type InstrumentationStage = (typeof INSTRUMENTATION_STAGES)[number];

export const STREAM_REFUSAL_REASONS = ['zero_plane_does_not_stream', 'stream_unsupported', 'other'] as const;
export type StreamRefusalReason = (typeof STREAM_REFUSAL_REASONS)[number];

/**
 * Why a stream request got a 400: the error names streaming (the simulator's and Zero-Plane's wording:
 * "stream: … not supported", "does not stream"), and the call carried the valid opt-in or not; else other.
 */
export function streamRefusalReason(optedIn: boolean, errorMessage: string | undefined): StreamRefusalReason {
  if (errorMessage === undefined || !/\bstream/i.test(errorMessage)) return 'other';
  return optedIn ? 'zero_plane_does_not_stream' : 'stream_unsupported';
}

export type RecordResult = 'delivered' | 'dropped' | 'rejected';

export class ClientMetrics {
  readonly guard = new CounterFamily(
    'zero_plane_client_opt_in_guard_total',
    'Malformed opt-in request headers the client guard found, by what it did (reported: sent as is; repaired: sent fixed; rejected: not sent) and defect.',
    ['action', 'defect'],
  );
  readonly failures = new CounterFamily(
    'zero_plane_client_request_failures_total',
    'Calls that got no response (aborted: timeout or abort signal; error: connection failed); they are not recorded as requests.',
    ['reason'],
  );
  readonly instrumentationErrors = new CounterFamily(
    'zero_plane_client_instrumentation_errors_total',
    'Failures inside the instrumentation, by stage (guard, record, deliver); the call went on unchanged.',
    ['stage'],
  );
  readonly records = new CounterFamily(
    'zero_plane_client_records_total',
    'Calls recorded, by destination and result: delivered, dropped (queue full, destination unreachable) or rejected (by the exporter).',
    ['to', 'result'],
  );
  readonly pending = new GaugeFamily('zero_plane_client_pending_records', 'Records waiting to be written or sent.', ['to']);
  readonly streamRefusals = new CounterFamily(
    'zero_plane_client_stream_refusals_total',
    'Stream requests ("stream": true) refused with a 400, by why: zero_plane_does_not_stream (opted in: the Zero-Plane layer does not stream), stream_unsupported (the endpoint does not stream), other.',
    ['reason'],
  );
  /** Named as the exporter's zero_plane_exporter_label_overflow_total, with the client's prefix. */
  readonly labelOverflow = new CounterFamily(
    'zero_plane_client_label_overflow_total',
    'Label values of the GenAI metrics not kept as the calls gave them: replaced by __other__ past metrics.labelValueLimit (too_many_values), or cut to metrics.labelValueMaxBytes (too_long).',
    ['label', 'reason'],
  );

  constructor(action: OptInAction, to: Destination) {
    // Series that alerts take increase() of exist from the start, so the first event is an increase.
    const guardAction = action === 'report' ? 'reported' : action === 'repair' ? 'repaired' : 'rejected';
    for (const defect of OPT_IN_DEFECTS) this.guard.touch([guardAction, defect]);
    // repair falls back to reporting the defects it cannot fix (case, value).
    if (action === 'repair') for (const defect of OPT_IN_DEFECTS) this.guard.touch(['reported', defect]);
    for (const reason of ['aborted', 'error']) this.failures.touch([reason]);
    for (const stage of INSTRUMENTATION_STAGES) this.instrumentationErrors.touch([stage]);
    for (const result of ['delivered', 'dropped', ...(to === 'ingest' ? ['rejected'] : [])]) this.records.touch([to, result]);
    if (to !== 'in-process') this.pending.set([to], 0);
    for (const reason of STREAM_REFUSAL_REASONS) this.streamRefusals.touch([reason]);
    for (const label of GEN_AI_BOUNDED_LABELS) for (const reason of LABEL_OVERFLOW_REASONS) this.labelOverflow.touch([label, reason]);
  }

  families() {
    return [this.guard, this.failures, this.instrumentationErrors, this.records, this.pending, this.streamRefusals, this.labelOverflow];
  }
}
