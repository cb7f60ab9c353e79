// `report` on two threads (src/cli/report-parallel.ts) must print what one thread prints. The built CLI is
// run twice per input: as users run it (small files, one thread) and with ZP_REPORT_PARALLEL_MIN_BYTES=0,
// which forces the two-thread path; its debug log proves the worker ran. Everything must be equal except
// σ, which comes from merged moments and may differ in the last bits (allowed: 1e-12 relative).
import { execFile } from 'node:child_process';
import { tempDir } from '../../helpers/temp-dir.js';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { Aggregate, sketchFromState } from '../../../src/windows/aggregate.js';
import type { Signals } from '../../../src/signals/classify.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = join(ROOT, 'bin', 'zero-plane-exporter.js');
const GOLDEN = join(ROOT, 'test', 'golden');
const TWO_THREADS = 'report: 2 threads';
const FALLBACK = 'report: label limits would not merge exactly, second half read again on one thread';
const SIGMA_RELATIVE = 1e-12;

type Json = Record<string, unknown>;

interface Run {
  report: Json;
  /** The `msg` of each JSON log line on stderr. */
  logs: string[];
  /** The plain lines on stderr: hints about input not read right. */
  hints: string[];
}

async function report(file: string | string[], config: string | undefined, twoThreads: boolean): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.ZP_REPORT_PARALLEL_MIN_BYTES;
  if (twoThreads) env.ZP_REPORT_PARALLEL_MIN_BYTES = '0';
  const args = [CLI, 'report', '--format', 'json', '--log.level', 'debug', ...(config === undefined ? [] : ['--config.file', config]), ...[file].flat()];
  const { stdout, stderr } = await promisify(execFile)(process.execPath, args, { env, maxBuffer: 1 << 26 });
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  const logs = lines.filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { msg: string }).msg);
  return { report: JSON.parse(stdout) as Json, logs, hints: lines.filter((l) => !l.startsWith('{')) };
}

/** Runs both ways, checks the two-thread run took the worker, and compares the reports. */
async function expectSameReport(file: string | string[], config: string | undefined): Promise<{ one: Run; two: Run }> {
  const [one, two] = await Promise.all([report(file, config, false), report(file, config, true)]);
  expect(one.logs).not.toContain(TWO_THREADS);
  expect(two.logs).toContain(TWO_THREADS);
  const { stddevSeconds: s1, ...rest1 } = one.report;
  const { stddevSeconds: s2, ...rest2 } = two.report;
  expect(rest2).toEqual(rest1);
  expect(two.hints).toEqual(one.hints);
  if (s1 === null) expect(s2).toBeNull();
  else expect(Math.abs((s2 as number) - (s1 as number))).toBeLessThanOrEqual(SIGMA_RELATIVE * Math.abs(s1 as number));
  return { one, two };
}

const tmp = tempDir('zp-report-parallel-');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A gateway log of `n` lines; `labelValues` distinct models, routes and cohorts. */
function generated(name: string, n: number, labelValues: number): string {
  const lines: string[] = [];
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < n; i++) {
    const hit = rand() < 0.8;
    const label = (k: string) => `${k}-${Math.floor(rand() * labelValues)}`;
    const profile = `warmup=${rand() < 0.9 ? 'hit' : 'miss'}, degraded=?${rand() < 0.02 ? 1 : 0}, mode=balanced`;
    const record = {
      ts: new Date(Date.UTC(2026, 10, 29, 12) + i * 10).toISOString(),
      latency_ms: Math.round((100 + rand() * 100 + (rand() < 0.01 ? rand() * 5000 : 0)) * 1000) / 1000,
      status: rand() < 0.97 ? 200 : 503,
      model: label('model'),
      route: label('/v1/route'),
      cohort: label('cohort'),
      response_headers: hit ? { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': profile } : {},
      request_headers: { 'x-anthropic-experimental': 'zero-plane-2024' },
    };
    lines.push(rand() < 0.001 ? '{"not json' : JSON.stringify(record));
  }
  const path = join(tmp, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('report on two threads equals report on one', () => {
  const golden = readdirSync(GOLDEN)
    .filter((f) => f.endsWith('.ndjson'))
    .sort();
  it.each(golden)('test/golden/%s', async (f) => {
    const yml = join(GOLDEN, f.replace(/\.ndjson$/, '.yml'));
    const { two } = await expectSameReport(join(GOLDEN, f), existsSync(yml) ? yml : undefined);
    expect(two.logs).not.toContain(FALLBACK);
  });

  it('examples/gateway.ndjson', async () => {
    const { two } = await expectSameReport(join(ROOT, 'examples', 'gateway.ndjson'), undefined);
    expect(two.logs).not.toContain(FALLBACK);
  });

  it('a generated 50k-line file whose halves merge (few label values)', async () => {
    const { one, two } = await expectSameReport(generated('few-labels.ndjson', 50_000, 8), undefined);
    expect(two.logs).not.toContain(FALLBACK);
    expect(one.report.lines).toBe(50_000);
  }, 30_000);

  it('several files in one report: each read on two threads, the whole as one thread reads it', async () => {
    const files = [generated('a.ndjson', 20_000, 4), join(ROOT, 'examples', 'gateway.ndjson'), generated('b.ndjson', 20_000, 6), generated('c.ndjson', 5_000, 3)];
    const { one, two } = await expectSameReport(files, undefined);
    expect(two.logs.filter((m) => m === TWO_THREADS)).toHaveLength(files.length);
    expect(two.logs).not.toContain(FALLBACK);
    expect(one.report.lines).toBeGreaterThan(45_000);
  }, 30_000);

  it('a generated 50k-line file with many label values: the limits overflow, the second half is read again', async () => {
    const { one, two } = await expectSameReport(generated('many-labels.ndjson', 50_000, 400), undefined);
    expect(two.logs).toContain(FALLBACK);
    expect(one.report.lines).toBe(50_000);
  }, 30_000);

  it('gzip and stdin stay on one thread', async () => {
    const { gzipSync } = await import('node:zlib');
    const { readFileSync } = await import('node:fs');
    const gz = join(tmp, 'gateway.ndjson.gz');
    writeFileSync(gz, gzipSync(readFileSync(join(ROOT, 'examples', 'gateway.ndjson'))));
    const run = await report(gz, undefined, true);
    expect(run.logs).not.toContain(TWO_THREADS);
    expect(run.report.lines).toBeGreaterThan(0);
  });
});

describe('Aggregate state crosses threads exactly', () => {
  const signals = (hit: boolean): Signals => ({ hit, degraded: false, warmup: 'hit', cached: false }) as unknown as Signals;

  it.each([0.0025, 0.005, 0.001, 0.01])('every sketch bin from 1 µs to 1000 s maps back onto its own key (relativeAccuracy %f)', (accuracy) => {
    const mapping = new Aggregate(accuracy).sketch.mapping;
    for (let key = mapping.key(1e-6); key <= mapping.key(1e3); key++) expect(mapping.key(mapping.value(key))).toBe(key);
  });

  it('bins, counts and summary survive state() → sketchFromState, and halves merge like one pass', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const values = Array.from({ length: 20_000 }, (_, i) => (i % 997 === 0 ? 0 : rand() < 0.01 ? rand() * 30 : 0.1 + rand() * 0.1));
    const whole = new Aggregate(0.0025);
    const first = new Aggregate(0.0025);
    const second = new Aggregate(0.0025);
    values.forEach((v, i) => {
      const s = signals(i % 5 !== 0);
      whole.add(s, v);
      (i < values.length / 2 ? first : second).add(s, v);
    });
    const crossed = structuredClone(second.state());
    expect(sketchFromState(crossed.sketch, 0.0025)).toBeDefined();
    const rebuilt = new Aggregate(0.0025);
    rebuilt.mergeState(crossed);
    const { moments: m1, ...rest1 } = rebuilt.state();
    const { moments: m2, ...rest2 } = second.state();
    expect(rest1).toEqual(rest2);
    expect(m1).toEqual(m2);

    first.mergeState(crossed);
    const { moments: mm, sketch: merged, ...counts } = first.state();
    const { moments: wm, sketch: one, ...wholeCounts } = whole.state();
    expect(counts).toEqual(wholeCounts);
    expect(merged.bins).toEqual(one.bins);
    expect(merged.zeroCount).toBe(one.zeroCount);
    expect([merged.count, merged.min, merged.max]).toEqual([one.count, one.min, one.max]);
    for (const q of [0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1]) expect(first.quantile(q)).toBe(whole.quantile(q));
    expect(mm.n).toBe(wm.n);
    expect(Math.abs((first.stddev() as number) - (whole.stddev() as number))).toBeLessThanOrEqual(SIGMA_RELATIVE * (whole.stddev() as number));
  });
});
