// `compare` (src/history/compare.ts) on generated cohorts whose σ is known: it names the tighter one, gives
// no verdict when the two are the same within the interval, rejects a change that is 12 % faster on the
// mean but wider (the article's example), reproduces with the seed, and refuses selectors it cannot use.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import { runCompare, type CompareArgs } from '../../../src/cli/compare-command.js';
import { UsageError } from '../../../src/cli/flags.js';
import { compareGroups, type CompareResult } from '../../../src/history/compare.js';
import { createRng, standardNormal } from '../../../src/simulate/random.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-compare-');
const NOW = Date.UTC(2026, 0, 2);
const START = Date.UTC(2026, 0, 1);
const WINDOW = 300_000;
let n = 0;

interface Cohort {
  cohort: string;
  /** Mean latency, ms. */
  meanMs: number;
  /** σ of latency inside a window, ms. */
  sigmaMs: number;
  /** σ of each window's mean around meanMs, ms: what moves the per-window p99. */
  windowSigmaMs: number;
  seed: number;
}

/** `windows` windows of 5 m with `perWindow` Zero-Plane requests of each cohort, interleaved in time order. */
function lines(cohorts: Cohort[], windows = 24, perWindow = 250): string[] {
  const out: { t: number; line: string }[] = [];
  for (const c of cohorts) {
    const rng = createRng(c.seed);
    for (let w = 0; w < windows; w++) {
      const mean = c.meanMs + c.windowSigmaMs * standardNormal(rng);
      for (let i = 0; i < perWindow; i++) {
        const t = START + w * WINDOW + Math.floor(((i + 0.5) * WINDOW) / perWindow);
        const latency = Math.max(1, mean + c.sigmaMs * standardNormal(rng));
        out.push({
          t,
          line: JSON.stringify({
            ts: new Date(t).toISOString(),
            latency_ms: Number(latency.toFixed(3)),
            status: 200,
            model: 'claude-opus-4',
            route: '/v1/messages',
            cohort: c.cohort,
            response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit, degraded=?0, mode=balanced' },
          }),
        });
      }
    }
  }
  return out.sort((a, b) => a.t - b.t).map((x) => x.line);
}

function file(text: string[]): string {
  const path = join(dir, `log-${n++}.ndjson`);
  writeFileSync(path, `${text.join('\n')}\n`);
  return path;
}

const OPTIONS = { windowMs: WINDOW, nowMs: NOW, minWindowHits: 200, minWindows: 10, iterations: 2000, confidence: 0.95, seed: 1 };
const stable: Cohort = { cohort: 'stable', meanMs: 150, sigmaMs: 3, windowSigmaMs: 1.5, seed: 11 };

async function compareCohorts(a: Cohort, b: Cohort, options = OPTIONS): Promise<CompareResult> {
  const path = file(lines([a, b]));
  return compareGroups(defaultConfig(), { kind: 'selectors', files: [path], a: [{ label: 'cohort', value: a.cohort }], b: [{ label: 'cohort', value: b.cohort }] }, options);
}

describe('compare', () => {
  it('names the cohort with the narrower convergence radius (σ 3 ms against 6 ms, window means 1.5 ms against 4 ms)', async () => {
    const wide: Cohort = { cohort: 'canary', meanMs: 150, sigmaMs: 6, windowSigmaMs: 4, seed: 12 };
    const r = await compareCohorts(stable, wide);
    expect(r.a.windows).toBe(24);
    expect(r.b.windows).toBe(24);
    // The generated σ, measured back: √(3² + 1.5²) = 3.35 ms and √(6² + 4²) = 7.2 ms, within 10 %.
    expect(r.a.latencyStddevSeconds).toBeGreaterThan(0.00335 * 0.9);
    expect(r.a.latencyStddevSeconds).toBeLessThan(0.00335 * 1.1);
    expect(r.b.latencyStddevSeconds).toBeGreaterThan(0.0072 * 0.9);
    expect(r.b.latencyStddevSeconds).toBeLessThan(0.0072 * 1.1);
    expect(r.latencyStddevRatio?.low).toBeGreaterThan(1);
    expect(r.p99DriftStddevRatio?.low).toBeGreaterThan(1);
    expect(r.tighter).toBe('a');
    // The other way round, the same answer for the same cohort.
    const swapped = await compareCohorts(wide, stable);
    expect(swapped.tighter).toBe('b');
    expect(swapped.latencyStddevRatio?.high).toBeLessThan(1);
  });

  it('gives no verdict when the two cohorts have the same σ (equal within the interval), but by chance', async () => {
    // Ten pairs of cohorts drawn alike: the two intervals together hold 95 %, so about one pair in twenty
    // gets a verdict by chance; more than two of ten would be an interval too narrow for its confidence.
    const results: CompareResult[] = [];
    for (let i = 0; i < 10; i++) results.push(await compareCohorts({ ...stable, seed: 100 + i }, { ...stable, cohort: 'canary', seed: 200 + i }));
    const verdicts = results.filter((r) => r.tighter !== null);
    expect(verdicts.length).toBeLessThanOrEqual(2);
    const r = results.find((x) => x.tighter === null) as CompareResult;
    expect(r.verdict).toMatch(/^no verdict: the two σ are equal within their intervals/);
    for (const i of [r.latencyStddevRatio, r.p99DriftStddevRatio]) {
      expect(i?.low).toBeLessThan(1);
      expect(i?.high).toBeGreaterThan(1);
    }
  });

  it("rejects a change 12 % faster on the mean whose variance is wider (the article's example)", async () => {
    const faster: Cohort = { cohort: 'canary', meanMs: 132, sigmaMs: 7, windowSigmaMs: 3.5, seed: 14 };
    const r = await compareCohorts(stable, faster);
    expect(r.meanLatencyChange?.estimate).toBeCloseTo(-0.12, 2);
    expect(r.meanLatencyChange?.high).toBeLessThan(0);
    expect(r.tighter).toBe('a');
    expect(r.verdict).toMatch(/reject b/);
  });

  it('reproduces the same interval with the same seed, and another with another seed', async () => {
    const twin: Cohort = { ...stable, cohort: 'canary', seed: 15 };
    const path = file(lines([stable, twin]));
    const input = { kind: 'selectors' as const, files: [path], a: [{ label: 'cohort' as const, value: 'stable' }], b: [{ label: 'cohort' as const, value: 'canary' }] };
    const first = await compareGroups(defaultConfig(), input, OPTIONS);
    const again = await compareGroups(defaultConfig(), input, OPTIONS);
    const other = await compareGroups(defaultConfig(), input, { ...OPTIONS, seed: 2 });
    expect(again.latencyStddevRatio).toEqual(first.latencyStddevRatio);
    expect(again.p99DriftStddevRatio).toEqual(first.p99DriftStddevRatio);
    expect(other.latencyStddevRatio?.estimate).toBe(first.latencyStddevRatio?.estimate);
    expect(other.latencyStddevRatio?.low).not.toBe(first.latencyStddevRatio?.low);
  });

  it('compares two files, each a group', async () => {
    const a = file(lines([stable]));
    const b = file(lines([{ cohort: 'stable', meanMs: 150, sigmaMs: 6, windowSigmaMs: 3, seed: 16 }]));
    const r = await compareGroups(defaultConfig(), { kind: 'files', a, b }, OPTIONS);
    expect(r.a.group).toBe(a);
    expect(r.tighter).toBe('a');
    expect(r.inputs).toHaveLength(2);
  });

  it('gives no verdict, without failing, on too few windows', async () => {
    const path = file(lines([stable, { ...stable, cohort: 'canary', seed: 17 }], 4));
    const out: string[] = [];
    const code = await runCompare(
      defaultConfig(),
      args({ files: [path], a: 'cohort=stable', b: 'cohort=canary' }),
      (t) => void out.push(t),
      () => {},
      NOW,
    );
    expect(code).toBe(0);
    const r = JSON.parse(out.join('')) as CompareResult;
    expect(r.tighter).toBeNull();
    expect(r.verdict).toMatch(/too few windows \(a has 4, b has 4; at least 10/);
  });

  it('states the method in the text output', async () => {
    const path = file(lines([stable, { ...stable, cohort: 'canary', seed: 18 }], 12));
    const out: string[] = [];
    await runCompare(
      defaultConfig(),
      args({ files: [path], a: 'cohort=stable', b: 'cohort=canary', format: 'text', iterations: '500' }),
      (t) => void out.push(t),
      () => {},
      NOW,
    );
    const text = out.join('');
    expect(text).toMatch(/^method: percentile bootstrap over disjoint windows/);
    expect(text).toMatch(/no t-test/);
    expect(text).toMatch(/500 resamples, seed 1/);
    expect(text).toMatch(/\nverdict: /);
  });

  describe('refuses selectors it cannot use (exit 2)', () => {
    const path = file(lines([stable, { ...stable, cohort: 'canary', seed: 19 }], 2, 50));
    const cases: [string, Partial<CompareArgs>, RegExp][] = [
      ['not LABEL=VALUE', { a: 'stable', b: 'cohort=canary' }, /--a: "stable" is not LABEL=VALUE with LABEL one of cohort, model, route/],
      ['an unknown label', { a: 'cohort=stable', b: 'region=eu' }, /--b: "region=eu" is not LABEL=VALUE/],
      ['only one side', { a: 'cohort=stable' }, /needs both --a and --b \(only --a was given\)/],
      ['the same group twice', { a: 'cohort=stable', b: 'cohort=stable' }, /select the same group/],
      ['a value no record has', { a: 'cohort=stable', b: 'cohort=canry' }, /--b cohort=canry matches no record of the input/],
      ['overlapping groups', { a: 'cohort=stable', b: 'model=claude-opus-4' }, /overlap: \d+ records match both/],
      ['no selector and one file', {}, /or exactly two FILEs to compare; got 1 FILE\(s\)/],
    ];
    for (const [name, given, message] of cases) {
      it(name, async () => {
        const run = runCompare(
          defaultConfig(),
          args({ files: [path], ...given }),
          () => {},
          () => {},
          NOW,
        );
        await expect(run).rejects.toThrow(UsageError);
        await expect(run).rejects.toThrow(message);
      });
    }
  });
});

function args(given: Partial<CompareArgs>): CompareArgs {
  return { files: [], format: 'json', a: undefined, b: undefined, window: undefined, iterations: undefined, seed: undefined, ...given };
}
