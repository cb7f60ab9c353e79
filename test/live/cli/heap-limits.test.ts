// The exporter holds V8's heap to its bounds (cli/heap-limits.ts), run with plain `node`, and leaves a bound
// alone when the user gives node its flag. On real processes: `serve`'s young generation read
// from prom-client's nodejs_heap_space_size_total_bytes{space="new"}, scraped while it reads a log; the old
// generation's growth from a child process that promotes garbage with and without the limits.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeFlagGiven, SEMI_SPACE_MIB } from '../../../src/cli/heap-limits.js';
import { startServe, type Launch, type ServeProcess } from '../../helpers/cli-process.js';
import { parseSamples } from '../../helpers/exposition.js';
import { tempDir } from '../../helpers/temp-dir.js';

const MiB = 1 << 20;
const LINES = 200_000;

const running: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

function writeLog(path: string): void {
  const lines: string[] = [];
  for (let i = 0; i < LINES; i++) {
    const hit = i % 50 !== 0;
    lines.push(
      `{"ts":${1_714_564_800 + i / 1000},"latency_ms":${150 + (i % 61)},"status":200,"model":"model-${i % 3}","route":"/v1/messages",` +
        `"response_headers":{"x-anthropic-layer-id":"${hit ? 'zero-plane-v1' : 'standard'}","x-anthropic-delay-profile":"warmup=${i % 9 === 0 ? 'miss' : 'hit'}, degraded=?0, mode=balanced"}}`,
    );
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/** The largest young generation /metrics showed while `serve` read the whole log (scraped back to back). */
async function youngGenerationWhileReading(log: string, launch?: Launch): Promise<number> {
  const s = await startServe(['--tail.start-at=start', log], 15_000, launch);
  running.push(s);
  let largest = 0;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const samples = parseSamples(await (await fetch(`${s.url}/metrics`)).text());
    const young = samples.find((x) => x.name === 'nodejs_heap_space_size_total_bytes' && x.labels.space === 'new');
    expect(young).toBeDefined();
    largest = Math.max(largest, young?.value ?? 0);
    const read = samples.filter((x) => x.name === 'zero_plane_exporter_lines_total').reduce((sum, x) => sum + x.value, 0);
    if (read >= LINES) return largest;
    if (Date.now() > deadline) throw new Error(`serve read ${read} of ${LINES} lines in 60 s`);
  }
}

describe('serve keeps the young generation small', () => {
  it(`stays at 2 × ${SEMI_SPACE_MIB} MiB while it reads ${LINES.toLocaleString('en')} lines; a user's --max-semi-space-size=16 is left alone`, async () => {
    const dir = tempDir('zp-young-');
    const log = join(dir, 'gateway.ndjson');
    writeLog(log);
    const capped = await youngGenerationWhileReading(log);
    expect(capped).toBeGreaterThan(0);
    expect(capped).toBeLessThanOrEqual(2 * SEMI_SPACE_MIB * MiB);
    // The same reading with the user's own flag (V8's default maximum): it grows past the cap, so the
    // figure above is the cap's doing, not a load too light to grow it.
    const own = await youngGenerationWhileReading(log, (argv) => ['env', ['NODE_OPTIONS=--max-semi-space-size=16', ...argv]]);
    expect(own).toBeGreaterThan(2 * SEMI_SPACE_MIB * MiB);
  }, 150_000);

  it('knows a flag in node’s arguments and in NODE_OPTIONS, in either spelling', () => {
    expect(nodeFlagGiven('max-semi-space-size', ['--max-semi-space-size=8'], undefined)).toBe(true);
    expect(nodeFlagGiven('max-semi-space-size', ['--max_semi_space_size', '8'], undefined)).toBe(true);
    expect(nodeFlagGiven('max-semi-space-size', [], '--enable-source-maps --max-semi-space-size=2')).toBe(true);
    expect(nodeFlagGiven('max-semi-space-size', ['--max-old-space-size=512'], '--max-semi-space-sizes=2')).toBe(false);
    expect(nodeFlagGiven('heap-growing-percent', ['--heap_growing_percent=0'], undefined)).toBe(true);
    expect(nodeFlagGiven('heap-growing-percent', [], undefined)).toBe(false);
  });
});

/**
 * A child that keeps 100k objects and then makes 2M more, each kept for the next 40k (so it outlives two
 * young-generation collections and is promoted, then dies): the most the old generation held, in bytes.
 */
function peakOldGeneration(dir: string, opts: { limit: boolean; nodeArgs?: string[] }): number {
  const script = join(dir, 'promote.mjs');
  const limits = pathToFileURL(new URL('../../../dist/cli/heap-limits.js', import.meta.url).pathname).href;
  writeFileSync(
    script,
    `import v8 from 'node:v8';\n` +
      `if (${opts.limit}) (await import(${JSON.stringify(limits)})).limitHeap({ oneShot: true });\n` +
      `const live = Array.from({ length: 100_000 }, (_, i) => ({ i, s: 'live-' + i }));\n` +
      `const ring = new Array(40_000);\n` +
      `let peak = 0;\n` +
      `for (let i = 0; i < 2_000_000; i++) {\n` +
      `  ring[i % ring.length] = { i, s: ('garbage-' + i + '-').padEnd(48, 'x') };\n` +
      `  if (i % 5_000 === 0) peak = Math.max(peak, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size);\n` +
      `}\n` +
      `process.stdout.write(JSON.stringify({ peak, live: live.length }));\n`,
  );
  const r = spawnSync(process.execPath, [...(opts.nodeArgs ?? []), script], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { peak: number }).peak;
}

describe('in one-shot commands the old generation is collected before it grows by half again', () => {
  it('garbage promoted by a long run peaks lower with the limits; a user’s --heap-growing-percent is left alone', () => {
    const dir = tempDir('zp-heap-');
    const plain = peakOldGeneration(dir, { limit: false });
    const limited = peakOldGeneration(dir, { limit: true });
    const own = peakOldGeneration(dir, { limit: true, nodeArgs: ['--heap-growing-percent=0'] });
    // V8's own heuristics let this workload's old generation grow to ~100 MB; with the limits ~half.
    expect(limited).toBeLessThan(plain * 0.75);
    expect(own).toBeGreaterThan(plain * 0.75);
  }, 60_000);
});
