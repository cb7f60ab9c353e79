// `report --by cohort` through the built CLI, on a generated log with two cohorts of known, different
// latency σ and hit rates: each group's figures equal what this test computes from the lines it wrote,
// on one thread and on two, and the whole-input figures are those of the same report without --by.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** The default config's p99 baseline (signals.baselineSeconds). */
const BASELINE = 0.185;

interface Req {
  cohort: string;
  ms: number;
  hit: boolean;
  warmup?: 'hit' | 'miss';
  degraded: boolean;
}

/**
 * stable: 600 requests, 1 in 20 off the fast layer, latencies 178–182 ms (σ ≈ 1.4 ms), warm-up 9 of 10;
 * canary: 150 requests, 1 in 5 off the fast layer, latencies 150–250 ms (σ ≈ 29 ms), warm-up 3 of 4, 3 degraded.
 */
function mix(): Req[] {
  const out: Req[] = [];
  for (let i = 0; i < 600; i++) {
    const hit = i % 20 !== 7;
    out.push({ cohort: 'stable', ms: 180 + ((i * 7) % 5) - 2, hit, ...(hit ? { warmup: i % 10 === 3 ? 'miss' : 'hit' } : {}), degraded: false });
    if (i % 4 === 0) {
      const j = i / 4;
      const chit = j % 5 !== 2;
      out.push({ cohort: 'canary', ms: 150 + ((j * 37) % 101), hit: chit, ...(chit ? { warmup: j % 4 === 1 ? 'miss' : 'hit' } : {}), degraded: j % 50 === 9 });
    }
  }
  return out;
}

function line(r: Req, i: number): string {
  const profile = [r.warmup === undefined ? undefined : `warmup=${r.warmup}`, `degraded=?${r.degraded ? 1 : 0}`].filter((p) => p !== undefined).join(', ');
  return JSON.stringify({
    ts: new Date(Date.UTC(2026, 10, 1) + i * 100).toISOString(),
    latency_ms: r.ms,
    status: 200,
    model: 'claude-3',
    route: '/v1/messages',
    cohort: r.cohort,
    response_headers: { 'x-anthropic-layer-id': r.hit ? 'zero-plane-v1' : 'standard-v3', 'x-anthropic-delay-profile': profile },
    request_headers: { 'x-anthropic-experimental': 'zero-plane-2024' },
  });
}

function expected(reqs: Req[]) {
  const hits = reqs.filter((r) => r.hit);
  const lat = hits.map((r) => r.ms / 1000).sort((a, b) => a - b);
  const rank = (q: number) => lat[Math.max(1, Math.ceil(q * lat.length)) - 1] as number;
  const mean = lat.reduce((a, b) => a + b, 0) / lat.length;
  const warmHits = hits.filter((r) => r.warmup === 'hit').length;
  return {
    requests: reqs.length,
    hits: hits.length,
    hitRate: hits.length / reqs.length,
    degradedCount: reqs.filter((r) => r.degraded).length,
    warmupEfficiency: warmHits / hits.filter((r) => r.warmup !== undefined).length,
    p50Seconds: rank(0.5),
    p99Seconds: rank(0.99),
    p999Seconds: rank(0.999),
    stddevSeconds: Math.sqrt(lat.reduce((a, x) => a + (x - mean) ** 2, 0) / lat.length),
  };
}

type Json = Record<string, unknown>;

function report(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [BIN, 'report', ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('report --by cohort (built CLI)', () => {
  const reqs = mix();
  const dir = tempDir('zp-report-by-');
  const log = join(dir, 'cohorts.log');
  writeFileSync(log, reqs.map(line).join('\n') + '\n');
  const want = { stable: expected(reqs.filter((r) => r.cohort === 'stable')), canary: expected(reqs.filter((r) => r.cohort === 'canary')) };

  it('the mix is what it claims: σ and hit rates differ between the cohorts', () => {
    expect(want.canary.stddevSeconds).toBeGreaterThan(10 * want.stable.stddevSeconds);
    expect(want.stable.hitRate).toBe(0.95);
    expect(want.canary.hitRate).toBe(0.8);
  });

  // One thread, then two (a split at the file's middle; the groups merge like the totals).
  for (const [name, env] of [
    ['one thread', {}],
    ['two threads', { ZP_REPORT_PARALLEL_MIN_BYTES: '0' }],
  ] as const) {
    it(`each group's figures equal those computed from the lines (${name})`, () => {
      const r = report(['--by', 'cohort', '--format', 'json', '--log.level=debug', log], env);
      expect(r.stderr).not.toMatch(/"level":"(error|warn)"/);
      expect(r.code).toBe(0);
      // Two threads that merged, not the one-thread fallback for label limits.
      if (name === 'two threads') expect(r.stderr).toContain('report: 2 threads');
      expect(r.stderr).not.toContain('would not merge exactly');
      const json = JSON.parse(r.stdout) as Json & { groups: (Json & { value: string })[] };
      expect(json.groupBy).toBe('cohort');
      // Sorted by request count: stable (600) before canary (150).
      expect(json.groups.map((g) => g.value)).toEqual(['stable', 'canary']);
      for (const g of json.groups) {
        const w = want[g.value as 'stable' | 'canary'];
        for (const key of ['requests', 'hits', 'hitRate', 'degradedCount', 'warmupEfficiency'] as const) expect(g[key], `${g.value} ${key}`).toBe(w[key]);
        // Quantiles from the DDSketch (0.5 % relative accuracy), σ from merged moments (float rounding).
        for (const key of ['p50Seconds', 'p99Seconds', 'p999Seconds'] as const) expect(Math.abs((g[key] as number) - w[key]), `${g.value} ${key}`).toBeLessThanOrEqual(w[key] * 0.005);
        expect(g.stddevSeconds as number).toBeCloseTo(w.stddevSeconds, 9);
        expect(Math.abs((g.p99Drift as number) - (w.p99Seconds - BASELINE) / BASELINE)).toBeLessThanOrEqual((w.p99Seconds / BASELINE) * 0.005);
      }
    });
  }

  it('the whole-input figures are those of the report without --by (the groups are additive)', () => {
    const plain = report(['--format', 'json', log]);
    const grouped = report(['--by', 'cohort', '--format', 'json', log]);
    expect(plain.code).toBe(0);
    const { groups, groupBy, ...rest } = JSON.parse(grouped.stdout) as Json;
    expect(groups).toBeDefined();
    expect(groupBy).toBe('cohort');
    expect(rest).toEqual(JSON.parse(plain.stdout));
    expect(plain.stdout).not.toContain('"groups"');
  });

  it('the text format prints one row per cohort with its hit rate and σ', () => {
    const r = report(['--by=cohort', log]);
    expect(r.code).toBe(0);
    const rows = r.stdout.slice(r.stdout.indexOf('by cohort: 2 groups')).split('\n');
    expect(rows[1]).toMatch(/^cohort\s+requests\s+hit rate\s+p99 drift\s+degraded\s+warm-up\s+p50\s+p99\s+p99\.9\s+σ$/);
    const [stable, canary] = [rows[2] as string, rows[3] as string];
    expect(stable).toMatch(/^stable\s+600\s+95\.00 %/);
    expect(canary).toMatch(/^canary\s+150\s+80\.00 %/);
    expect(stable.endsWith(`${(want.stable.stddevSeconds * 1000).toFixed(2)} ms`)).toBe(true);
    expect(canary.endsWith(`${(want.canary.stddevSeconds * 1000).toFixed(2)} ms`)).toBe(true);
  });

  it('a bad --by exits 2 naming the flag and the allowed values, printing no report', () => {
    const r = report(['--by', 'tenant', '--format', 'json', log]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--by must be one of cohort, model, route, not "tenant"');
    expect(r.stdout).toBe('');
  });
});
