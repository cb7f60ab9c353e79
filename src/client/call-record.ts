// One instrumented call as a gateway access-log line in the default format (loadgen/log-line.ts): the same
// line whether it is fed to an in-process pipeline, appended to a file `serve` follows, or pushed to an
// exporter's /api/v1/ingest, so all three count it the same way.
import type { Config } from '../config/schema.js';
import { gatewayLogLine } from '../loadgen/log-line.js';
import { SignalClassifier } from '../signals/classify.js';

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
}

export class CallRecorder {
  /** Only the response headers the signals read are kept: the line stays small and carries nothing else. */
  private readonly responseHeaderNames: readonly string[];
  private readonly optInHeader: string;

  constructor(headers: Config['headers']) {
    this.responseHeaderNames = new SignalClassifier(headers).responseHeaderNames;
    this.optInHeader = headers.optIn.name.toLowerCase();
  }

  line(call: CallFacts): string {
    const responseHeaders: Record<string, string> = {};
    for (const name of this.responseHeaderNames) {
      const value = call.responseHeaders.get(name);
      if (value !== null) responseHeaders[name] = value;
    }
    return gatewayLogLine({
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
  }
}
