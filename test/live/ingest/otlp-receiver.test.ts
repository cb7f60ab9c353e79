// POST /v1/logs on a live `serve`, fed by the real OpenTelemetry JS SDK (sdk-logs with the OTLP/HTTP
// protobuf and JSON exporters, gzip on and off), with each log record built as Envoy's OpenTelemetry access
// logger writes it (docs/otlp.md): the counters are exactly those of the same requests read from an
// envoy-json file. Bad bodies get the OTLP error answer and count nothing; a batch with unreadable records
// gets partial_success with their number.
import { request as httpRequest } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { AnyValueMap } from '@opentelemetry/api-logs';
import { startServe, type RunningServer } from '../../../src/cli/serve-command.js';
import { configSchema } from '../../../src/config/schema.js';
import { otlpMessages } from '../../../src/ingest/otlp-proto.js';
import { createLogger } from '../../../src/server/logger.js';
import { waitFor } from '../../helpers/cli-process.js';
import { parseSamples, sumOf, type ParsedSample } from '../../helpers/exposition.js';
import { tempDir } from '../../helpers/temp-dir.js';

const LAYERS = ['zero-plane-v1', 'zero-plane-v1', 'legacy-pool', '-'];
const PROFILES = ['warmup=hit, degraded=?0, mode=balanced', 'warmup=miss, degraded=?0, mode=strict', 'warmup=hit, degraded=?1, mode=balanced', '-'];
const OPT_INS = ['zero-plane-2024', 'zero-plane-2024', 'Zero-Plane-2024', '-', 'zero-plane-2024\u200b'];

interface MixRequest {
  startMs: number;
  durationMs: number;
  status: number;
  route: string;
  model: string;
  cohort: string;
  layer: string;
  profile: string;
  cached: string;
  downgrade: string;
  optIn: string;
}

/** 60 requests through an Envoy in front of a Zero-Plane layer: hits and misses, every opt-in defect, degraded, cached, downgraded, 429s and 500s. */
function knownMix(): MixRequest[] {
  const start = Date.now() - 60_000;
  return Array.from({ length: 60 }, (_, i) => ({
    startMs: start + i * 250,
    durationMs: 120 + ((i * 37) % 400),
    status: i % 13 === 7 ? 429 : i % 17 === 3 ? 500 : 200,
    route: i % 5 === 0 ? 'health' : 'messages',
    model: i % 2 === 0 ? 'claude-sonnet' : 'claude-haiku',
    cohort: i % 6 === 5 ? 'canary' : 'stable',
    layer: LAYERS[i % LAYERS.length] as string,
    profile: PROFILES[i % PROFILES.length] as string,
    cached: i % 9 === 4 ? '1' : '-',
    downgrade: i % 11 === 6 ? 'capacity' : '-',
    optIn: OPT_INS[i % OPT_INS.length] as string,
  }));
}

/** The line Envoy's file access logger writes (docs/gateways.md, envoy-json): a missing header is null. */
function envoyJsonLine(r: MixRequest): string {
  const h = (v: string) => (v === '-' ? null : v);
  return JSON.stringify({
    start_time: new Date(r.startMs).toISOString(),
    duration: r.durationMs,
    response_code: r.status,
    route_name: r.route,
    model: r.model,
    cohort: r.cohort,
    resp_x_anthropic_layer_id: h(r.layer),
    resp_x_anthropic_delay_profile: h(r.profile),
    resp_x_anthropic_cached: h(r.cached),
    resp_x_anthropic_downgrade_reason: h(r.downgrade),
    req_x_anthropic_experimental: h(r.optIn),
  });
}

/** The body Envoy's OpenTelemetry access logger writes with docs/otlp.md's config: every command as a string, "-" when absent. */
function envoyOtelBody(r: MixRequest): AnyValueMap {
  return {
    start_time: new Date(r.startMs).toISOString(),
    duration: String(r.durationMs),
    response_code: String(r.status),
    route_name: r.route,
    model: r.model,
    cohort: r.cohort,
    resp_x_anthropic_layer_id: r.layer,
    resp_x_anthropic_delay_profile: r.profile,
    resp_x_anthropic_cached: r.cached,
    resp_x_anthropic_downgrade_reason: r.downgrade,
    req_x_anthropic_experimental: r.optIn,
  };
}

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function serve(config: Record<string, unknown>): Promise<string> {
  const server = await startServe(
    configSchema.parse({ web: { listenAddress: '127.0.0.1:0' }, ...config }),
    createLogger('warn', () => {}),
  );
  running.push(server);
  return server.url;
}

async function samples(url: string): Promise<ParsedSample[]> {
  return parseSamples(await (await fetch(`${url}/metrics`)).text());
}

async function linesFrom(url: string, source: string, n: number): Promise<void> {
  await waitFor(async () => (sumOf(await samples(url), 'zero_plane_exporter_lines_total', { source }) === n ? true : undefined), 30_000, `${n} lines from ${source}`);
}

/** The request counters and the latency histogram: what the signals and the rules read, source-free. */
function counters(all: readonly ParsedSample[]): string[] {
  return all
    .filter((s) => s.name.startsWith('zero_plane_') && !s.name.startsWith('zero_plane_exporter_') && /(_total|_bucket|_count|_sum)$/.test(s.name) && s.value !== 0)
    .map((s) => `${s.name}${JSON.stringify(s.labels)} ${s.value}`)
    .sort();
}

const OTLP = { ingest: { otlp: { enabled: true } } };

async function sendWithSdk(url: string, exporter: 'proto' | 'json', compression: 'gzip' | 'none', mix: readonly MixRequest[]): Promise<void> {
  // The exporters type compression as their CompressionAlgorithm enum, whose values are these strings.
  const options = { url: `${url}/v1/logs`, compression: compression as never, timeoutMillis: 30_000 };
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'envoy', 'k8s.namespace.name': 'llm-gateway', 'k8s.cluster.name': 'eu-1' }),
    processors: [new BatchLogRecordProcessor({ exporter: exporter === 'proto' ? new ProtoExporter(options) : new JsonExporter(options), maxExportBatchSize: 16, scheduledDelayMillis: 60_000 })],
  });
  const logger = provider.getLogger('envoy.access_loggers.open_telemetry');
  for (const r of mix) logger.emit({ timestamp: r.startMs, body: envoyOtelBody(r), attributes: { 'http.route': r.route } });
  await provider.forceFlush();
  await provider.shutdown();
}

describe('OTLP/HTTP logs receiver', () => {
  it('the SDK exporters (protobuf and JSON, gzip on and off) give exactly the counters of the same mix read from an envoy-json file', { timeout: 120_000 }, async () => {
    const mix = knownMix();
    const dir = tempDir('zp-otlp-');
    const log = join(dir, 'envoy.jsonl');
    writeFileSync(log, `${mix.map(envoyJsonLine).join('\n')}\n`);
    const fileUrl = await serve({ sources: { files: [log], startAt: 'start' } });
    await linesFrom(fileUrl, log, mix.length);
    const truth = counters(await samples(fileUrl));
    expect(sumOf(await samples(fileUrl), 'zero_plane_requests_total')).toBe(mix.length);
    expect(truth.length).toBeGreaterThan(20);

    for (const exporter of ['proto', 'json'] as const) {
      for (const compression of ['gzip', 'none'] as const) {
        const url = await serve(OTLP);
        await sendWithSdk(url, exporter, compression, mix);
        await linesFrom(url, 'otlp', mix.length);
        const got = await samples(url);
        expect(counters(got), `${exporter}, ${compression}`).toEqual(truth);
        expect(sumOf(got, 'zero_plane_exporter_input_info', { source: 'otlp', preset: 'otlp-envoy' })).toBe(1);
        expect(sumOf(got, 'zero_plane_exporter_input_decisions_total', { source: 'otlp', basis: 'evidence' })).toBe(Math.ceil(mix.length / 16));
      }
    }
  });

  it('bad bodies get the OTLP error answer and count nothing; the good request after them counts in full', { timeout: 120_000 }, async () => {
    const url = await serve({ ingest: { maxBodyBytes: 1024 * 1024, maxInFlightBytes: 4 * 1024 * 1024, otlp: { enabled: true } } });
    const { request, status } = otlpMessages();
    const mix = knownMix().slice(0, 10);
    const good = Buffer.from(request.encode(request.fromObject(otlpRequest(mix.map((r) => ({ body: kvlist(envoyOtelBody(r)), timeUnixNano: `${r.startMs}000000` }))))).finish());
    const post = (body: Buffer | string, headers: Record<string, string>) => fetch(`${url}/v1/logs`, { method: 'POST', headers, body });
    const statusOf = async (res: Response) => status.toObject(status.decode(Buffer.from(await res.arrayBuffer()))) as { code: number; message: string };

    const truncated = await post(good.subarray(0, good.length - 9), { 'content-type': 'application/x-protobuf' });
    expect(truncated.status).toBe(400);
    expect(truncated.headers.get('content-type')).toMatch(/application\/x-protobuf/);
    expect((await statusOf(truncated)).message).toMatch(/not an ExportLogsServiceRequest/);

    const wrongType = await post(good, { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    expect((await statusOf(wrongType)).message).toMatch(/application\/x-protobuf or application\/json/);

    const badGzip = await post(good, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    expect(badGzip.status).toBe(400);

    const badJson = await post('{"resourceLogs": {"not": "a list"}}', { 'content-type': 'application/json' });
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as { code: number; message: string }).code).toBe(3);

    // A kvlist in a kvlist the whole body long: deeper than any stack (400), and a gzip of it that inflates past maxBodyBytes (413).
    const deep = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${'{"kvlistValue":{"values":[{"key":"k","value":'.repeat(20_000)}{}${'}]}}'.repeat(20_000)}}]}]}]}`;
    const deepAnswer = await post(deep, { 'content-type': 'application/json' });
    expect(deepAnswer.status).toBe(400);
    expect(((await deepAnswer.json()) as { message: string }).message).toMatch(/nests values deeper|not an ExportLogsServiceRequest/);
    const bomb = await post(gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20)), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(bomb.status).toBe(413);

    // 100 MB announced: refused before it is read, with a Status, while the client is still sending.
    expect(await hundredMegabytes(url)).toEqual({ status: 413, grpcCode: 8 });

    let s = await samples(url);
    expect(sumOf(s, 'zero_plane_exporter_lines_total', { source: 'otlp' })).toBe(0);
    expect(sumOf(s, 'zero_plane_requests_total')).toBe(0);

    const ok = await post(gzipSync(good), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    expect(ok.status).toBe(200);
    expect(Buffer.from(await ok.arrayBuffer()).length).toBe(0); // full success: an empty ExportLogsServiceResponse
    s = await samples(url);
    expect(sumOf(s, 'zero_plane_requests_total')).toBe(10);
    expect(sumOf(s, 'zero_plane_exporter_lines_total', { source: 'otlp' })).toBe(10);
  });

  it('a batch with unreadable records: partial_success names how many, the rest is counted, and /metrics agrees', { timeout: 60_000 }, async () => {
    const url = await serve({ input: { maxLineBytes: 4096 }, ingest: { otlp: { enabled: true } } });
    const { request, response } = otlpMessages();
    const mix = knownMix().slice(0, 8);
    const records = [
      ...mix.map((r) => ({ body: kvlist(envoyOtelBody(r)) })),
      { body: { stringValue: 'upstream connect error or disconnect/reset before headers' } },
      { body: kvlist({ ...envoyOtelBody(mix[0] as MixRequest), duration: '-' }) },
      { body: { stringValue: JSON.stringify({ ...envoyOtelBody(mix[1] as MixRequest), pad: 'x'.repeat(5000) }) } },
    ];
    const before = await samples(url);
    const res = await fetch(`${url}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: Buffer.from(request.encode(request.fromObject(otlpRequest(records))).finish()),
    });
    expect(res.status).toBe(200);
    const answer = response.toObject(response.decode(Buffer.from(await res.arrayBuffer())), { longs: Number }) as { partialSuccess: { rejectedLogRecords: number; errorMessage: string } };
    expect(answer.partialSuccess.rejectedLogRecords).toBe(3);
    expect(answer.partialSuccess.errorMessage).toMatch(/missing_latency 2, too_long 1/);
    const after = await samples(url);
    expect(sumOf(after, 'zero_plane_requests_total') - sumOf(before, 'zero_plane_requests_total')).toBe(8);
    expect(sumOf(after, 'zero_plane_exporter_parse_errors_total', { reason: 'missing_latency' })).toBe(2);
    expect(sumOf(after, 'zero_plane_exporter_parse_errors_total', { reason: 'too_long' })).toBe(1);

    // The same over OTLP/JSON: the answer in JSON, int64 as a string.
    const json = await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(otlpRequest(records.slice(7, 9))) });
    expect(await json.json()).toEqual({ partialSuccess: { rejectedLogRecords: '1', errorMessage: expect.stringMatching(/missing_latency 1/) as unknown } });
  });

  it('over the in-flight bytes: 503 when the shared budget is full, 429 when this address holds its share, both with Retry-After', { timeout: 60_000 }, async () => {
    const KiB = 1024;
    // Another address (127.0.0.2, loopback too) holding 60 KiB fills the budget for this one; this address holding them uses up its own share.
    for (const [holder, want] of [
      ['127.0.0.2', 503],
      ['127.0.0.1', 429],
    ] as const) {
      const url = await serve({ ingest: { maxBodyBytes: 64 * KiB, maxInFlightBytes: 96 * KiB, maxInFlightBytesPerSource: 64 * KiB, minBodyBytesPerSecond: 0, otlp: { enabled: true } } });
      const held = holdBody(url, holder, 64 * KiB, 60 * KiB);
      try {
        // 40 KiB of zeros is no message (400) until the held bytes have reached the server; then it is over the limit.
        const res = await waitFor(
          async () => {
            const r = await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: Buffer.alloc(40 * KiB) });
            return r.status === 400 ? void (await r.arrayBuffer()) : r;
          },
          20_000,
          'the held body taken in',
        );
        expect(res.status).toBe(want);
        expect(res.headers.get('retry-after')).toBe('1');
        const { status } = otlpMessages();
        expect((status.toObject(status.decode(Buffer.from(await res.arrayBuffer()))) as { message: string }).message).toMatch(/maxInFlightBytes/);
      } finally {
        held.destroy();
      }
      expect(sumOf(await samples(url), 'zero_plane_exporter_lines_total', { source: 'otlp' })).toBe(0);
    }
  });

  it('reads the HTTP and GenAI semantic conventions (otlp-generic) from the SDK exactly as the same requests in the default format from a file', { timeout: 60_000 }, async () => {
    const mix = knownMix();
    const dir = tempDir('zp-otlp-generic-');
    const log = join(dir, 'gateway.jsonl');
    const h = (v: string) => (v === '-' ? undefined : v);
    writeFileSync(
      log,
      `${mix
        .map((r) =>
          JSON.stringify({
            ts: new Date(r.startMs).toISOString(),
            latency_ms: r.durationMs,
            status: r.status,
            model: r.model,
            route: r.route,
            response_headers: { 'x-anthropic-layer-id': h(r.layer), 'x-anthropic-delay-profile': h(r.profile), 'x-anthropic-cached': h(r.cached), 'x-anthropic-downgrade-reason': h(r.downgrade) },
            request_headers: { 'x-anthropic-experimental': h(r.optIn) },
            tokens: { input: 1000 + r.durationMs, output: 50 },
          }),
        )
        .join('\n')}\n`,
    );
    const fileUrl = await serve({ input: { preset: 'default' }, sources: { files: [log], startAt: 'start' } });
    await linesFrom(fileUrl, log, mix.length);
    const truth = counters(await samples(fileUrl));

    const url = await serve(OTLP);
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'llm-gateway' }),
      processors: [new BatchLogRecordProcessor({ exporter: new ProtoExporter({ url: `${url}/v1/logs`, compression: 'gzip' as never }), maxExportBatchSize: 25, scheduledDelayMillis: 60_000 })],
    });
    const logger = provider.getLogger('gateway');
    const header = (name: string, v: string) => (v === '-' ? {} : { [name]: [v] });
    for (const r of mix) {
      logger.emit({
        timestamp: r.startMs,
        body: 'access',
        attributes: {
          duration: r.durationMs,
          'http.response.status_code': r.status,
          'http.route': r.route,
          'gen_ai.request.model': r.model,
          'gen_ai.usage.input_tokens': 1000 + r.durationMs,
          'gen_ai.usage.output_tokens': 50,
          ...header('http.response.header.x-anthropic-layer-id', r.layer),
          ...header('http.response.header.x-anthropic-delay-profile', r.profile),
          ...header('http.response.header.x-anthropic-cached', r.cached),
          ...header('http.response.header.x-anthropic-downgrade-reason', r.downgrade),
          // A request header attribute on every record: the emitter logs the opt-in header, present or not.
          'http.request.header.x-anthropic-experimental': r.optIn === '-' ? [] : [r.optIn],
        },
      });
    }
    await provider.forceFlush();
    await provider.shutdown();
    await linesFrom(url, 'otlp', mix.length);
    const got = await samples(url);
    expect(counters(got)).toEqual(truth);
    expect(sumOf(got, 'zero_plane_tokens_total')).toBeGreaterThan(0);
    expect(sumOf(got, 'zero_plane_exporter_input_info', { source: 'otlp', preset: 'otlp-generic' })).toBe(1);
    // The files' input.preset is not what reads source "otlp".
    const configured = await serve({ input: { preset: 'nginx-json' }, ...OTLP });
    const res = await fetch(`${configured}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(otlpRequest([{ body: kvlist(envoyOtelBody(mix[0] as MixRequest)) }])),
    });
    expect(await res.json()).toEqual({});
    const info = (await samples(configured)).filter((s) => s.name === 'zero_plane_exporter_input_info' && s.labels.source === 'otlp' && s.value === 1);
    expect(info.map((s) => s.labels.preset)).toEqual(['otlp-envoy']);
    // Nor is it a decision of the files' configured preset: the receiver's own decision is the only one.
    const decisions = (await samples(configured)).filter((s) => s.name === 'zero_plane_exporter_input_decisions_total');
    expect(decisions.map((s) => `${s.labels.source}/${s.labels.basis}=${s.value}`)).toEqual(['otlp/evidence=1']);
  });

  it('with cluster and namespace among the aggregation labels, the same mix counts exactly as the file, under its resource labels', { timeout: 120_000 }, async () => {
    const mix = knownMix();
    const dir = tempDir('zp-otlp-labels-');
    const log = join(dir, 'envoy.jsonl');
    writeFileSync(log, `${mix.map(envoyJsonLine).join('\n')}\n`);
    const fileUrl = await serve({ sources: { files: [log], startAt: 'start' } });
    await linesFrom(fileUrl, log, mix.length);
    const truth = counters(await samples(fileUrl));
    const url = await serve({ pack: { aggregationLabels: ['cluster', 'namespace', 'job'] }, ...OTLP });
    await sendWithSdk(url, 'proto', 'gzip', mix);
    await linesFrom(url, 'otlp', mix.length);
    const got = await samples(url);
    const labelled = got.filter((s) => s.labels.cluster !== undefined);
    expect(labelled.length).toBeGreaterThan(20);
    for (const s of labelled) expect(s.labels).toMatchObject({ cluster: 'eu-1', namespace: 'llm-gateway' });
    // Without the two labels, exactly the file's counters; none of them outside the label set.
    const strip = (all: ParsedSample[]) => all.map((s) => ({ ...s, labels: Object.fromEntries(Object.entries(s.labels).filter(([k]) => k !== 'cluster' && k !== 'namespace')) }));
    expect(counters(strip(labelled))).toEqual(truth);
    expect(counters(got.filter((s) => s.labels.cluster === undefined))).toEqual([]);
    expect(sumOf(got, 'zero_plane_exporter_label_overflow_total', { label: 'otlp_resource' })).toBe(0);
  });

  it('one request from two emitters: each resource is read with its own preset, trace ids in OTLP/JSON hex are taken', { timeout: 60_000 }, async () => {
    const url = await serve(OTLP);
    const mix = knownMix().slice(0, 6);
    const semconv = (r: MixRequest) => ({
      attributes: [
        { key: 'duration', value: { intValue: String(r.durationMs) } },
        { key: 'http.response.status_code', value: { intValue: String(r.status) } },
        { key: 'http.route', value: { stringValue: r.route } },
        { key: 'http.response.header.x-anthropic-layer-id', value: { arrayValue: { values: [{ stringValue: 'zero-plane-v1' }] } } },
      ],
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b17',
    });
    const body = {
      resourceLogs: [
        { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'envoy' } }] }, scopeLogs: [{ logRecords: mix.map((r) => ({ body: kvlist(envoyOtelBody(r)) })) }] },
        { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gateway-sdk' } }] }, scopeLogs: [{ logRecords: mix.map(semconv) }] },
      ],
    };
    const res = await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const s = await samples(url);
    expect(sumOf(s, 'zero_plane_requests_total')).toBe(12);
    expect(sumOf(s, 'zero_plane_requests_total', { hit: 'true' })).toBe(6 + mix.filter((r) => r.layer === 'zero-plane-v1').length);
    expect(sumOf(s, 'zero_plane_exporter_input_info', { source: 'otlp', preset: 'otlp-envoy' })).toBe(1);
    expect(sumOf(s, 'zero_plane_exporter_input_info', { source: 'otlp', preset: 'otlp-generic' })).toBe(1);
    expect(sumOf(s, 'zero_plane_exporter_input_decisions_total', { source: 'otlp', basis: 'evidence' })).toBe(2);
  });

  it('is off unless enabled, and takes the ingest bearer token', { timeout: 60_000 }, async () => {
    const off = await serve({});
    expect((await fetch(`${off}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
    const dir = tempDir('zp-otlp-token-');
    writeFileSync(join(dir, 'token'), 's3cret\n');
    const url = await serve({ ingest: { bearerTokenFile: join(dir, 'token'), otlp: { enabled: true } } });
    expect((await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    const ok = await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer s3cret' }, body: '{}' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({});
  });
});

function kvlist(map: AnyValueMap): { kvlistValue: { values: { key: string; value: { stringValue: string } }[] } } {
  return { kvlistValue: { values: Object.entries(map).map(([key, v]) => ({ key, value: { stringValue: String(v) } })) } };
}

function otlpRequest(logRecords: object[]): object {
  return { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'envoy' } }] }, scopeLogs: [{ logRecords }] }] };
}

/** A request from address `from` that has sent `sent` of its announced `length` bytes (the server holds them) and waits; destroy() ends it. */
function holdBody(url: string, from: string, length: number, sent: number): { destroy(): void } {
  const req = httpRequest(`${url}/v1/logs`, { method: 'POST', localAddress: from, headers: { 'content-type': 'application/x-protobuf', 'content-length': String(length) } });
  req.on('error', () => {});
  req.write(Buffer.alloc(sent));
  return { destroy: () => req.destroy() };
}

/** POSTs a body announced as 100 MB, writing until the answer comes; resolves with the status and the Status code. */
function hundredMegabytes(url: string): Promise<{ status: number; grpcCode: number }> {
  const { status } = otlpMessages();
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-length': String(100 * 1024 * 1024) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, grpcCode: (status.toObject(status.decode(Buffer.concat(chunks))) as { code: number }).code });
      });
    });
    req.on('error', (err) => (err.message.includes('socket hang up') || (err as NodeJS.ErrnoException).code === 'EPIPE' ? undefined : reject(err)));
    const chunk = Buffer.alloc(64 * 1024);
    let sent = 0;
    const pump = (): void => {
      while (sent < 100 * 1024 * 1024 && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!req.destroyed) req.end();
    };
    pump();
  });
}
