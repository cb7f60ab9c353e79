// OTLP log records → the records a gateway's log line gives. A log record is first laid out as the JSON
// object a gateway would have logged (its view), and that object is read by the record parser of
// record/parse-record.ts with a preset's mapping: so a request exported over OTLP becomes exactly the
// record the same request logged to a file becomes, with the same parse errors for the same defects.
// - `otlp-envoy`: Envoy's OpenTelemetry access logger with the `envoy-json` fields (docs/otlp.md) in its
//   body (a kvlist, or a JSON string) or its attributes; read with the envoy-json mapping.
// - `otlp-generic`: attributes named in ingest.otlp.generic (HTTP and GenAI semantic conventions by
//   default), laid out in the default preset's shape and read with its mapping.
// Which one reads a resource's records is decided per request on evidence (decideOtlpPreset), by the rules
// of record/detect-preset.ts: a preset's signature, a latency it reads, and a wanted header field.
import { PRESETS, SIGNATURES, type Mapping } from '../record/presets.js';
import { RecordParser, type ParseResult } from '../record/parse-record.js';
import type { DecisionBasis } from '../record/detect-preset.js';
import { hasField, type OtlpAnyValue, type OtlpInt64, type OtlpKeyValue, type OtlpLogRecord } from './otlp-proto.js';

export const OTLP_PRESETS = ['otlp-envoy', 'otlp-generic'] as const;
export type OtlpPreset = (typeof OTLP_PRESETS)[number];

/** ingest.otlp.generic: the attribute (or body key) names each field is read from. */
export interface OtlpGenericFields {
  /** Unset: the log record's own time (time_unix_nano, else observed_time_unix_nano). */
  time?: string | undefined;
  latency: string;
  latencyUnit: Mapping['latencyUnit'];
  status: string;
  model: string;
  route: string;
  cohort: string;
  /** Headers as attributes named prefix + lower-case header name (semconv `http.response.header.<key>`). */
  responseHeaderPrefix: string;
  requestHeaderPrefix: string;
  tokensInput: string;
  tokensOutput: string;
  tokensCacheRead: string;
  tokensCacheCreation: string;
}

export interface OtlpMapOptions {
  generic: OtlpGenericFields;
  /** kvlist and array levels read at most; deeper values read as null (ingest.otlp.maxValueDepth). */
  maxValueDepth: number;
  /** A body string longer than this is not read (`too_long`), as a longer log line would not be (input.maxLineBytes). */
  maxLineBytes: number;
  latencyList: 'last' | 'sum';
  maxLatencySeconds: number;
  absentValues: readonly string[];
  responseHeaderNames: readonly string[];
  requestHeaderNames: readonly string[];
}

type Json = Record<string, unknown>;

/** One log record of a resource, its attributes and body read once. */
export interface OtlpEntry {
  attributes: Json;
  /** The body when it is a kvlist or a string holding a JSON object; undefined otherwise. */
  body: Json | undefined;
  /** Epoch milliseconds of the record's own time, when it has one. */
  timeMs: number | undefined;
  /** The body string was longer than maxLineBytes. */
  tooLong: boolean;
}

interface OtlpCandidate {
  preset: OtlpPreset;
  parser: RecordParser;
  view(e: OtlpEntry): Json;
  /** The structure only this preset's emitter writes (its signature keys); none = not one of its records. */
  signature(e: OtlpEntry, view: Json): string[];
}

export interface OtlpDecision {
  preset: OtlpPreset;
  basis: DecisionBasis;
}

const TOO_LONG: ParseResult = { ok: false, reason: 'too_long' };

/** The two OTLP readers, built once per config. */
export class OtlpMapper {
  private readonly candidates: OtlpCandidate[];
  private readonly maxDepth: number;
  private readonly maxLineBytes: number;

  constructor(readonly opts: OtlpMapOptions) {
    this.maxDepth = opts.maxValueDepth;
    this.maxLineBytes = opts.maxLineBytes;
    const parser = (mapping: Mapping) =>
      new RecordParser({
        mapping,
        latencyList: opts.latencyList,
        maxLatencySeconds: opts.maxLatencySeconds,
        absentValues: opts.absentValues,
        responseHeaderNames: opts.responseHeaderNames,
        requestHeaderNames: opts.requestHeaderNames,
      });
    const g = opts.generic;
    const genericKeys = [g.status, g.route, g.model, g.latency];
    this.candidates = [
      {
        preset: 'otlp-envoy',
        parser: parser(PRESETS['envoy-json']),
        view: envoyView,
        signature: (_e, view) => SIGNATURES['envoy-json'](view),
      },
      {
        preset: 'otlp-generic',
        parser: parser({
          ...PRESETS.default,
          latencyUnit: g.latencyUnit,
          tokens: { input: 'tokens.input', output: 'tokens.output', cache_read: 'tokens.cache_read', cache_creation: 'tokens.cache_creation' },
        }),
        view: (e) => genericView(e, g),
        // The semantic-convention attributes themselves (not a body's keys, which are any gateway's).
        signature: (e) => genericKeys.filter((k) => k in e.attributes),
      },
    ];
  }

  /** A log record read into plain values, bounded in depth and length. */
  entry(r: OtlpLogRecord): OtlpEntry {
    const attributes = this.kvlist(r.attributes, 1);
    let body: Json | undefined;
    let tooLong = false;
    const b = r.body;
    if (b != null && hasField(b, 'kvlistValue')) body = this.kvlist(b.kvlistValue.values, 1);
    else if (b != null && hasField(b, 'stringValue')) {
      const text = b.stringValue;
      if (Buffer.byteLength(text) > this.maxLineBytes) tooLong = true;
      else if (text.trimStart().startsWith('{')) {
        try {
          const parsed: unknown = JSON.parse(text);
          if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Json;
        } catch {
          // Not JSON: a text access log line; only the attributes are read.
        }
      }
    }
    return { attributes, body, timeMs: nanosToMs(r.timeUnixNano) ?? nanosToMs(r.observedTimeUnixNano), tooLong };
  }

  /** The preset that reads these records (one resource's, in one request), and what that rested on. */
  decide(entries: readonly OtlpEntry[], configured: 'auto' | OtlpPreset, previous: OtlpPreset | undefined): OtlpDecision {
    if (configured !== 'auto') return { preset: configured, basis: 'configured' };
    const reads = this.candidates.map(() => 0);
    const signed = this.candidates.map(() => 0);
    for (const e of entries) {
      let decisive = -1;
      let ties = 0;
      this.candidates.forEach((c, i) => {
        const view = c.view(e);
        const parsed = c.parser.parseValue(view);
        if (!parsed.ok) return;
        reads[i] = (reads[i] as number) + 1;
        if (c.signature(e, view).length === 0) return;
        signed[i] = (signed[i] as number) + 1;
        if (c.parser.headerEvidence(view) === undefined) return;
        ties++;
        decisive = i;
      });
      if (ties === 1) return { preset: (this.candidates[decisive] as OtlpCandidate).preset, basis: 'evidence' };
    }
    const bySignature = signed.flatMap((n, i) => (n > 0 ? [i] : []));
    if (bySignature.length === 1) return { preset: (this.candidates[bySignature[0] as number] as OtlpCandidate).preset, basis: 'signature' };
    const pool = bySignature.length > 0 ? bySignature : reads.flatMap((n, i) => (n > 0 ? [i] : []));
    if (previous !== undefined && (pool.length === 0 || pool.some((i) => this.candidates[i]?.preset === previous))) return { preset: previous, basis: 'previous' };
    if (pool.length === 1) return { preset: (this.candidates[pool[0] as number] as OtlpCandidate).preset, basis: 'latency' };
    const counts = bySignature.length > 0 ? signed : reads;
    let best = pool[0] ?? 0;
    for (const i of pool) if ((counts[i] as number) > (counts[best] as number)) best = i;
    return { preset: (this.candidates[best] as OtlpCandidate).preset, basis: 'ambiguous' };
  }

  /** The record (or parse error) `preset` reads in this entry. */
  read(e: OtlpEntry, preset: OtlpPreset): ParseResult {
    if (e.tooLong) return TOO_LONG;
    const c = this.candidates.find((x) => x.preset === preset) as OtlpCandidate;
    return c.parser.parseValue(c.view(e));
  }

  /** The view `preset` reads (what a gateway would have logged), for tests and `--log.level=debug`. */
  view(e: OtlpEntry, preset: OtlpPreset): Json {
    return (this.candidates.find((x) => x.preset === preset) as OtlpCandidate).view(e);
  }

  /** Resource attributes as strings (non-scalar values skipped). */
  resourceAttributes(attrs: readonly OtlpKeyValue[] | null | undefined): Record<string, string> {
    const out: Record<string, string> = {};
    for (const kv of attrs ?? []) {
      const v = this.value(kv.value, this.maxDepth);
      if (hasField(kv, 'key') && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) out[kv.key] = String(v);
    }
    return out;
  }

  private kvlist(values: readonly OtlpKeyValue[] | null | undefined, depth: number): Json {
    const out: Json = {};
    for (const kv of values ?? []) if (hasField(kv, 'key') && !(kv.key in out)) out[kv.key] = this.value(kv.value, depth);
    return out;
  }

  /** An AnyValue as JSON; a kvlist or array past maxValueDepth reads as null (bounded work on any input). */
  private value(v: OtlpAnyValue | null | undefined, depth: number): unknown {
    if (v == null) return null;
    if (hasField(v, 'stringValue')) return v.stringValue;
    if (hasField(v, 'intValue')) return int64(v.intValue);
    if (hasField(v, 'doubleValue')) return v.doubleValue;
    if (hasField(v, 'boolValue')) return v.boolValue;
    // As JSON writes bytes (and toObject did): base64.
    if (hasField(v, 'bytesValue')) return typeof v.bytesValue === 'string' ? v.bytesValue : Buffer.from(v.bytesValue.buffer, v.bytesValue.byteOffset, v.bytesValue.byteLength).toString('base64');
    if (depth >= this.maxDepth) return null;
    if (hasField(v, 'kvlistValue')) return this.kvlist(v.kvlistValue.values, depth + 1);
    if (hasField(v, 'arrayValue')) return (v.arrayValue.values ?? []).map((x) => this.value(x, depth + 1));
    return null;
  }
}

/** Envoy's fields from the body, then from attributes the body lacks; the record's time when %START_TIME% is not logged. */
function envoyView(e: OtlpEntry): Json {
  // Object.assign, not spread: V8 spreads these objects (keys added one by one) ~40× slower, and this was
  // most of a record's mapping (bench/otlp-decode.mjs). The two differ only for an own "__proto__" key
  // (a JSON body can have one), which assign would make the view's prototype: that one is spread.
  const body = e.body;
  const view: Json = body !== undefined && Object.prototype.hasOwnProperty.call(body, '__proto__') ? { ...e.attributes, ...body } : Object.assign({}, e.attributes, body);
  if (view.start_time === undefined && e.timeMs !== undefined) view.start_time = e.timeMs;
  return view;
}

/** The default preset's shape, from the configured attribute names (then the body's keys of the same name). */
function genericView(e: OtlpEntry, g: OtlpGenericFields): Json {
  const get = (name: string): unknown => (name in e.attributes ? e.attributes[name] : e.body?.[name]);
  const headers = (prefix: string): Json | undefined => {
    let out: Json | undefined;
    for (const [k, v] of Object.entries(e.attributes)) {
      if (!k.startsWith(prefix)) continue;
      // Semantic conventions log a header as an array of its values.
      (out ??= {})[k.slice(prefix.length)] = Array.isArray(v) ? v.join(', ') : v;
    }
    return out;
  };
  const tokens: Json = {};
  for (const [type, name] of [
    ['input', g.tokensInput],
    ['output', g.tokensOutput],
    ['cache_read', g.tokensCacheRead],
    ['cache_creation', g.tokensCacheCreation],
  ] as const) {
    const v = get(name);
    if (v !== undefined) tokens[type] = v;
  }
  return {
    ts: g.time === undefined ? e.timeMs : get(g.time),
    latency_ms: get(g.latency),
    status: get(g.status),
    model: get(g.model),
    route: get(g.route),
    cohort: get(g.cohort),
    response_headers: headers(g.responseHeaderPrefix) ?? {},
    ...(headersLogged(e.attributes, g.requestHeaderPrefix) ? { request_headers: headers(g.requestHeaderPrefix) } : {}),
    tokens,
  };
}

/** Whether the emitter logs request headers at all (then a missing opt-in header is `missing`). */
function headersLogged(attributes: Json, prefix: string): boolean {
  for (const k in attributes) if (k.startsWith(prefix)) return true;
  return false;
}

/**
 * A 64-bit integer as the nearest double. Long's toNumber() is high·2³² + low, one rounding: the same
 * double as Number() of the decimal string toObject wrote.
 */
function int64(v: OtlpInt64): number {
  return typeof v === 'number' ? v : typeof v === 'string' ? (v === '' ? Number.NaN : Number(v)) : v.toNumber();
}

/** Epoch ms of a fixed64 nanosecond time; 0 (the default of a time not sent) is "unset" in OTLP. */
function nanosToMs(nanos: OtlpInt64 | null | undefined): number | undefined {
  if (nanos == null) return undefined;
  const n = int64(nanos) / 1e6;
  return Number.isFinite(n) && n > 0 ? n : undefined;
}
