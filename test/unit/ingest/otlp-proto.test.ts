// The OTLP messages as protobufjs reads them from the official protos: both encodings give one shape, a
// truncated or wrongly shaped body is refused with a reason, and the answers decode as the spec's messages.
import { describe, expect, it } from 'vitest';
import { decodeLogsRequest, encodeLogsResponse, encodeStatus, otlpMessages } from '../../../src/ingest/otlp-proto.js';

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
  it('reads protobuf and JSON to the same object, nanoseconds exact', () => {
    const fromProto = decodeLogsRequest(binary(REQUEST), 'protobuf');
    const fromJson = decodeLogsRequest(Buffer.from(JSON.stringify(REQUEST)), 'json');
    expect(typeof fromProto).toBe('object');
    const { traceId: _dropped, ...record } = REQUEST.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    expect(fromJson).toEqual({ resourceLogs: [{ ...REQUEST.resourceLogs[0], scopeLogs: [{ logRecords: [record] }] }] });
    expect((fromProto as typeof REQUEST).resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!.timeUnixNano).toBe('1764669600123456789');
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
