// OpenMetrics on a running `serve`: /metrics answers it to Prometheus' Accept header (and the text format
// otherwise), Debian's python3-prometheus-client parser accepts the live body, and a real Prometheus 2.42
// scrapes it: it negotiates OpenMetrics and, having no created-timestamp ingestion, stores each
// `_created` line as a series of its own (docs/metrics.md: what a newer Prometheus does with them instead).
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { PROMETHEUS_ACCEPT, pythonOpenMetrics } from '../../helpers/openmetrics.js';
import { startPrometheus, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-om-live-');
const log = join(dir, 'gateway.log');
let server: ServeProcess;
let prometheus: Daemon | undefined;
let promUrl = '';
let appendedAt = 0;

const line = (model: string) =>
  `${JSON.stringify({ ts: Date.now() / 1000, latency_ms: 181, status: 200, model, route: '/v1/messages', response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit' } })}\n`;

async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`, { signal: AbortSignal.timeout(5_000) });
  return ((await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
}

beforeAll(async () => {
  writeFileSync(log, '');
  server = await startServe([log]);
  appendedAt = Date.now();
  appendFileSync(log, line('claude-sonnet-4'));
  await waitFor(
    async () => {
      const t = await (await fetch(`${server.url}/metrics`)).text();
      return sample(t, 'zero_plane_window_requests') === 1 ? true : undefined;
    },
    5_000,
    'the first line in /metrics',
  );
  const started = await startPrometheus(requireBinary('prometheus'), { dir, rules: 'groups: []\n', scrapeTarget: server.url.replace('http://', '') });
  promUrl = started.url;
  prometheus = started.daemon;
}, 40_000);

afterAll(async () => {
  await prometheus?.stop();
  await server?.stop('SIGKILL');
});

describe('serve: OpenMetrics on /metrics', () => {
  it("answers OpenMetrics to Prometheus' Accept header, accepted by Debian's python3-prometheus-client parser", async () => {
    const res = await fetch(`${server.url}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } });
    expect(res.headers.get('content-type')).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(res.headers.get('vary')).toBe('Accept, Accept-Encoding');
    const body = await res.text();
    expect(body.endsWith('\n# EOF\n')).toBe(true);
    const parsed = pythonOpenMetrics(body);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.families.map((f) => f.name)).toEqual(expect.arrayContaining(['zero_plane_requests', 'zero_plane_request_duration_seconds', 'zero_plane_hit_rate', 'process_cpu_seconds']));
    // The series created by the first line says when: after the exporter started, before the line was read.
    const created = /\nzero_plane_requests_created\{hit="true",status_class="2xx",model="claude-sonnet-4",route="\/v1\/messages",cohort=""\} (\S+)\n/.exec(body);
    expect(Number(created?.[1]) * 1000).toBeGreaterThanOrEqual(appendedAt - 1);
    expect(Number(created?.[1]) * 1000).toBeLessThanOrEqual(Date.now());
  });

  it('answers the text format to a scraper that does not ask for OpenMetrics', async () => {
    const res = await fetch(`${server.url}/metrics`, { headers: { accept: 'text/plain;version=0.0.4' } });
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const body = await res.text();
    expect(body).not.toContain('# EOF');
    expect(body).not.toContain('_created');
  });

  it('is scraped by Prometheus 2.42 in OpenMetrics: the counters as usual, each _created as a series of its own', async () => {
    const created = await waitFor(
      async () => {
        const r = await query('zero_plane_requests_created{model="claude-sonnet-4"}');
        return r.length > 0 ? r : undefined;
      },
      15_000,
      'Prometheus to scrape the exporter',
    );
    expect(Number(created[0]?.value[1]) * 1000).toBeGreaterThanOrEqual(appendedAt - 1);
    expect((await query('zero_plane_requests_total{model="claude-sonnet-4"}'))[0]?.value[1]).toBe('1');
    expect((await query('up{job="zero-plane-exporter"}'))[0]?.value[1]).toBe('1');
    // The histogram's buckets as OpenMetrics writes le: 10 is "10.0" (Prometheus 3 normalises both forms).
    expect(await query('zero_plane_request_duration_seconds_bucket{le="10.0",model="claude-sonnet-4"}')).toHaveLength(1);
  });
});
