// The instrumented fetch's own metrics: what the opt-in guard did, calls without a response, records
// delivered or lost, and failures of the instrumentation itself (which never fail the call).
import { CounterFamily, GaugeFamily } from '../metrics/families.js';
import { OPT_IN_DEFECTS } from '../signals/opt-in.js';
import type { OptInAction } from './opt-in-guard.js';

/** Where records go; the `to` label. */
export type Destination = 'in-process' | 'log-file' | 'ingest';

/** Stages of the instrumentation that can fail without failing the call. */
export const INSTRUMENTATION_STAGES = ['guard', 'record', 'deliver'] as const;
export type InstrumentationStage = (typeof INSTRUMENTATION_STAGES)[number];

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
  }

  families() {
    return [this.guard, this.failures, this.instrumentationErrors, this.records, this.pending];
  }
}
