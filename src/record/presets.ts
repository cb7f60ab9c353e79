// Field mappings for the log formats gateways write. The README shows the nginx `log_format` and the
// Envoy `json_format` that produce exactly these field names.
import type { Config } from '../config/schema.js';

export interface Mapping {
  time: string;
  latency: string;
  status: string;
  model: string;
  route: string;
  cohort: string;
  latencyUnit: 's' | 'ms' | 'us';
  responseHeaders: { path?: string | undefined; prefix?: string | undefined };
  requestHeaders: { path?: string | undefined; prefix?: string | undefined };
}

export const PRESETS: Record<Config['input']['preset'], Mapping> = {
  default: {
    time: 'ts',
    latency: 'latency_ms',
    status: 'status',
    model: 'model',
    route: 'route',
    cohort: 'cohort',
    latencyUnit: 'ms',
    responseHeaders: { path: 'response_headers' },
    requestHeaders: { path: 'request_headers' },
  },
  // nginx `escape=json`: variables logged under their own names; `$request_time` is in seconds.
  'nginx-json': {
    time: 'time_iso8601',
    latency: 'request_time',
    status: 'status',
    model: 'http_x_model',
    route: 'uri',
    cohort: 'http_x_cohort',
    latencyUnit: 's',
    responseHeaders: { prefix: 'upstream_http_' },
    requestHeaders: { prefix: 'http_' },
  },
  // Envoy `json_format`: `%DURATION%` is integer milliseconds, `%START_TIME%` is RFC 3339.
  'envoy-json': {
    time: 'start_time',
    latency: 'duration',
    status: 'response_code',
    model: 'model',
    route: 'route_name',
    cohort: 'cohort',
    latencyUnit: 'ms',
    responseHeaders: { prefix: 'resp_' },
    requestHeaders: { prefix: 'req_' },
  },
};

/** The preset named in the config with the config's overrides applied. */
export function mappingFor(input: Config['input']): Mapping {
  const preset = PRESETS[input.preset];
  return {
    ...preset,
    ...input.fields,
    latencyUnit: input.latencyUnit ?? preset.latencyUnit,
    responseHeaders: input.responseHeaders ?? preset.responseHeaders,
    requestHeaders: input.requestHeaders ?? preset.requestHeaders,
  };
}
