// "Long label values kill /metrics for good": 20 lines whose model, route and cohort are ~330 KB each (every
// line under the 1 MiB line limit) made /metrics answer 500 "Invalid string length", and the checkpoint
// restored them; 50 models × 50 routes × 50 cohorts made a 336 MB scrape taking 11–17 s of CPU. Each
// attack again, from a followed file, over HTTP ingest and from a checkpoint saved without bounds: /metrics
// answers 200 within 1 s and under a size bound, /-/healthy answers, every request is counted, every
// label value is at most metrics.labelValueMaxBytes and every family at most metrics.maxSeriesPerFamily.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeCheckpointFile } from '../../../src/checkpoint/checkpoint-file.js';
import { takeCheckpoint } from '../../../src/checkpoint/checkpoint-state.js';
import { startServe, type RunningServer } from '../../../src/cli/serve-command.js';
import { configSchema, type Config } from '../../../src/config/schema.js';
import { CUT_MARK, OVERFLOW_VALUE } from '../../../src/metrics/label-limiter.js';
import { Pipeline } from '../../../src/pipeline.js';
import { createLogger } from '../../../src/server/logger.js';
import { requireBinary } from '../../helpers/binaries.js';
import { waitFor } from '../../helpers/cli-process.js';
import { labelSetsPerFamily, parseSamples, sumOf, type ParsedSample } from '../../helpers/exposition.js';
import { tempDir } from '../../helpers/temp-dir.js';

const MiB = 1024 * 1024;
const HISTOGRAM = 'zero_plane_request_duration_seconds';
/** The families a request feeds; each may hold at most this many extra __other__ series (hit × status class). */
const REQUEST_FAMILIES = ['zero_plane_requests_total', HISTOGRAM, 'zero_plane_degraded_requests_total', 'zero_plane_cached_responses_total', 'zero_plane_warmup_total'];
const MAX_OVERFLOW_SETS = 12;

/** ~330 KB each (`kb` KB), distinct in their first bytes, in 1-, 2- and 3-byte UTF-8 characters. */
const longModel = (i: number, kb = 330) => `${i}-${'m'.repeat(kb * 1000 - 10)}`;
const longRoute = (i: number, kb = 330) => `/${i}/${'é'.repeat(kb * 500 - 10)}`;
const longCohort = (i: number, kb = 330) => `${i}-${'✓'.repeat(Math.floor((kb * 1000) / 3) - 10)}`;

function record(model: string, route: string, cohort: string, latencyMs = 183): string {
  return JSON.stringify({ latency_ms: latencyMs, status: 200, model, route, cohort, response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } });
}

const LONG_LINES = Array.from({ length: 20 }, (_, i) => record(longModel(i), longRoute(i), longCohort(i)));
/** The same at 33 KB (still 250 times the limit), so a checkpoint of them stays small enough for the suite. */
const LONG_LINES_33KB = Array.from({ length: 20 }, (_, i) => record(longModel(i, 33), longRoute(i, 33), longCohort(i, 33)));

/** The cut a value should get, written out the plain way: whole characters while they fit, then the mark. */
function expectedCut(value: string, maxBytes: number): string {
  let kept = '';
  for (const ch of value) {
    if (Buffer.byteLength(kept + ch + CUT_MARK) > maxBytes) break;
    kept += ch;
  }
  return kept + CUT_MARK;
}

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function serve(overrides: Record<string, unknown>): Promise<{ server: RunningServer; config: Config }> {
  const config = configSchema.parse({ web: { listenAddress: '127.0.0.1:0' }, ...overrides });
  const server = await startServe(
    config,
    createLogger('error', () => {}),
  );
  running.push(server);
  return { server, config };
}

interface Scrape {
  bytes: number;
  text: string;
  samples: ParsedSample[];
}

/** /metrics and /-/healthy at once, each of which must answer 200 within 1 s. */
async function scrape(url: string): Promise<Scrape> {
  const [metrics, healthy] = await Promise.all([
    fetch(`${url}/metrics`, { signal: AbortSignal.timeout(1_000) }).then(async (r) => ({ status: r.status, body: Buffer.from(await r.arrayBuffer()) })),
    fetch(`${url}/-/healthy`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.status),
  ]);
  expect(metrics.status).toBe(200);
  expect(healthy).toBe(200);
  const text = metrics.body.toString('utf8');
  return { bytes: metrics.body.length, text, samples: parseSamples(text) };
}

async function linesRead(url: string, source: string, n: number): Promise<void> {
  await waitFor(
    async () => {
      const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
      return sumOf(parseSamples(text), 'zero_plane_exporter_lines_total', { source }) === n ? true : undefined;
    },
    15_000,
    `${n} lines from ${source}`,
  );
}

/** Every label value of every sample fits the limit. */
function expectLabelValuesWithin(samples: readonly ParsedSample[], maxBytes: number): void {
  let longest = 0;
  for (const s of samples) for (const v of Object.values(s.labels)) longest = Math.max(longest, Buffer.byteLength(v));
  expect(longest).toBeLessThanOrEqual(maxBytes);
}

/** The promise for the 20 long lines, whichever way they came in. */
function expectLongLinesBounded(got: Scrape, maxBytes: number): void {
  expect(got.bytes).toBeLessThan(1 * MiB);
  expectLabelValuesWithin(got.samples, maxBytes);
  const requests = got.samples.filter((s) => s.name === 'zero_plane_requests_total');
  expect(requests.reduce((t, s) => t + s.value, 0)).toBe(20);
  // Distinct in their first bytes, so still 20 series, each value cut exactly as written out above.
  expect(requests.map((s) => s.labels.model).sort()).toEqual(Array.from({ length: 20 }, (_, i) => expectedCut(longModel(i), maxBytes)).sort());
  expect(requests.map((s) => s.labels.route).sort()).toEqual(Array.from({ length: 20 }, (_, i) => expectedCut(longRoute(i), maxBytes)).sort());
  expect(requests.map((s) => s.labels.cohort).sort()).toEqual(Array.from({ length: 20 }, (_, i) => expectedCut(longCohort(i), maxBytes)).sort());
  for (const label of ['model', 'route', 'cohort']) {
    expect(sumOf(got.samples, 'zero_plane_exporter_label_overflow_total', { label, reason: 'too_long' }), label).toBe(20);
    expect(sumOf(got.samples, 'zero_plane_exporter_label_overflow_total', { label, reason: 'too_many_values' }), label).toBe(0);
  }
  expect(sumOf(got.samples, 'zero_plane_exporter_series_overflow_total')).toBe(0);
}

/**
 * The promise for the cross product: every family within the cap, every request counted once. Lines that
 * found a family full are counted in series_overflow_total; restored rows are not new events, so not.
 */
function expectCrossProductBounded(got: Scrape, config: Config, requests: number, from: 'lines' | 'checkpoint'): void {
  const cap = config.metrics.maxSeriesPerFamily;
  const sets = labelSetsPerFamily(got.samples, [HISTOGRAM]);
  for (const family of REQUEST_FAMILIES) expect(sets.get(family), family).toBeLessThanOrEqual(cap + MAX_OVERFLOW_SETS);
  expect(sets.get('zero_plane_requests_total')).toBeGreaterThanOrEqual(cap); // it really filled up
  for (const [family, n] of sets) expect(n, family).toBeLessThanOrEqual(cap + MAX_OVERFLOW_SETS);
  expect(sumOf(got.samples, 'zero_plane_requests_total')).toBe(requests);
  expect(sumOf(got.samples, `${HISTOGRAM}_count`)).toBe(requests);
  const folded = sumOf(got.samples, 'zero_plane_requests_total', { model: OVERFLOW_VALUE, route: OVERFLOW_VALUE, cohort: OVERFLOW_VALUE });
  expect(folded).toBeGreaterThan(requests / 2);
  expect(sumOf(got.samples, 'zero_plane_exporter_series_overflow_total')).toBe(from === 'lines' ? folded : 0);
  expectLabelValuesWithin(got.samples, config.metrics.labelValueMaxBytes);
}

function crossProduct(): string[] {
  const lines: string[] = [];
  for (let a = 0; a < 50; a++) for (let b = 0; b < 50; b++) for (let c = 0; c < 50; c++) lines.push(record(`model-${a}`, `/v1/route-${b}`, `cohort-${c}`, 150 + ((a + b + c) % 60)));
  return lines;
}

async function ingest(url: string, lines: readonly string[], perBody: number): Promise<number> {
  let accepted = 0;
  for (let i = 0; i < lines.length; i += perBody) {
    const res = await fetch(`${url}/api/v1/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: `${lines.slice(i, i + perBody).join('\n')}\n`,
    });
    expect(res.status).toBe(200);
    accepted += ((await res.json()) as { accepted: number }).accepted;
  }
  return accepted;
}

describe('long label values and their cross products do not kill /metrics', () => {
  it('20 lines with ~330 KB model, route and cohort values in a followed file: cut to 128 bytes, counted, /metrics within 1 s', { timeout: 60_000 }, async () => {
    const dir = tempDir('zp-long-labels-');
    const log = join(dir, 'gateway.log');
    for (const l of LONG_LINES) expect(Buffer.byteLength(l)).toBeLessThan(1024 * 1024); // under the line limit
    writeFileSync(log, `${LONG_LINES.join('\n')}\n`);
    const { server, config } = await serve({ sources: { files: [log], startAt: 'start' } });
    await linesRead(server.url, log, 20);
    expect(config.metrics.labelValueMaxBytes).toBe(128);
    const got = await scrape(server.url);
    expectLongLinesBounded(got, 128);
    expect(sumOf(got.samples, 'zero_plane_exporter_parse_errors_total')).toBe(0);
    // And again: the second scrape is the same size (nothing grows per scrape).
    expect((await scrape(server.url)).samples.filter((s) => s.name.startsWith('zero_plane_requests')).length).toBe(20);
  });

  it('the same 20 lines over HTTP ingest', { timeout: 60_000 }, async () => {
    const { server } = await serve({ ingest: { enabled: true, maxBodyBytes: 32 * MiB, maxInFlightBytes: 64 * MiB } });
    expect(await ingest(server.url, LONG_LINES, 20)).toBe(20);
    expectLongLinesBounded(await scrape(server.url), 128);
  });

  it('50 models × 50 routes × 50 cohorts over HTTP ingest: at most maxSeriesPerFamily per family, the rest in __other__, all 125,000 counted', { timeout: 120_000 }, async () => {
    const promtool = requireBinary('promtool');
    const { server, config } = await serve({ ingest: { enabled: true } });
    const lines = crossProduct();
    expect(await ingest(server.url, lines, 40_000)).toBe(125_000);
    const got = await scrape(server.url);
    expectCrossProductBounded(got, config, 125_000, 'lines');
    expect(got.bytes).toBeLessThan(8 * MiB);
    // Well-formed for Prometheus' own parser (only the findings the SPEC and prom-client impose).
    const r = spawnSync(promtool, ['check', 'metrics'], { input: got.text, encoding: 'utf8', timeout: 30_000, maxBuffer: 16 * MiB });
    const findings = `${r.stdout}${r.stderr}`.split('\n').filter(Boolean);
    const accepted = [/^zero_plane_degraded_count /, /^zero_plane_window_latency_seconds /, /^nodejs_active_(handles|requests|resources)_total /];
    expect(findings.filter((f) => !accepted.some((a) => a.test(f)))).toEqual([]);
  });

  it('a checkpoint saved without these bounds (33 KB values, 27,020 label sets) is restored within them', { timeout: 120_000 }, async () => {
    const dir = tempDir('zp-long-labels-cp-');
    const file = join(dir, 'checkpoint.json');
    // What the version before the bounds counted and saved: the same pipeline with the bounds switched off.
    const defaults = configSchema.parse({});
    const unbounded = { ...defaults, metrics: { ...defaults.metrics, labelValueMaxBytes: undefined, maxSeriesPerFamily: undefined } } as unknown as Config;
    const before = new Pipeline(unbounded);
    for (const l of LONG_LINES_33KB) before.line(l, 'http');
    let n = 20;
    // 30 more values per label: with the 20 long ones, exactly the 50 each label admits.
    for (let a = 0; a < 30; a++) for (let b = 0; b < 30; b++) for (let c = 0; c < 30; c++, n++) before.line(record(`model-${a}`, `/v1/route-${b}`, `cohort-${c}`), 'http');
    expect(before.metrics.requests.size).toBe(20 + 27_000);
    expect(before.metrics.labelOverflow.sum()).toBe(0);
    writeCheckpointFile(file, takeCheckpoint(before.metrics, { patterns: [], files: [], known: [] }));

    const { server, config } = await serve({ checkpoint: { file } });
    const got = await scrape(server.url);
    expectCrossProductBounded(got, config, n, 'checkpoint');
    expect(got.bytes).toBeLessThan(8 * MiB);
    // The 20 long values came first, so they kept series of their own, cut.
    const models = new Set(got.samples.filter((s) => s.name === 'zero_plane_requests_total').map((s) => s.labels.model));
    for (let i = 0; i < 20; i++) expect(models.has(expectedCut(longModel(i, 33), 128))).toBe(true);
  });
});
