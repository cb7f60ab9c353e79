// The scale set-up of docs/deployment.md, live: two exporters (two gateway logs) scraped by one real Prometheus that
// remote-writes everything to a second real Prometheus (--web.enable-remote-write-receiver, standing in
// for Thanos Receive or Mimir), which evaluates the pack's recording rules. What the receiver's rules say
// is the sum of the two logs: exact counts, the hit ratio both logs share, and each rate rule equal to
// its expression over both instances' remote-written series.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { requireBinary } from '../../helpers/binaries.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { freePort, startDaemon, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-scale-');
const logs = [join(dir, 'gateway-a.jsonl'), join(dir, 'gateway-b.jsonl')];
/** Lines per batch in each log: 3 of 4 are Zero-Plane hits in both, so the combined hit ratio is 0.75 exactly. */
const BATCH = [4, 8];
const BATCHES = 12;
const exporters: ServeProcess[] = [];
const daemons: Daemon[] = [];
let receiver = '';

function batch(lines: number): string {
  let body = '';
  for (let i = 0; i < lines; i++) {
    const hit = i % 4 !== 3;
    body += `${JSON.stringify({
      ts: Date.now() / 1000,
      latency_ms: 180,
      status: 200,
      model: 'claude-zp',
      route: '/v1/messages',
      response_headers: hit ? { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit' } : {},
    })}\n`;
  }
  return body;
}

async function query(base: string, expr: string, time?: number): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const params = new URLSearchParams({ query: expr, ...(time === undefined ? {} : { time: String(time) }) });
  const res = await fetch(`${base}/api/v1/query?${params}`, { signal: AbortSignal.timeout(5_000) });
  const body = (await res.json()) as { status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
  expect(body.status).toBe('success');
  return body.data.result;
}

beforeAll(async () => {
  const prometheus = requireBinary('prometheus');
  // Both series of each log exist from the first scrape on, with the batches' 3:1 ratio.
  logs.forEach((log, i) => writeFileSync(log, batch(BATCH[i] as number)));
  for (const log of logs) exporters.push(await startServe(['--tail.start-at=start', log]));

  // The receiver: the pack's rules (evaluated every second here) and one exact sum for the test.
  const receiverPort = await freePort();
  receiver = `http://127.0.0.1:${receiverPort}`;
  const pack = renderPack(parseConfig('pack:\n  evaluationInterval: 1s\n', 'scale.yml')).get('zero-plane.rules.yml') as string;
  writeFileSync(join(dir, 'pack.rules.yml'), pack);
  writeFileSync(
    join(dir, 'sum.rules.yml'),
    stringify({ groups: [{ name: 'test-sums', interval: '1s', rules: [{ record: 'test:zero_plane_requests:sum', expr: 'sum by (job) (zero_plane_requests_total)' }] }] }),
  );
  writeFileSync(join(dir, 'receiver.yml'), stringify({ global: { evaluation_interval: '1s' }, rule_files: [join(dir, 'pack.rules.yml'), join(dir, 'sum.rules.yml')] }));
  daemons.push(
    await startDaemon(
      prometheus,
      [`--config.file=${join(dir, 'receiver.yml')}`, `--storage.tsdb.path=${join(dir, 'receiver-data')}`, `--web.listen-address=127.0.0.1:${receiverPort}`, '--web.enable-remote-write-receiver'],
      `${receiver}/-/ready`,
    ),
  );

  // The scraper: both sidecars as one job, everything remote-written to the receiver.
  const scraperPort = await freePort();
  writeFileSync(
    join(dir, 'scraper.yml'),
    stringify({
      global: { scrape_interval: '1s', external_labels: { cluster: 'test' } },
      scrape_configs: [{ job_name: 'zero-plane-exporter', static_configs: [{ targets: exporters.map((e) => e.url.replace('http://', '')) }] }],
      remote_write: [{ url: `${receiver}/api/v1/write`, queue_config: { batch_send_deadline: '1s', min_backoff: '100ms', max_backoff: '1s' } }],
    }),
  );
  daemons.push(
    await startDaemon(
      prometheus,
      [`--config.file=${join(dir, 'scraper.yml')}`, `--storage.tsdb.path=${join(dir, 'scraper-data')}`, `--web.listen-address=127.0.0.1:${scraperPort}`],
      `http://127.0.0.1:${scraperPort}/-/ready`,
    ),
  );
}, 60_000);

afterAll(async () => {
  for (const d of daemons.splice(0).reverse()) await d.stop();
  for (const e of exporters.splice(0)) expect(await e.stop()).toBe(0);
});

describe('one Prometheus scraping two sidecars, remote-writing to a receiver that evaluates the rules', () => {
  it("the receiver's recording rules equal the sums of the two logs", { timeout: 90_000 }, async () => {
    // Remote write sends what is scraped once its queue runs: the receiver holds both sidecars' first batch before more lines come.
    await waitFor(async () => ((await query(receiver, 'zero_plane_requests_total')).length === 4 ? true : undefined), 30_000, 'both sidecars on the receiver');
    for (let b = 1; b < BATCHES; b++) {
      logs.forEach((log, i) => appendFileSync(log, batch(BATCH[i] as number)));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const perLog = BATCH.map((n) => n * BATCHES);
    const total = (perLog[0] as number) + (perLog[1] as number);

    // Every line counted by its exporter, then every sample through remote write into the receiver's rules.
    const sum = await waitFor(
      async () => {
        const r = await query(receiver, 'test:zero_plane_requests:sum');
        return r.length === 1 && Number(r[0]?.value[1]) === total ? r : undefined;
      },
      40_000,
      `the receiver's sum rule at ${total}`,
    );
    expect(sum[0]?.metric).toEqual({ __name__: 'test:zero_plane_requests:sum', job: 'zero-plane-exporter' });

    const perInstance = await query(receiver, 'sum by (instance) (zero_plane_requests_total)');
    expect(perInstance.map((r) => Number(r.value[1])).sort((a, b) => a - b)).toEqual(perLog);
    expect(new Set(perInstance.map((r) => r.metric.instance)).size).toBe(2);
    expect(Number((await query(receiver, 'sum(zero_plane_requests_total{hit="true"})'))[0]?.value[1])).toBe(total * 0.75);

    // The pack's rules, evaluated on the receiver over both instances: one series per job, the shared ratio.
    // Remote write delivers a scrape's samples in batches, so a rule may run before the last batch is in;
    // once everything is in, every evaluation gives the exact value.
    const hitRate = await waitFor(
      async () => {
        const r = await query(receiver, 'zero_plane:hit_rate:ratio_rate5m');
        return r.length === 1 && Math.abs(Number(r[0]?.value[1]) - 0.75) < 1e-9 ? r : undefined;
      },
      30_000,
      'zero_plane:hit_rate:ratio_rate5m = 0.75 on the receiver',
    ).catch(async (err: Error) => {
      const dump = [];
      for (const e of ['zero_plane:hit_rate:ratio_rate5m', 'zero_plane:requests:rate5m', 'sum by (job) (rate(zero_plane_requests_total{hit="true"}[5m]))'])
        dump.push(`${e} = ${JSON.stringify(await query(receiver, e))}`);
      throw new Error(`${err.message}\n${dump.join('\n')}`);
    });
    expect(hitRate[0]?.metric).toEqual({ __name__: 'zero_plane:hit_rate:ratio_rate5m', job: 'zero-plane-exporter' });

    // A rate rule's sample is its expression over both instances at the time it was evaluated (once the
    // samples up to that time had arrived).
    await waitFor(
      async () => {
        const at = Number((await query(receiver, 'timestamp(zero_plane:requests:rate5m)'))[0]?.value[1]);
        const recorded = Number((await query(receiver, 'zero_plane:requests:rate5m', at))[0]?.value[1]);
        const recomputed = Number((await query(receiver, 'sum by (job) (rate(zero_plane_requests_total[5m]))', at))[0]?.value[1]);
        const oneInstance = Number((await query(receiver, 'max by (job) (sum by (job, instance) (rate(zero_plane_requests_total[5m])))', at))[0]?.value[1]);
        return recorded > 0 && recorded === recomputed && recorded > oneInstance ? true : undefined;
      },
      30_000,
      "zero_plane:requests:rate5m equal to the sum of both instances' rates",
    );
  });
});
