// The OTLP logs messages, read and written by protobufjs from the official .proto files of
// open-telemetry/opentelemetry-proto (proto/, tag v1.9.0, Apache-2.0): no wire format is decoded by hand.
// Both encodings of OTLP/HTTP come out as the same message objects, read as they are by the mapping
// (otlp-map.ts): binary protobuf by decode(), and the JSON encoding by fromObject(), which takes the
// lowerCamelCase field names the OTLP spec writes. They are not turned into plain objects (toObject): that
// copy of the whole request was most of a request's cost (bench/otlp-decode.mjs, bench/RESULTS.md).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type protobuf from 'protobufjs';

/** proto/ at the package root: two levels up from both src/ingest and dist/ingest. */
const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));
const SERVICE = 'opentelemetry/proto/collector/logs/v1/logs_service.proto';

/**
 * A 64-bit integer as protobufjs gives it: a Long (long.js, which protobufjs depends on), a number where
 * Long is missing, or a decimal string (toObject with `longs: String`, and tests' plain objects).
 */
export type OtlpInt64 = string | number | { toNumber(): number };

/**
 * What the mapping reads of an ExportLogsServiceRequest. A message object has every field, the ones not
 * sent as defaults on its prototype: a field is set when it is an own property that is not null (hasField).
 */
export interface OtlpKeyValue {
  key?: string | null;
  value?: OtlpAnyValue | null;
}
export interface OtlpAnyValue {
  stringValue?: string | null;
  boolValue?: boolean | null;
  intValue?: OtlpInt64 | null;
  doubleValue?: number | null;
  arrayValue?: { values?: OtlpAnyValue[] | null } | null;
  kvlistValue?: { values?: OtlpKeyValue[] | null } | null;
  /** Bytes as sent; base64 in a plain object. */
  bytesValue?: Uint8Array | string | null;
}
export interface OtlpLogRecord {
  timeUnixNano?: OtlpInt64 | null;
  observedTimeUnixNano?: OtlpInt64 | null;
  body?: OtlpAnyValue | null;
  attributes?: OtlpKeyValue[] | null;
  eventName?: string | null;
}
export interface OtlpResourceLogs {
  resource?: { attributes?: OtlpKeyValue[] | null } | null;
  scopeLogs?: { scope?: { name?: string | null } | null; logRecords?: OtlpLogRecord[] | null }[] | null;
}
export interface OtlpLogsRequest {
  resourceLogs?: OtlpResourceLogs[] | null;
}

/** Whether a message (or plain object) has the field set: the field sent, not its prototype's default. */
export function hasField<T extends object, K extends keyof T>(o: T, key: K): o is T & { [P in K]-?: NonNullable<T[P]> } {
  return Object.prototype.hasOwnProperty.call(o, key) && o[key] != null;
}

export type OtlpEncoding = 'protobuf' | 'json';

interface Messages {
  request: protobuf.Type;
  response: protobuf.Type;
  status: protobuf.Type;
}

let loaded: Messages | undefined;

/**
 * The message types, loaded from proto/ once, when the receiver starts: protobufjs and the protos take about
 * 100 ms, which a `serve` without OTLP (and every other command) does not pay.
 */
export function otlpMessages(): Messages {
  if (loaded !== undefined) return loaded;
  const protobuf = createRequire(import.meta.url)('protobufjs') as typeof import('protobufjs');
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith('/') ? target : PROTO_DIR + target);
  root.loadSync(SERVICE, { keepCase: false });
  // google.rpc.Status is the error body OTLP/HTTP specifies; its three fields, declared to protobufjs.
  const rpc = protobuf.Root.fromJSON({
    nested: {
      google: {
        nested: {
          protobuf: { nested: { Any: { fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } } } },
          rpc: { nested: { Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 }, details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 } } } } },
        },
      },
    },
  });
  loaded = {
    request: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
    response: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
    status: rpc.lookupType('google.rpc.Status'),
  };
  return loaded;
}

/** The request, or why the body is not one (a message for the 400 answer). */
export function decodeLogsRequest(body: Buffer, encoding: OtlpEncoding): OtlpLogsRequest | string {
  const { request } = otlpMessages();
  try {
    if (encoding === 'protobuf') return request.decode(body) as OtlpLogsRequest;
    const json: unknown = JSON.parse(body.toString('utf8'));
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return 'the body is not a JSON object (an ExportLogsServiceRequest)';
    // fromObject throws on a structure that is not the message's (an array where a message is, …).
    return request.fromObject(stripIds(json as Record<string, unknown>)) as OtlpLogsRequest;
  } catch (err) {
    // The stack's end: a nesting deeper than it (a kvlist in a kvlist ... the whole body long).
    if (err instanceof RangeError && /call stack/i.test(err.message)) return 'the body nests values deeper than the exporter reads';
    return `the body is not an ExportLogsServiceRequest (${encoding}): ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * OTLP/JSON writes traceId and spanId as hex, where proto3 JSON (and so protobufjs) expects base64: the
 * mapping reads neither, so they are dropped before the message is checked.
 */
function stripIds(json: Record<string, unknown>): Record<string, unknown> {
  for (const rl of asArray(json.resourceLogs))
    for (const sl of asArray((rl as Record<string, unknown> | null)?.scopeLogs))
      for (const lr of asArray((sl as Record<string, unknown> | null)?.logRecords)) {
        if (lr !== null && typeof lr === 'object') {
          delete (lr as Record<string, unknown>).traceId;
          delete (lr as Record<string, unknown>).spanId;
        }
      }
  return json;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** ExportLogsServiceResponse: empty on full success, else partial_success with the rejected count and why. */
export function encodeLogsResponse(encoding: OtlpEncoding, rejected: number, errorMessage: string): Buffer | string {
  const partial = rejected > 0 || errorMessage !== '' ? { partialSuccess: { rejectedLogRecords: rejected, errorMessage } } : {};
  if (encoding === 'json') {
    // proto3 JSON writes int64 as a string.
    return JSON.stringify(rejected > 0 || errorMessage !== '' ? { partialSuccess: { rejectedLogRecords: String(rejected), errorMessage } } : {});
  }
  const { response } = otlpMessages();
  return Buffer.from(response.encode(response.fromObject(partial)).finish());
}

/** google.rpc.Status: the body of every OTLP/HTTP error answer (code is the gRPC code matching the HTTP status). */
export function encodeStatus(encoding: OtlpEncoding, code: number, message: string): Buffer | string {
  if (encoding === 'json') return JSON.stringify({ code, message });
  const { status } = otlpMessages();
  return Buffer.from(status.encode(status.fromObject({ code, message })).finish());
}
