// Field mappings for the log formats gateways write. The README shows, per gateway, the exact log config
// that produces these field names; `input.preset: auto` tries them all (detect-preset.ts).
import type { Config } from '../config/schema.js';

/** The log formats read without a mapping, in the order detection prefers them when several read a line. */
export const PRESET_NAMES = ['default', 'nginx-json', 'envoy-json', 'caddy-json', 'haproxy-json', 'kong-json', 'traefik-json'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/** Where a record carries its headers: an object field, or flat fields named prefix + header name. */
export interface HeaderSource {
  path?: string | undefined;
  prefix?: string | undefined;
  /** How a flat field spells the header name: `underscore` x_anthropic_layer_id, `canonical` X-Anthropic-Layer-Id. */
  nameStyle?: 'underscore' | 'canonical' | undefined;
  /**
   * The log leaves out the field of a header that was not sent (Traefik), so a line without any of them
   * still carries the headers: the opt-in header is then `missing`, not "not logged".
   */
  omitsMissing?: boolean | undefined;
}

export interface Mapping {
  time: string;
  /** Tried in order: the first path that holds a latency is used. */
  latency: readonly string[];
  status: string;
  model: string;
  route: string;
  cohort: string;
  latencyUnit: 's' | 'ms' | 'us' | 'ns';
  /** An integer latency of 1000 or more is nanoseconds (Caddy's `duration_format nano`); off when input.latencyUnit is set. */
  integerNanos?: boolean | undefined;
  responseHeaders: HeaderSource;
  requestHeaders: HeaderSource;
}

export const PRESETS: Record<PresetName, Mapping> = {
  default: {
    time: 'ts',
    latency: ['latency_ms'],
    status: 'status',
    model: 'model',
    route: 'route',
    cohort: 'cohort',
    latencyUnit: 'ms',
    responseHeaders: { path: 'response_headers' },
    requestHeaders: { path: 'request_headers' },
  },
  // nginx `escape=json`: variables logged under their own names, times in seconds. The upstream's time
  // when there was one; a request nginx answered itself (a limit_req 429) has none, so its request time.
  'nginx-json': {
    time: 'time_iso8601',
    latency: ['upstream_response_time', 'request_time'],
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
    latency: ['duration'],
    status: 'response_code',
    model: 'model',
    route: 'route_name',
    cohort: 'cohort',
    latencyUnit: 'ms',
    responseHeaders: { prefix: 'resp_' },
    requestHeaders: { prefix: 'req_' },
  },
  // Caddy's own access log: epoch-seconds `ts`, headers as arrays of values. `duration` is float seconds
  // (default), integer nanoseconds (`duration_format nano`) or a Go duration string (`duration_format string`).
  'caddy-json': {
    time: 'ts',
    latency: ['duration'],
    status: 'status',
    model: 'request.headers.X-Model',
    route: 'request.uri',
    cohort: 'request.headers.X-Cohort',
    latencyUnit: 's',
    integerNanos: true,
    responseHeaders: { path: 'resp_headers' },
    requestHeaders: { path: 'request.headers' },
  },
  // The README's HAProxy `log-format`: `%Ts.%ms` epoch seconds, `%Ta` ms, captured headers as flat fields.
  'haproxy-json': {
    time: 'accept_ts',
    latency: ['ta_ms'],
    status: 'status',
    model: 'capture_req_x_model',
    route: 'path',
    cohort: 'capture_req_x_cohort',
    latencyUnit: 'ms',
    responseHeaders: { prefix: 'capture_res_' },
    requestHeaders: { prefix: 'capture_req_' },
  },
  // Kong's logging plugins (file-log, http-log, …): epoch-ms `started_at`, `latencies.request` in ms.
  'kong-json': {
    time: 'started_at',
    latency: ['latencies.request'],
    status: 'response.status',
    model: 'request.headers.x-model',
    route: 'route.name',
    cohort: 'request.headers.x-cohort',
    latencyUnit: 'ms',
    responseHeaders: { path: 'response.headers' },
    requestHeaders: { path: 'request.headers' },
  },
  // Traefik's JSON access log: `Duration` in nanoseconds, kept headers as request_X-… / downstream_X-….
  'traefik-json': {
    time: 'StartUTC',
    latency: ['Duration'],
    status: 'DownstreamStatus',
    model: 'request_X-Model',
    route: 'RouterName',
    cohort: 'request_X-Cohort',
    latencyUnit: 'ns',
    responseHeaders: { prefix: 'downstream_', nameStyle: 'canonical', omitsMissing: true },
    requestHeaders: { prefix: 'request_', nameStyle: 'canonical', omitsMissing: true },
  },
};

/** A preset with the config's overrides applied (`fields`, `latencyUnit`, the header sources). */
export function mappingFor(input: Config['input'], preset: PresetName): Mapping {
  const base = PRESETS[preset];
  const given = (h: Config['input']['responseHeaders']): HeaderSource | undefined => (h.path === undefined && h.prefix === undefined ? undefined : h);
  return {
    ...base,
    ...input.fields,
    latencyUnit: input.latencyUnit === 'preset' ? base.latencyUnit : input.latencyUnit,
    integerNanos: input.latencyUnit === 'preset' && base.integerNanos === true,
    responseHeaders: given(input.responseHeaders) ?? base.responseHeaders,
    requestHeaders: given(input.requestHeaders) ?? base.requestHeaders,
  };
}

/** The field a flat header source keeps a header in: prefix + the name in the source's style. */
export function flatHeaderField(where: HeaderSource, name: string): string {
  const prefix = where.prefix ?? '';
  return where.nameStyle === 'canonical' ? prefix + canonicalHeaderName(name) : prefix + name.toLowerCase().replaceAll('-', '_');
}

/** Go's textproto.CanonicalMIMEHeaderKey for token names: x-anthropic-layer-id → X-Anthropic-Layer-Id. */
export function canonicalHeaderName(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-');
}
