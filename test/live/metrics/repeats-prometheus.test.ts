// A real Prometheus scraping serve's repeated-prompt gauges: the join docs/repeats.md gives (requests by
// rank, the hash from the info series) answers each top hash with its count, and the value series keep
// their label sets (rank only) when the ranking changes.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { startPrometheus, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-repeats-prom-');
const log = join(dir, 'gateway.log');
let server: ServeProcess;
let prometheus: Daemon | undefined;
let promUrl = '';

const hash = (c: string) => c.repeat(32);
const lines = (h: string, n: number) =>
  Array.from({ length: n }, () => `${JSON.stringify({ ts: Date.now() / 1000, latency_ms: 181, status: 200, response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' }, prompt_hash: h })}\n`).join(
    '',
  );

type Sample = { metric: Record<string, string>; value: [number, string] };
async function query(expr: string): Promise<Sample[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`, { signal: AbortSignal.timeout(5_000) });
  // An error (a join across a scrape where a hash just moved rank, before its old series is marked stale) reads as no answer yet.
  return ((await res.json()) as { data?: { result: Sample[] } }).data?.result ?? [];
}
const JOIN = 'zero_plane_repeated_prompt_requests * on (rank) group_left (prompt_hash) zero_plane_repeated_prompt_info';
const byRank = (r: Sample[]) => Object.fromEntries(r.map((s) => [s.metric.rank, [s.metric.prompt_hash, Number(s.value[1])]]));

beforeAll(async () => {
  writeFileSync(log, '');
  writeFileSync(join(dir, 'zp.yml'), 'repeats:\n  top: 2\n');
  server = await startServe([`--config.file=${join(dir, 'zp.yml')}`, log]);
  appendFileSync(log, lines(hash('a'), 3) + lines(hash('b'), 2) + lines(hash('c'), 1));
  const started = await startPrometheus(requireBinary('prometheus'), { dir, rules: 'groups: []\n', scrapeTarget: server.url.replace('http://', '') });
  promUrl = started.url;
  prometheus = started.daemon;
}, 40_000);

afterAll(async () => {
  await prometheus?.stop();
  await server?.stop('SIGKILL');
});

describe('repeated prompts in Prometheus', () => {
  it('the documented join gives each top hash with its count; the value series stay labelled by rank alone', async () => {
    const first = await waitFor(
      async () => {
        const r = byRank(await query(JOIN));
        return r['1']?.[1] === 3 && r['2']?.[1] === 2 ? r : undefined;
      },
      30_000,
      'the top 2 in Prometheus',
    );
    expect(first).toEqual({ '1': [hash('a'), 3], '2': [hash('b'), 2] });
    // c overtakes both: the hashes move between ranks, the value series are the same two.
    appendFileSync(log, lines(hash('c'), 4));
    const second = await waitFor(
      async () => {
        const r = byRank(await query(JOIN));
        return r['1']?.[0] === hash('c') && r['1']?.[1] === 5 ? r : undefined;
      },
      30_000,
      'c at rank 1',
    );
    expect(second).toEqual({ '1': [hash('c'), 5], '2': [hash('a'), 3] });
    const series = await query('count(zero_plane_repeated_prompt_requests)');
    expect(Number(series[0]?.value[1])).toBe(2);
  });
});
