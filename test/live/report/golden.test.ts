// Golden whole-pipeline tests, mtail-style: every test/golden/NAME.ndjson is a gateway log, NAME.json the
// `report --format json` object worked out by hand from it, NAME.yml (optional) the config to read it with.
// See test/golden/README.md for what each case proves.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { Pipeline } from '../../../src/pipeline.js';
import { buildReport } from '../../../src/report/build-report.js';
import { readInput } from '../../../src/source/read-input.js';
import { tempDir } from '../../helpers/temp-dir.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const GOLDEN = join(ROOT, 'test', 'golden');
const CLI = join(ROOT, 'bin', 'zero-plane-exporter.js');

/** Quantiles come from a DDSketch and σ from running moments: compared within 0.5 % relative error. */
const FLOAT_FIELDS = ['hitRate', 'p50Seconds', 'p99Seconds', 'p999Seconds', 'stddevSeconds', 'p99Drift', 'warmupEfficiency'] as const;
/**
 * Compared only in the cases whose expected file has them (worked out by hand there), numbers within 1e-9
 * relative: sections added to the report later, so that every case need not be worked out again at once.
 */
const OPTIONAL_FIELDS = ['capacity'] as const;
const RELATIVE_TOLERANCE = 0.005;
/** Room for float noise when the expected value is exactly 0 (σ of identical latencies). */
const ABSOLUTE_SLACK = 1e-12;

interface Case {
  name: string;
  log: string;
  expected: string;
  config: string | undefined;
}

function cases(): Case[] {
  return readdirSync(GOLDEN)
    .filter((f) => f.endsWith('.ndjson'))
    .sort()
    .map((f) => {
      const name = f.slice(0, -'.ndjson'.length);
      const yml = join(GOLDEN, `${name}.yml`);
      return { name, log: join(GOLDEN, f), expected: join(GOLDEN, `${name}.json`), config: existsSync(yml) ? yml : undefined };
    });
}

type Json = Record<string, unknown>;

function readExpected(c: Case): Json {
  if (!existsSync(c.expected)) throw new Error(`${c.name}: no expected file ${c.expected}`);
  return JSON.parse(readFileSync(c.expected, 'utf8')) as Json;
}

/** Runs the real pipeline in-process, exactly as `report` does, and returns the report as JSON would carry it. */
async function runPipeline(c: Case): Promise<Json> {
  const config = loadConfig(c.config);
  const pipeline = new Pipeline(config, { keepTotals: true });
  await readInput(c.log, { maxLineBytes: config.input.maxLineBytes }, pipeline);
  pipeline.finish();
  return byFileName(JSON.parse(JSON.stringify(buildReport(pipeline, config))) as Json);
}

/** `input` is keyed by the path given; the expected files name the log alone. */
function byFileName(report: Json): Json {
  const input = report.input as Record<string, unknown>;
  return { ...report, input: Object.fromEntries(Object.entries(input).map(([path, preset]) => [basename(path), preset])) };
}

/**
 * Allowed error for one floating field. p99Drift = p99/baseline − 1, so a 0.5 % error on p99 is
 * 0.5 % of (1 + drift) on the drift — a tolerance relative to the drift itself would demand an exact
 * p99 whenever the drift is near 0 (the healthy case).
 */
function tolerance(field: (typeof FLOAT_FIELDS)[number], expected: number): number {
  const scale = field === 'p99Drift' ? 1 + expected : Math.abs(expected);
  return RELATIVE_TOLERANCE * scale + ABSOLUTE_SLACK;
}

/** Integers, counts, labels and nulls exactly; the floating fields within their tolerance. */
function expectReport(actual: Json, expected: Json, name: string): void {
  const exact = (o: Json) => Object.fromEntries(Object.entries(o).filter(([k]) => !(FLOAT_FIELDS as readonly string[]).includes(k) && !(OPTIONAL_FIELDS as readonly string[]).includes(k)));
  expect(exact(actual), `${name}: exact fields`).toEqual(exact(expected));
  for (const field of OPTIONAL_FIELDS) {
    expect(Object.hasOwn(actual, field), `${name}: report lacks ${field}`).toBe(true);
    if (!Object.hasOwn(expected, field)) continue;
    const want = expected[field] as Json;
    const got = actual[field] as Json;
    expect(Object.keys(got).sort(), `${name}: ${field} keys`).toEqual(Object.keys(want).sort());
    for (const [key, value] of Object.entries(want)) {
      if (typeof value === 'number' && !Number.isInteger(value)) expect(got[key], `${name}: ${field}.${key}`).toBeCloseTo(value, 9);
      else expect(got[key], `${name}: ${field}.${key}`).toEqual(value);
    }
  }
  for (const field of FLOAT_FIELDS) {
    expect(Object.hasOwn(expected, field), `${name}: expected file lacks ${field}`).toBe(true);
    expect(Object.hasOwn(actual, field), `${name}: report lacks ${field}`).toBe(true);
    const want = expected[field];
    const got = actual[field];
    if (want === null) {
      expect(got, `${name}: ${field}`).toBeNull();
      continue;
    }
    expect(typeof want, `${name}: expected ${field} must be a number or null`).toBe('number');
    expect(typeof got, `${name}: ${field} is ${JSON.stringify(got)}, expected ${want}`).toBe('number');
    const err = Math.abs((got as number) - (want as number));
    expect(err, `${name}: ${field} = ${got as number}, expected ${want as number}`).toBeLessThanOrEqual(tolerance(field, want as number));
  }
}

const all = cases();

describe('golden reports', () => {
  it('finds the golden cases, each with its expected report', () => {
    expect(all.length).toBeGreaterThanOrEqual(14);
    for (const c of all) expect(existsSync(c.expected), `${c.name}.json`).toBe(true);
  });

  it.each(all.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    expectReport(await runPipeline(c), readExpected(c), c.name);
  });
});

const execFileP = promisify(execFile);

async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run `npx tsc -p tsconfig.json` (npm test does) first');
  try {
    const { stdout, stderr } = await execFileP(process.execPath, [CLI, ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('golden reports through the built CLI', () => {
  const byName = (name: string): Case => {
    const c = all.find((x) => x.name === name);
    if (c === undefined) throw new Error(`no golden case ${name}`);
    return c;
  };

  it('`report --format json --config.file` prints the same report as the in-process pipeline', async () => {
    const c = byName('preset-nginx-json');
    expect(c.config).toBeDefined();
    const { code, stdout, stderr } = await runCli(['report', '--format', 'json', '--config.file', c.config as string, c.log]);
    // The log has no X-Cohort values: said once, naming the path.
    expect(stderr).toBe(`zero-plane-exporter: ${c.log}: label cohort: its path http_x_cohort held no value in the first 8 records, so cohort stays empty\n`);
    expect(code).toBe(0);
    expectReport(byFileName(JSON.parse(stdout) as Json), readExpected(c), `${c.name} (CLI)`);
  });

  it('`report --fail-on P0` exits 3 on the P0 case and still prints its report', async () => {
    const c = byName('p0-drift-with-degraded');
    const { code, stdout } = await runCli(['report', '--format', 'json', '--fail-on', 'P0', '--config.file', c.config as string, c.log]);
    expect(code).toBe(3);
    expectReport(byFileName(JSON.parse(stdout) as Json), readExpected(c), `${c.name} (CLI)`);
  });

  it('the traffic guard: `report --fail-on P0` exits 0 on a quiet window (10 requests, one slow and degraded) at the default minRequests', async () => {
    const c = byName('quiet-window');
    expect(c.config).toBeUndefined();
    expect((await runCli(['report', '--fail-on', 'P0', c.log])).code).toBe(0);
    // The same log with the guard at 1 is a P0: the guard, not the arithmetic, kept it quiet.
    const dir = tempDir('zp-golden-guard-');
    const cfg = join(dir, 'guard.yml');
    writeFileSync(cfg, 'alerts:\n  minRequests: 1\n');
    expect((await runCli(['report', '--fail-on', 'P0', '--config.file', cfg, c.log])).code).toBe(3);
  });
});
