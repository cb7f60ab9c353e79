// Field mappings for the log formats gateways write. docs/gateways.md shows, per gateway, the exact log config
// that produces these field names; `input.preset: auto` tries them all (detect-preset.ts).

/** The log formats read without a mapping (detection never prefers one by this order: detect-preset.ts). */
export const PRESET_NAMES = ['default', 'nginx-json', 'envoy-json', 'caddy-json', 'haproxy-json', 'kong-json', 'traefik-json', 'apache-json'] as const;
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
  /**
   * Headers (lower-case names) read from a dotted path of their own instead of from the source above
   * (input.headers.response / .request): any layout, one header at a time.
   */
  fields?: Readonly<Record<string, string>> | undefined;
}

/**
 * Why a header source is not one (empty when it is): exactly one of `path` or `prefix`, or nothing for the
 * preset's; `nameStyle` and `omitsMissing` with a prefix only. config/schema.ts refuses a config by these
 * rules, and headers-hint.ts offers only fixes that pass them.
 */
export function headerSourceProblems(h: HeaderSource): string[] {
  const problems: string[] = [];
  const empty = h.path === undefined && h.prefix === undefined && h.nameStyle === undefined && h.omitsMissing === undefined;
  if (!empty && (h.path === undefined) === (h.prefix === undefined)) problems.push("give exactly one of `path` (an object of headers) or `prefix` (flat fields), or {} for the preset's");
  if (h.path !== undefined && (h.nameStyle !== undefined || h.omitsMissing !== undefined))
    problems.push('`nameStyle` and `omitsMissing` apply to flat fields (`prefix`); names in a header object match in any case');
  return problems;
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
  /** The gateway writes bytes as `\xhh` and a vertical tab as `\v` (Apache): decoded when a line is not JSON otherwise. */
  hexEscapes?: boolean | undefined;
  /** Where a gateway that logs token usage keeps each count (dotted paths); none = no token counts. */
  tokens?: TokenPaths | undefined;
  /** Where the record carries a hash of its request's prompt (a dotted path: promptHashOf() says what one is); none = not read. */
  promptHash?: string | undefined;
}

/** The token counts a record may carry, by the `type` label of zero_plane_tokens_total. */
export const TOKEN_TYPES = ['input', 'output', 'cache_read', 'cache_creation'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];
export type TokenPaths = Partial<Record<TokenType, string>>;

/** input.fields' keys for the token paths, by token type. */
export const TOKEN_FIELDS = { tokensInput: 'input', tokensOutput: 'output', tokensCacheRead: 'cache_read', tokensCacheCreation: 'cache_creation' } as const satisfies Record<string, TokenType>;
export type TokenField = keyof typeof TOKEN_FIELDS;

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
    // What zero-plane-exporter/client writes when it observed the body (client/call-record.ts).
    tokens: { input: 'tokens.input', output: 'tokens.output', cache_read: 'tokens.cache_read', cache_creation: 'tokens.cache_creation' },
    promptHash: 'prompt_hash',
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
  // The HAProxy `log-format` of docs/gateways.md: `%Ts.%ms` epoch seconds, `%Ta` ms, captured headers as flat fields.
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
  // The Apache httpd LogFormat of docs/gateways.md: `%{msec}t` epoch ms, `%D` microseconds, `%{…}i` / `%{…}o` headers in
  // objects named for Apache's own headers_in / headers_out, with the \xhh escapes of mod_log_config.
  'apache-json': {
    time: 'time_msec',
    latency: ['duration_us'],
    status: 'status',
    model: 'headers_in.x-model',
    route: 'url_path',
    cohort: 'headers_in.x-cohort',
    latencyUnit: 'us',
    responseHeaders: { path: 'headers_out' },
    requestHeaders: { path: 'headers_in' },
    hexEscapes: true,
  },
};

/**
 * What only a preset's gateway writes, beside the fields every log has (`ts`, `status`, `duration`): the
 * keys of its log format as docs/gateways.md configures it. Detection decides on a line only when it shows
 * this structure (and a wanted header field: detect-preset.ts), so a probe line two presets both read
 * (Caddy's and Envoy's `duration`) is never decided by the order of PRESET_NAMES. Each returns the
 * signature keys the line has; none means the line is not one of that gateway's.
 */
export const SIGNATURES: Record<PresetName, (obj: Readonly<Record<string, unknown>>) => string[]> = {
  default: (o) => keysIn(o, ['latency_ms', 'response_headers', 'request_headers']),
  'nginx-json': (o) => keysIn(o, ['time_iso8601', 'request_time', 'upstream_response_time']),
  'envoy-json': (o) => keysIn(o, ['start_time', 'response_code', 'route_name']),
  // Caddy's access logger names itself (`logger`, `msg`), logs `resp_headers`, and every header as an
  // array of values; Kong also has `request.headers`, but with `latencies` and string values.
  'caddy-json': (o) => {
    const keys = keysIn(o, ['resp_headers']);
    if (typeof o.logger === 'string' && typeof o.msg === 'string') keys.push('logger', 'msg');
    const request = o.request;
    if (!('latencies' in o) && isRecord(request) && isRecord(request.headers)) {
      const values = Object.values(request.headers);
      if (values.length > 0 && values.every(Array.isArray)) keys.push('request.headers[]');
    }
    return keys;
  },
  'haproxy-json': (o) => keysIn(o, ['accept_ts', 'ta_ms']),
  'kong-json': (o) => [...(isRecord(o.latencies) ? ['latencies'] : []), ...keysIn(o, ['started_at'])],
  'traefik-json': (o) => keysIn(o, ['StartUTC', 'Duration', 'DownstreamStatus', 'RouterName', 'OriginStatus']),
  // The LogFormat of docs/gateways.md: Apache's own names for its header tables and its %D unit.
  'apache-json': (o) => keysIn(o, ['duration_us', 'time_msec', 'url_path', 'headers_in', 'headers_out']),
};

/**
 * Top-level keys a line of each preset's gateway always has, quoted as they appear in its bytes: a decided
 * stream's line with no wanted header and none of these is looked at again (a probe of another gateway's
 * log after a rotation, or stdin carrying another file), without parsing it twice when it has one.
 */
export const SIGNATURE_TOKENS: Record<PresetName, readonly string[]> = {
  default: ['"latency_ms"'],
  'nginx-json': ['"request_time"', '"upstream_response_time"', '"time_iso8601"'],
  'envoy-json': ['"response_code"', '"start_time"', '"route_name"'],
  'caddy-json': ['"resp_headers"', '"logger"'],
  'haproxy-json': ['"ta_ms"', '"accept_ts"'],
  'kong-json': ['"latencies"', '"started_at"'],
  'traefik-json': ['"Duration"', '"DownstreamStatus"', '"StartUTC"', '"RouterName"'],
  'apache-json': ['"duration_us"', '"headers_out"', '"time_msec"'],
};

function keysIn(o: Readonly<Record<string, unknown>>, keys: readonly string[]): string[] {
  return keys.filter((k) => k in o);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The config's `input` as record/ reads it. Declared here rather than imported, since record/ ranks below
 * config/ (docs/architecture.md); config/schema.ts checks at compile time that its `input` is one.
 */
export interface InputOptions {
  preset: 'auto' | PresetName;
  /** Overrides of the preset's field paths. */
  fields: Partial<Pick<Mapping, 'time' | 'latency' | 'status' | 'model' | 'route' | 'cohort'> & Record<TokenField | 'promptHash', string>>;
  latencyUnit: 'preset' | Mapping['latencyUnit'];
  latencyList: 'last' | 'sum';
  responseHeaders: HeaderSource;
  requestHeaders: HeaderSource;
  /** Per-header dotted paths (input.headers.response / .request). */
  headers: { response: Readonly<Record<string, string>>; request: Readonly<Record<string, string>> };
  absentValues: readonly string[];
  /** Milliseconds. */
  maxLatency: number;
  /** `duration` in milliseconds. */
  headerWatch: { records: number; duration: number };
}

/** Of the whole config, what record/ is handed: a Config is one. */
export interface RecordConfig {
  input: InputOptions;
}

/** A preset with the config's overrides applied (`fields`, `latencyUnit`, the header sources). */
export function mappingFor(input: InputOptions, preset: PresetName): Mapping {
  const base = PRESETS[preset];
  const given = (h: HeaderSource): HeaderSource | undefined => (h.path === undefined && h.prefix === undefined ? undefined : h);
  const { tokensInput, tokensOutput, tokensCacheRead, tokensCacheCreation, ...fields } = input.fields;
  const tokenPaths = Object.entries({ input: tokensInput, output: tokensOutput, cache_read: tokensCacheRead, cache_creation: tokensCacheCreation }).filter(([, path]) => path !== undefined);
  return {
    ...base,
    // input.fields.promptHash comes in `fields`: it replaces the preset's path (docs/input.md, repeated questions).
    ...fields,
    // A path given for any token count replaces the preset's: the gateway's log is laid out its own way.
    tokens: tokenPaths.length > 0 ? (Object.fromEntries(tokenPaths) as TokenPaths) : base.tokens,
    latencyUnit: input.latencyUnit === 'preset' ? base.latencyUnit : input.latencyUnit,
    integerNanos: input.latencyUnit === 'preset' && base.integerNanos === true,
    responseHeaders: withPaths(given(input.responseHeaders) ?? base.responseHeaders, input.headers.response),
    requestHeaders: withPaths(given(input.requestHeaders) ?? base.requestHeaders, input.headers.request),
  };
}

/** A header source with input.headers' per-header paths (names lower-cased; the schema refused duplicates). */
function withPaths(source: HeaderSource, paths: Readonly<Record<string, string>>): HeaderSource {
  const entries = Object.entries(paths);
  return entries.length === 0 ? source : { ...source, fields: Object.fromEntries(entries.map(([name, path]) => [name.toLowerCase(), path])) };
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
