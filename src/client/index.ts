// zero-plane-exporter/client: the caller's side. instrumentFetch() guards the opt-in header and records
// each call's signals (in-process, to a log file `serve` follows, or to an exporter's ingest endpoint);
// gateClient() tells the application whether a non-core call may go out during a P0.
export { instrumentFetch, type InstrumentedFetch, type InstrumentOptions, type IngestOptions } from './instrument-fetch.js';
export { gateClient, type GateClient, type GateClientOptions, type GateClientState, type CallKind, type GateReason } from './gate-client.js';
export { metricsHandler, prometheusRegistry, metricsText, type MetricsSource } from './exposition.js';
export { OptInHeaderError, type OptInAction } from './opt-in-guard.js';
export { ClientOptionsError } from './options.js';
export type { ConfigInput } from './option-types.js';
export type { WindowSignals, SignalValues, Verdicts, Verdict } from './window-signals.js';
export type { Fetch } from './fetch-args.js';
export type { OptInDefect } from '../signals/opt-in.js';
