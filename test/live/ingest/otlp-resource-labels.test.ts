// OTLP resource attributes as target labels, through a real Prometheus: two emitters' records (their
// k8s.cluster.name / k8s.namespace.name resources) land under their own cluster/namespace series when the
// scrape has honor_labels: true, a third set past ingest.otlp.maxResourceLabelSets under __other__ (counted
// in zero_plane_exporter_label_overflow_total{label="otlp_resource"}), and records of a resource without
// those attributes under the scrape target's own labels. Without honor_labels Prometheus renames the
// exporter's labels exported_cluster / exported_namespace (docs/otlp.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { startServe, type RunningServer } from '../../../src/cli/serve-command.js';
import { configSchema } from '../../../src/config/schema.js';
import { otlpMessages } from '../../../src/ingest/otlp-proto.js';
import { createLogger } from '../../../src/server/logger.js';
import { requireBinary } from '../../helpers/binaries.js';
import { waitFor } from '../../helpers/cli-process.js';
import { startPrometheus, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

let server: RunningServer | undefined;
const daemons: Daemon[] = [];
let honoured = '';
let renamed = '';

/** The body Envoy's OpenTelemetry access logger writes (docs/otlp.md), a hit of `ms` milliseconds. */
function envoyBody(ms: number): Record<string, string> {
  return {
    start_time: new Date().toISOString(),
    duration: String(ms),
    response_code: '200',
    route_name: 'messages',
    model: 'claude-sonnet',
    cohort: 'stable',
    resp_x_anthropic_layer_id: 'zero-plane-v1',
  };
}

async function sendWithSdk(url: string, resource: Record<string, string>, records: number): Promise<void> {
  const provider = new LoggerProvider({
    resource: resourceFromAttributes(resource),
    processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${url}/v1/logs`, timeoutMillis: 30_000 }), scheduledDelayMillis: 60_000 })],
  });
  const logger = provider.getLogger('envoy.access_loggers.open_telemetry');
  for (let i = 0; i < records; i++) logger.emit({ timestamp: Date.now(), body: envoyBody(100 + i) });
  await provider.forceFlush();
  await provider.shutdown();
}

type Result = { metric: Record<string, string>; value: [number, string] }[];
async function query(prom: string, expr: string): Promise<Result> {
  const res = await fetch(`${prom}/api/v1/query?query=${encodeURIComponent(expr)}`, { signal: AbortSignal.timeout(5_000) });
  return ((await res.json()) as { data: { result: Result } }).data.result;
}
/** `sum by (labels)` of an expression, as "v1/v2=value" sorted. */
async function sumBy(prom: string, expr: string, labels: string[]): Promise<string[]> {
  const r = await query(prom, `sum by (${labels.join(',')}) (${expr})`);
  return r.map((s) => `${labels.map((l) => s.metric[l] ?? '').join('/')}=${s.value[1]}`).sort();
}

beforeAll(async () => {
  const bin = requireBinary('prometheus');
  server = await startServe(
    configSchema.parse({
      web: { listenAddress: '127.0.0.1:0' },
      pack: { aggregationLabels: ['cluster', 'namespace', 'job'] },
      ingest: { otlp: { enabled: true, maxResourceLabelSets: 2 } },
    }),
    createLogger('warn', () => {}),
  );
  const target = { target: server.address, labels: { cluster: 'exporter-cluster', namespace: 'monitoring' } };
  // One after the other, each kept as soon as it runs: a second one failing to start still has the first stopped.
  const start = async (dir: string, honorLabels: boolean) => {
    const p = await startPrometheus(bin, { dir: tempDir(dir), rules: 'groups: []\n', scrape: { job: 'zero-plane-exporter', targets: [target] }, honorLabels });
    daemons.push(p.daemon);
    return p.url;
  };
  honoured = await start('zp-otlp-honor-', true);
  renamed = await start('zp-otlp-renamed-', false);
}, 90_000);

afterAll(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  await server?.stop();
});

describe('OTLP resource attributes as target labels, scraped by Prometheus', () => {
  it('each (cluster, namespace) resource counts under its own series with honor_labels; past the cap under __other__', { timeout: 90_000 }, async () => {
    const url = (server as RunningServer).url;
    await sendWithSdk(url, { 'service.name': 'envoy', 'k8s.cluster.name': 'eu-1', 'k8s.namespace.name': 'llm-gateway' }, 5);
    await sendWithSdk(url, { 'service.name': 'envoy', 'k8s.cluster.name': 'us-1', 'k8s.namespace.name': 'llm-gateway' }, 3);
    // A third set (past maxResourceLabelSets: 2) and a resource without the attributes, in one request.
    const { request } = otlpMessages();
    const kv = (o: Record<string, string>) => Object.entries(o).map(([key, v]) => ({ key, value: { stringValue: v } }));
    const records = (n: number) => Array.from({ length: n }, (_, i) => ({ body: { kvlistValue: { values: kv(envoyBody(200 + i)) } } }));
    const body = request.encode(
      request.fromObject({
        resourceLogs: [
          { resource: { attributes: kv({ 'service.name': 'envoy', 'k8s.cluster.name': 'ap-1', 'k8s.namespace.name': 'llm-gateway' }) }, scopeLogs: [{ logRecords: records(4) }] },
          { resource: { attributes: kv({ 'service.name': 'envoy' }) }, scopeLogs: [{ logRecords: records(2) }] },
        ],
      }),
    );
    const res = await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: Buffer.from(body.finish()) });
    expect(res.status).toBe(200);
    await res.arrayBuffer();

    const want = ['__other__/__other__=4', 'eu-1/llm-gateway=5', 'exporter-cluster/monitoring=2', 'us-1/llm-gateway=3'];
    const requests = 'zero_plane_requests_total{job="zero-plane-exporter"}';
    await waitFor(async () => ((await sumBy(honoured, requests, ['cluster', 'namespace'])).join() === want.join() ? true : undefined), 30_000, 'the four label sets in Prometheus');
    // The histogram the pack's latency rules read carries them too.
    expect(await sumBy(honoured, 'zero_plane_request_duration_seconds_count', ['cluster', 'namespace'])).toEqual(want);
    expect((await query(honoured, 'zero_plane_exporter_label_overflow_total{label="otlp_resource",reason="too_many_values"}'))[0]?.value[1]).toBe('4');
    expect(await sumBy(honoured, 'zero_plane_exporter_input_decisions_total{source="otlp"}', ['basis'])).toEqual(['evidence=4']);

    // Without honor_labels the target's labels win and the exporter's are kept as exported_*.
    await waitFor(async () => ((await query(renamed, `sum(${requests})`))[0]?.value[1] === '14' ? true : undefined), 30_000, 'the second Prometheus to scrape every record');
    expect(await sumBy(renamed, requests, ['cluster', 'namespace'])).toEqual(['exporter-cluster/monitoring=14']);
    expect(await sumBy(renamed, requests, ['exported_cluster', 'exported_namespace'])).toEqual(['/=2', '__other__/__other__=4', 'eu-1/llm-gateway=5', 'us-1/llm-gateway=3']);
  });
});
