// One instrumented call as a gateway access-log line in the default format (loadgen/log-line.ts): the same
// line whether it is fed to an in-process pipeline, appended to a file `serve` follows, or pushed to an
// exporter's /api/v1/ingest, so all three count it the same way.
import type { Config } from '../config/schema.js';
import { gatewayLogRecord, logMs } from '../loadgen/log-line.js';
import { responseHeaderNames } from '../signals/header-names.js';
import type { BodyFacts } from './response-observer.js';

export interface CallFacts {
  startedAtMs: number;
  latencyMs: number;
  status: number;
  model: string;
  route: string;
  cohort: string | undefined;
  /** The opt-in value as sent (after a repair), undefined when the call carried none. */
  optIn: string | undefined;
  responseHeaders: Headers;
  /** What the body said (response-observer.ts); undefined when it was not observed. */
  body?: BodyFacts | undefined;
  /** The normalized prompt's hash (prompt-hash.ts), with the promptHash option: the default preset reads `prompt_hash`. */
  promptHash?: string | undefined;
}

/**
 * The fields a line carries beside the default format's, when the body was observed; the exporter's
 * default preset reads them back (record/presets.ts `genAi`):
 * `duration_ms` (call to the last byte), `first_event_ms` (to a stream's first content_block_delta),
 * `stream`, `tokens` {input, output, cache_read, cache_creation}, `response_model`, `error_type`.
 */
export interface BodyLineFields {
  duration_ms?: number;
  first_event_ms?: number;
  stream?: true;
  tokens?: { input: number; output: number; cache_read: number; cache_creation: number };
  response_model?: string;
  error_type?: string;
}

export function bodyLineFields(body: BodyFacts, errorType: string): BodyLineFields {
  const out: BodyLineFields = {};
  if (body.end !== 'unfinished') out.duration_ms = logMs(body.durationMs);
  if (body.firstEventMs !== undefined) out.first_event_ms = logMs(body.firstEventMs);
  if (body.stream) out.stream = true;
  const t = body.tokens;
  if (t !== undefined) out.tokens = { input: t.input, output: t.output, cache_read: t.cacheRead, cache_creation: t.cacheCreation };
  if (body.responseModel !== undefined) out.response_model = body.responseModel;
  if (errorType !== '') out.error_type = errorType;
  return out;
}

export class CallRecorder {
  /** Only the response headers the signals read are kept: the line stays small and carries nothing else. */
  private readonly responseHeaderNames: readonly string[];
  private readonly optInHeader: string;

  constructor(headers: Config['headers']) {
    this.responseHeaderNames = responseHeaderNames(headers);
    this.optInHeader = headers.optIn.name.toLowerCase();
  }

  line(call: CallFacts, errorType = ''): string {
    const responseHeaders: Record<string, string> = {};
    // Every header the signals read, null when the response did not carry it (JSON null is an absent
    // value to every preset): the line says the client looked, so `serve` and `report` read it as the
    // default preset on evidence at once (no hold while detecting, no "headers not logged" warning),
    // and still count the call as not served by Zero-Plane.
    const absent: Record<string, null> = {};
    for (const name of this.responseHeaderNames) {
      const value = call.responseHeaders.get(name);
      if (value !== null) responseHeaders[name] = value;
      else absent[name] = null;
    }
    const base = gatewayLogRecord({
      startedAtMs: call.startedAtMs,
      latencyMs: call.latencyMs,
      status: call.status,
      model: call.model,
      route: call.route,
      cohort: call.cohort,
      responseHeaders,
      optIn: call.optIn,
      optInHeader: this.optInHeader,
    });
    const record = { ...base, response_headers: { ...base.response_headers, ...absent }, ...(call.promptHash === undefined ? {} : { prompt_hash: call.promptHash }) };
    return JSON.stringify(call.body === undefined ? record : { ...record, ...bodyLineFields(call.body, errorType) });
  }
}
