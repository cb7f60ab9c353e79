// The OTLP messages as protobufjs reads them from the official protos: both encodings give one shape, a
// truncated or wrongly shaped body is refused with a reason, and the answers decode as the spec's messages.
import { describe, expect, it } from 'vitest';
import type protobuf from 'protobufjs';
import { configSchema } from '../../../src/config/schema.js';
import { OtlpMapper, type OtlpMapOptions } from '../../../src/ingest/otlp-map.js';
import { decodeLogsRequest, encodeLogsResponse, encodeStatus, otlpMessages, type OtlpLogRecord, type OtlpLogsRequest } from '../../../src/ingest/otlp-proto.js';

const MAP: Omit<OtlpMapOptions, 'generic'> = {
  maxValueDepth: 8,
  maxLineBytes: 4096,
  latencyList: 'last',
  maxLatencySeconds: 3600,
  absentValues: ['', '-'],
  responseHeaderNames: [],
  requestHeaderNames: [],
};

const REQUEST = {
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'envoy' } }] },
      scopeLogs: [
        {
          logRecords: [
            {
              timeUnixNano: '1764669600123456789',
              body: { kvlistValue: { values: [{ key: 'duration', value: { intValue: '12' } }] } },
              attributes: [{ key: 'http.route', value: { stringValue: '/v1/messages' } }],
              traceId: '5b8efff798038103d269b633813fc60c',
            },
          ],
        },
      ],
    },
  ],
};

function binary(obj: object): Buffer {
  const { request } = otlpMessages();
  return Buffer.from(request.encode(request.fromObject(structuredClone(obj))).finish());
}

describe('OTLP logs messages', () => {
  it('reads protobuf and JSON to the same messages, nanoseconds exact, and the mapping reads them as their plain objects', () => {
    const fromProto = decodeLogsRequest(binary(REQUEST), 'protobuf');
    const fromJson = decodeLogsRequest(Buffer.from(JSON.stringify(REQUEST)), 'json');
    if (typeof fromProto === 'string' || typeof fromJson === 'string') throw new Error(`not decoded: ${String(fromProto)} ${String(fromJson)}`);
    const { request } = otlpMessages();
    const plain = (m: OtlpLogsRequest) => request.toObject(m as protobuf.Message, { longs: String, bytes: String, defaults: false });
    const { traceId: _dropped, ...record } = REQUEST.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    const want = { resourceLogs: [{ ...REQUEST.resourceLogs[0], scopeLogs: [{ logRecords: [record] }] }] };
    expect(plain(fromJson)).toEqual(want);
    // The binary body carries the trace id (bytes), which the mapping does not read.
    const proto = plain(fromProto) as typeof REQUEST;
    expect(proto.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!.traceId).toBe(REQUEST.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!.traceId);
    delete (proto.resourceLogs[0]!.scopeLogs[0]!.logRecords[0] as { traceId?: string }).traceId;
    expect(proto).toEqual(want);
    // Message objects, not copies: 64-bit fields as Long, read to the same entry as the plain object.
    const lr = (m: OtlpLogsRequest) => m.resourceLogs![0]!.scopeLogs![0]!.logRecords![0]!;
    expect(String(lr(fromProto).timeUnixNano)).toBe('1764669600123456789');
    const mapper = new OtlpMapper({ ...MAP, generic: configSchema.parse({}).ingest.otlp.generic });
    const entry = mapper.entry(lr(fromProto));
    expect(entry).toEqual(mapper.entry(lr(fromJson)));
    expect(entry).toEqual(mapper.entry(record as OtlpLogRecord));
    expect(entry).toEqual({ attributes: { 'http.route': '/v1/messages' }, body: { duration: 12 }, timeMs: 1764669600123456789 / 1e6, tooLong: false });
  });

  it('reads a field as set only when it was sent: the defaults on a message prototype are not values', () => {
    // A record with no body and no time, a key-less attribute, and a value of each AnyValue kind (a oneof
    // member is sent even when it is its default: '' and false are values).
    const values = [{ stringValue: '' }, { intValue: '-7' }, { doubleValue: 0.5 }, { boolValue: false }, { bytesValue: 'AAE=' }, { arrayValue: { values: [{ stringValue: 'a' }] } }, {}];
    const obj = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ attributes: [{ value: { stringValue: 'no key' } }, ...values.map((value, i) => ({ key: `k${i}`, value }))] }] }] }] };
    const mapper = new OtlpMapper({ ...MAP, generic: configSchema.parse({}).ingest.otlp.generic });
    const want = { attributes: { k0: '', k1: -7, k2: 0.5, k3: false, k4: 'AAE=', k5: ['a'], k6: null }, body: undefined, timeMs: undefined, tooLong: false };
    for (const m of [decodeLogsRequest(binary(obj), 'protobuf'), decodeLogsRequest(Buffer.from(JSON.stringify(obj)), 'json')]) {
      if (typeof m === 'string') throw new Error(m);
      expect(mapper.entry(m.resourceLogs![0]!.scopeLogs![0]!.logRecords![0]!)).toEqual(want);
    }
  });

  it('refuses a truncated protobuf body and a JSON body of another shape, saying why', () => {
    const bin = binary(REQUEST);
    expect(decodeLogsRequest(bin.subarray(0, bin.length - 7), 'protobuf')).toMatch(/not an ExportLogsServiceRequest \(protobuf\)/);
    expect(decodeLogsRequest(Buffer.from('{"resourceLogs":5}'), 'json')).toMatch(/not an ExportLogsServiceRequest/);
    expect(decodeLogsRequest(Buffer.from('[1]'), 'json')).toMatch(/not a JSON object/);
    expect(decodeLogsRequest(Buffer.from('{"resourceLogs":['), 'json')).toMatch(/not an ExportLogsServiceRequest \(json\)/);
  });

  it('writes partial success as ExportLogsServiceResponse and errors as google.rpc.Status', () => {
    const { response, status } = otlpMessages();
    const partial = encodeLogsResponse('protobuf', 3, 'three records carry no latency') as Buffer;
    expect(response.toObject(response.decode(partial), { longs: Number })).toEqual({ partialSuccess: { rejectedLogRecords: 3, errorMessage: 'three records carry no latency' } });
    expect((encodeLogsResponse('protobuf', 0, '') as Buffer).length).toBe(0);
    expect(JSON.parse(encodeLogsResponse('json', 3, 'x') as string)).toEqual({ partialSuccess: { rejectedLogRecords: '3', errorMessage: 'x' } });
    expect(status.toObject(status.decode(encodeStatus('protobuf', 3, 'bad body') as Buffer))).toEqual({ code: 3, message: 'bad body' });
  });
});
