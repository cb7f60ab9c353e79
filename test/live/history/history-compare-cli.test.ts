// `compare` as users run it (the built CLI, a child process): exit 0 with a verdict and without one
// (no verdict is an answer, not an error), exit 2 with a clear message for selectors it cannot use, the
// same output for the same seed, stdin as the input, and SIGINT while it waits on a FIFO: 130, nothing printed.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { createRng, standardNormal } from '../../../src/simulate/random.js';

const START = Date.UTC(2026, 0, 1);
const WINDOW = 300_000;

/** 12 windows of 5 m, 250 Zero-Plane requests of each cohort per window: latency mean 150 ms, σ per cohort. */
function log(sigmas: Record<string, number>): string {
  const out: [number, string][] = [];
  for (const [cohort, sigma] of Object.entries(sigmas)) {
    const rng = createRng(cohort.length * 7 + sigma);
    for (let w = 0; w < 12; w++) {
      const mean = 150 + (sigma / 2) * standardNormal(rng);
      for (let i = 0; i < 250; i++) {
        const t = START + w * WINDOW + i * 1200;
        const ms = Number((mean + sigma * standardNormal(rng)).toFixed(3));
        out.push([
          t,
          JSON.stringify({ ts: new Date(t).toISOString(), latency_ms: ms, status: 200, model: 'm', route: '/v1/messages', cohort, response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } }),
        ]);
      }
    }
  }
  return `${out
    .sort((a, b) => a[0] - b[0])
    .map(([, line]) => line)
    .join('\n')}\n`;
}

let dir: string;
let file: string;
beforeAll(() => {
  dir = tempDir('zp-compare-cli-');
  file = join(dir, 'cohorts.ndjson');
  writeFileSync(file, log({ stable: 3, canary: 8 }));
});

describe('compare (CLI)', () => {
  it('exits 0 with a verdict, and prints the same figures for the same seed', () => {
    const r = runCli(['compare', '--format', 'json', '--a', 'cohort=stable', '--b', 'cohort=canary', file]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { tighter: string; method: string; latencyStddevRatio: { low: number } };
    expect(out.tighter).toBe('a');
    expect(out.method).toMatch(/percentile bootstrap/);
    expect(out.latencyStddevRatio.low).toBeGreaterThan(1);
    expect(runCli(['compare', '--format', 'json', '--a', 'cohort=stable', '--b', 'cohort=canary', file]).stdout).toBe(r.stdout);
  });

  it('exits 0 without a verdict (too few windows), reading stdin', () => {
    const r = runCli(['compare', '--a', 'cohort=stable', '--b', 'cohort=canary', '--window', '1h', '-'], log({ stable: 3, canary: 3 }));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\nverdict: no verdict: too few windows/);
  });

  it('exits 2 naming the selector that matches nothing', () => {
    const r = runCli(['compare', '--a', 'cohort=stable', '--b', 'cohort=canry', file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--b cohort=canry matches no record of the input \(6000 records; values seen: cohort canary, stable\)/);
  });

  it('exits 2 on a selector that is not LABEL=VALUE, and on a bad --window', () => {
    const bad = runCli(['compare', '--a', 'tier=gold', '--b', 'cohort=canary', file]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--a: "tier=gold" is not LABEL=VALUE with LABEL one of cohort, model, route/);
    const window = runCli(['compare', '--a', 'cohort=stable', '--b', 'cohort=canary', '--window', '90ms', file]);
    expect(window.code).toBe(2);
    expect(window.stderr).toMatch(/--window: "90ms" is not a duration/);
  });

  it('SIGINT while it waits on a FIFO whose writer stays open: exit 130 at once, nothing printed', async () => {
    const fifo = join(dir, 'compare.fifo');
    const made = spawnSync('mkfifo', [fifo]);
    expect(made.status, String(made.stderr)).toBe(0);
    const child = spawn(process.execPath, [BIN, 'compare', '--a', 'cohort=stable', '--b', 'cohort=canary', fifo], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const ended = new Promise<number | null>((resolve) => child.once('exit', (code, sig) => resolve(code ?? (sig === 'SIGINT' ? 130 : null))));
    // Blocks until compare opens the FIFO, and returns once it has read all but a pipe buffer (the log is ~1.5 MB).
    const w = openSync(fifo, 'w');
    try {
      writeFileSync(w, log({ stable: 3, canary: 8 }));
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await ended;
      clearTimeout(timer);
      expect(code).toBe(130);
      expect(stdout).toBe('');
    } finally {
      closeSync(w);
    }
  });
});
