// One gateway access-log line in the exporter's default format (docs/contract.md §3, preset `default`): what the load
// generator writes per round trip, and what the client library (src/client) records per call.
import type { IncomingHttpHeaders } from 'node:http';
import { OPT_IN_HEADER } from '../simulate/protocol.js';

export interface RoundTrip {
  /** Epoch ms when the request was started. */
  startedAtMs: number;
  latencyMs: number;
  status: number;
  model: string;
  route: string;
  /** Omitted from the line when undefined. */
  cohort?: string | undefined;
  responseHeaders: IncomingHttpHeaders;
  /** The opt-in value sent, or undefined when none was. */
  optIn: string | undefined;
  /** The opt-in header's name; default x-anthropic-experimental. */
  optInHeader?: string;
}

export interface GatewayLogRecord {
  ts: string;
  latency_ms: number;
  status: number;
  model: string;
  route: string;
  cohort?: string;
  response_headers: Record<string, string>;
  request_headers: Record<string, string>;
}

/** Milliseconds as the log writes them: to the microsecond (three decimals). */
export const logMs = (v: number): number => Math.round(v * 1000) / 1000;

export function gatewayLogRecord(t: RoundTrip): GatewayLogRecord {
  const response: Record<string, string> = {};
  for (const [name, value] of Object.entries(t.responseHeaders)) {
    if (value === undefined) continue;
    response[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    ts: new Date(t.startedAtMs).toISOString(),
    latency_ms: logMs(t.latencyMs),
    status: t.status,
    model: t.model,
    route: t.route,
    ...(t.cohort === undefined ? {} : { cohort: t.cohort }),
    response_headers: response,
    request_headers: t.optIn === undefined ? {} : { [t.optInHeader ?? OPT_IN_HEADER]: t.optIn },
  };
}

/** The line, without its newline. */
export function gatewayLogLine(t: RoundTrip): string {
  return JSON.stringify(gatewayLogRecord(t));
}
