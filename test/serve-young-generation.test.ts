// `serve` keeps V8's young generation at 2 × 4 MiB, run with plain `node` (Node's default grows it to
// 2 × 16 MiB under steady traffic, ~24 MiB of RSS for nothing), and leaves it alone when the user sets
// --max-semi-space-size. Read from the outside, on real processes: prom-client's
// nodejs_heap_space_size_total_bytes{space="new"}, scraped while each one reads the same log.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { semiSpaceSetByUser, SEMI_SPACE_MIB } from '../src/cli/young-generation.js';
import { startServe, type Launch, type ServeProcess } from './helpers/cli-process.js';
import { parseSamples } from './helpers/exposition.js';
import { tempDir } from './helpers/temp-dir.js';

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

  it('knows the flag in node’s arguments and in NODE_OPTIONS, in either spelling', () => {
    expect(semiSpaceSetByUser(['--max-semi-space-size=8'], undefined)).toBe(true);
    expect(semiSpaceSetByUser(['--max_semi_space_size', '8'], undefined)).toBe(true);
    expect(semiSpaceSetByUser([], '--enable-source-maps --max-semi-space-size=2')).toBe(true);
    expect(semiSpaceSetByUser(['--max-old-space-size=512'], '--max-semi-space-sizes=2')).toBe(false);
    expect(semiSpaceSetByUser([], undefined)).toBe(false);
  });
});
