// Two clusters, one job: two real exporters follow their own gateway logs, one real Prometheus scrapes
// both as job "llm-gateway" with target label cluster="eu" or "us" (and namespace="llm"), and evaluates the
// pack generated for pack.aggregationLabels [cluster, namespace, job]. The recording rules keep the two
// apart: per cluster they equal the sums over that cluster's own log, and only eu, whose log drifts with
// degraded requests, raises the P0.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { requireBinary } from '../../helpers/binaries.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { startPrometheus, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** Short windows for a test; the aggregation labels and selector are what is under test. */
const PACK = parseConfig(
  [
    'pack:',
    '  aggregationLabels: [cluster, namespace, job]',
    '  selector: \'job="llm-gateway"\'',
    '  rateWindow: 10s',
    '  evaluationInterval: 1s',
    '  keepFiringFor: 0s',
    '  for: { p0: 0s, driftOutOfBand: 0s, canaryRollback: 0s, hitRateLow: 0s, degraded: 0s }',
    'alerts:',
    '  minRequests: 50',
    'slos:',
    '  period: 1h',
    '  page: [{ factor: 14.4, long: 30s, short: 10s }]',
    '  ticket: [{ factor: 1, long: 60s, short: 20s }]',
    '',
  ].join('\n'),
  'clusters-live.yml',
);

interface Batch {
  requests: number;
  /** Served by Zero-Plane. */
  hits: number;
  /** Zero-Plane requests slower than the 194.25 ms ceiling. */
  slow: number;
  degraded: number;
}

/** eu drifts (2 of 20 fall back, 3 of the 18 hits are slow, 1 degraded); us is healthy. */
const BATCHES: Record<'eu' | 'us', Batch> = {
  eu: { requests: 20, hits: 18, slow: 3, degraded: 1 },
  us: { requests: 20, hits: 20, slow: 0, degraded: 0 },
};

function batchLines(b: Batch): string {
  let out = '';
  for (let i = 0; i < b.requests; i++) {
    const hit = i < b.hits;
    const headers: Record<string, string> = { 'x-anthropic-delay-profile': `warmup=hit${i < b.degraded ? ', degraded' : ''}` };
    if (hit) headers['x-anthropic-layer-id'] = 'zero-plane-v1';
    out += `${JSON.stringify({ ts: Date.now() / 1000, latency_ms: hit && i < b.slow ? 250 : 180, status: 200, model: 'm', route: '/v1/messages', response_headers: headers })}\n`;
  }
  return out;
}

/** What a log holds, summed over its lines. */
function sums(path: string) {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { latency_ms: number; response_headers: Record<string, string> });
  const hits = lines.filter((l) => l.response_headers['x-anthropic-layer-id'] !== undefined);
  return { requests: lines.length, hits: hits.length, slow: hits.filter((l) => l.latency_ms > 194.25).length };
}

let dir: string;
const logs: Record<string, string> = {};
const exporters: ServeProcess[] = [];
let prometheus: Daemon;
let promUrl: string;
let writer: NodeJS.Timeout | undefined;

async function query(q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`, { signal: AbortSignal.timeout(5_000) });
  return ((await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
}

/** A per-cluster value, once Prometheus has it for both clusters. */
async function byCluster(q: string): Promise<Record<string, number>> {
  const result = await waitFor(
    async () => {
      const r = await query(q);
      return r.length === 2 ? r : undefined;
    },
    20_000,
    `${q} for both clusters`,
  );
  return Object.fromEntries(result.map((s) => [s.metric.cluster as string, Number(s.value[1])]));
}

beforeAll(async () => {
  const promBin = requireBinary('prometheus');
  dir = tempDir('zp-clusters-live-');
  const configFile = join(dir, 'zp.yml');
  writeFileSync(configFile, '');
  for (const cluster of ['eu', 'us'] as const) {
    logs[cluster] = join(dir, `${cluster}.log`);
    writeFileSync(logs[cluster] as string, '');
    exporters.push(await startServe([`--config.file=${configFile}`, logs[cluster] as string]));
  }
  // One write per batch, so a scrape sees whole batches and every ratio is the batch's exactly.
  writer = setInterval(() => {
    for (const cluster of ['eu', 'us'] as const) appendFileSync(logs[cluster] as string, batchLines(BATCHES[cluster]));
  }, 100);
  const started = await startPrometheus(promBin, {
    dir,
    rules: renderPack(PACK).get('zero-plane.rules.yml') as string,
    scrape: {
      job: 'llm-gateway',
      targets: [
        { target: exporters[0]?.url.replace('http://', '') as string, labels: { cluster: 'eu', namespace: 'llm' } },
        { target: exporters[1]?.url.replace('http://', '') as string, labels: { cluster: 'us', namespace: 'llm' } },
      ],
    },
  });
  promUrl = started.url;
  prometheus = started.daemon;
}, 60_000);

afterAll(async () => {
  if (writer) clearInterval(writer);
  await Promise.allSettled([prometheus?.stop(), ...exporters.map((e) => e.stop('SIGKILL'))]);
});

describe('two clusters, one job, one Prometheus', () => {
  it("per cluster, the recording rules equal the sums over that cluster's own log (never the two summed)", async () => {
    const hitRate = await byCluster('zero_plane:hit_rate:ratio_rate10s{job="llm-gateway", namespace="llm"}');
    const above = await byCluster('zero_plane:latency_above_ceiling:ratio_rate10s');
    const hitBudget = await byCluster('zero_plane:slo_errors_per_requests:ratio_rate30s{slo="hit-rate"}');
    const latencyBudget = await byCluster('zero_plane:slo_errors_per_requests:ratio_rate1m{slo="latency"}');
    for (const cluster of ['eu', 'us'] as const) {
      const s = sums(logs[cluster] as string);
      expect(s.requests).toBeGreaterThan(0);
      expect(hitRate[cluster], `${cluster} hit rate`).toBeCloseTo(s.hits / s.requests, 9);
      expect(above[cluster], `${cluster} share above the ceiling`).toBeCloseTo(s.slow / s.hits, 9);
      expect(hitBudget[cluster], `${cluster} hit-rate SLO error ratio`).toBeCloseTo((s.requests - s.hits) / s.requests, 9);
      expect(latencyBudget[cluster], `${cluster} latency SLO error ratio`).toBeCloseTo(s.slow / s.hits, 9);
    }
    // The two clusters summed would be 38/40: the rules did not mix them.
    expect(hitRate.eu).toBeCloseTo(0.9, 9);
    expect(hitRate.us).toBe(1);
  }, 40_000);

  it('only eu raises the P0, the band warning and the SLO burn, labelled with cluster, namespace and job', async () => {
    const firing = await waitFor(
      async () => {
        const r = await query('ALERTS{alertstate="firing", alertname=~"ZeroPlaneP0DriftWithDegraded|ZeroPlaneP99DriftOutOfBand|ZeroPlaneHitRateBudgetBurn|ZeroPlaneLatencyBudgetBurn"}');
        return new Set(r.map((s) => s.metric.alertname)).size === 4 ? r : undefined;
      },
      30_000,
      'the P0, band and burn-rate alerts',
    );
    for (const s of firing) expect(s.metric, s.metric.alertname).toMatchObject({ cluster: 'eu', namespace: 'llm', job: 'llm-gateway' });
    // Firing, not pending: at start-up ZeroPlaneRequestsStopped may be pending for a group not yet counted.
    expect((await query('ALERTS{cluster="us", alertstate="firing"}')).map((s) => s.metric.alertname)).toEqual([]);
  }, 40_000);
});
