// HTTP ingest under load against a real `serve` process on loopback, while /metrics is scraped: the
// lines the responses accepted are exactly the lines counted, nothing answers 5xx (or anything but
// 200), and the process's memory stays flat. Bounded: a fixed number of requests, well under 15 s.
import { readFileSync, writeFileSync } from 'node:fs';
import { tempDir } from '../../helpers/temp-dir.js';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../../helpers/cli-process.js';

interface AutocannonRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  onResponse?: (status: number, body: string) => void;
}
interface AutocannonResult {
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
  duration: number;
}
type Autocannon = (opts: { url: string; connections: number; amount: number; timeout: number; requests: AutocannonRequest[] }) => Promise<AutocannonResult>;
// autocannon ships no types; this is the slice of its programmatic API the test uses.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const line = (latencyMs: number, model: string) =>
  JSON.stringify({
    latency_ms: latencyMs,
    status: 200,
    model,
    route: '/v1/messages',
    response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit, degraded=?0, mode=balanced' },
  });
/** 18 good lines and 2 bad ones (one invalid JSON, one without latency). */
const BODY = `${[...Array.from({ length: 9 }, (_, i) => line(170 + i, 'claude-sonnet')), 'not json', ...Array.from({ length: 9 }, (_, i) => line(180 + i, 'claude-haiku')), '{"status":200}'].join('\n')}\n`;
const GOOD_PER_BODY = 18;
const WARM_UP_REQUESTS = 500;
const LOAD_REQUESTS = 3000;
const RSS_GROWTH_LIMIT_BYTES = 64 * 1024 * 1024;

let serve: ServeProcess;

beforeAll(async () => {
  const dir = tempDir('zp-ingest-load-');
  writeFileSync(join(dir, 'zp.yml'), 'ingest:\n  enabled: true\n');
  serve = await startServe([`--config.file=${join(dir, 'zp.yml')}`]);
});

afterAll(async () => {
  expect(await serve.stop()).toBe(0);
});

interface Totals {
  accepted: number;
  rejected: number;
  reasons: Record<string, number>;
}

/** Sends `amount` requests, alternating plain and gzip bodies, and sums what the responses say. */
async function load(amount: number): Promise<{ result: AutocannonResult; totals: Totals }> {
  const totals: Totals = { accepted: 0, rejected: 0, reasons: {} };
  const onResponse = (status: number, body: string) => {
    if (status !== 200) return;
    const r = JSON.parse(body) as Totals;
    totals.accepted += r.accepted;
    totals.rejected += r.rejected;
    for (const [k, v] of Object.entries(r.reasons)) totals.reasons[k] = (totals.reasons[k] ?? 0) + v;
  };
  const result = await autocannon({
    url: `${serve.url}/api/v1/ingest`,
    connections: 10,
    amount,
    timeout: 10,
    requests: [
      { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: BODY, onResponse },
      { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' }, body: gzipSync(BODY), onResponse },
    ],
  });
  return { result, totals };
}

async function scrape(): Promise<{ status: number; records: number; errors: Record<string, number>; httpLines: number }> {
  const res = await fetch(`${serve.url}/metrics`);
  const text = await res.text();
  let records = 0;
  let httpLines = 0;
  const errors: Record<string, number> = {};
  for (const l of text.split('\n')) {
    const value = Number(l.slice(l.lastIndexOf(' ') + 1));
    if (l.startsWith('zero_plane_requests_total{')) records += value;
    if (l.startsWith('zero_plane_exporter_lines_total{source="http"}')) httpLines = value;
    const reason = /^zero_plane_exporter_parse_errors_total\{reason="([^"]+)"\}/.exec(l)?.[1];
    if (reason !== undefined && value > 0) errors[reason] = value;
  }
  return { status: res.status, records, errors, httpLines };
}

function rssBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

describe('HTTP ingest under load while /metrics is scraped', () => {
  it('accepted == counted, only 200s, memory flat', { timeout: 30_000 }, async () => {
    const pid = serve.child.pid as number;
    const warm = await load(WARM_UP_REQUESTS);
    expect(warm.result.non2xx).toBe(0);
    const rssWarm = rssBytes(pid);
    const before = await scrape();

    let loading = true;
    const scrapes: number[] = [];
    const scraper = (async () => {
      while (loading) {
        scrapes.push((await scrape()).status);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const { result, totals } = await load(LOAD_REQUESTS);
    loading = false;
    await scraper;
    const after = await scrape();
    const rssAfter = rssBytes(pid);

    expect(result.errors).toBe(0);
    expect(result.timeouts).toBe(0);
    expect(result.non2xx).toBe(0);
    expect(Object.keys(result.statusCodeStats)).toEqual(['200']);
    expect(scrapes.length).toBeGreaterThan(5);
    expect(scrapes.every((s) => s === 200)).toBe(true);

    // What the responses accepted is what the exporter counted, line for line.
    expect(totals.accepted).toBe(LOAD_REQUESTS * GOOD_PER_BODY);
    expect(totals.reasons).toEqual({ invalid_json: LOAD_REQUESTS, missing_latency: LOAD_REQUESTS });
    expect(after.records - before.records).toBe(totals.accepted);
    expect(after.httpLines - before.httpLines).toBe(totals.accepted + totals.rejected);
    for (const [reason, n] of Object.entries(totals.reasons)) expect((after.errors[reason] ?? 0) - (before.errors[reason] ?? 0)).toBe(n);

    expect(rssAfter - rssWarm, `RSS ${rssWarm} → ${rssAfter}`).toBeLessThan(RSS_GROWTH_LIMIT_BYTES);
    expect(serve.logs.filter((l) => l.level === 'error' || l.unstructured !== undefined)).toEqual([]);
  });
});
