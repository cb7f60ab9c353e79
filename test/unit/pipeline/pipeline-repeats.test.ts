// The pipeline feeds the repeated-prompts top-k: a record's prompt hash with whether its answer was cached
// (headers.cached, read by the classifier, so a renamed header counts too), through both parse paths;
// records without a hash, or with a value that is no hash, are not counted there. The top becomes the
// rank-labelled gauges of metrics/repeat-gauges.ts, bounded by repeats.top.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { RepeatGauges } from '../../../src/metrics/repeat-gauges.js';
import { Pipeline } from '../../../src/pipeline.js';

const CLOCK = () => 1_764_669_600_000;
const line = (hash: unknown, cached: boolean, header = 'x-anthropic-cached') =>
  JSON.stringify({
    latency_ms: 180,
    status: 200,
    response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1', ...(cached ? { [header]: 'true' } : {}) },
    ...(hash === undefined ? {} : { prompt_hash: hash }),
  });

describe('pipeline: repeated prompts', () => {
  it('counts hashes with their cached answers, from text and from bytes', () => {
    const p = new Pipeline(parseConfig('repeats:\n  k: 10\n  top: 2\n', 'zp.yml'), { clock: CLOCK });
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(32);
    p.line(line(a, true), 'gw');
    p.line(line(a, false), 'gw');
    const bytes = Buffer.from(`${line(a, true)}\n${line(b, false)}\n${line('c'.repeat(32), false)}\n${line(undefined, true)}\n${line('not a hash!', true)}\n`);
    let start = 0;
    for (let end = bytes.indexOf(10); end !== -1; start = end + 1, end = bytes.indexOf(10, start)) p.lineBytes(bytes, start, end, 'gw');
    p.chunkEnd();
    expect(p.metrics.requests.sum()).toBe(7);
    expect(p.repeats.requests).toBe(5);
    expect(p.repeats.cached).toBe(2);
    expect(p.repeats.rows(10).map((r) => [r.hash, r.count, r.cached])).toEqual([
      [a, 3, 2],
      [b, 1, 0],
      ['c'.repeat(32), 1, 0],
    ]);

    const gauges = new RepeatGauges(p.repeats, 2);
    gauges.refresh();
    const text = gauges
      .families()
      .map((f) => f.text())
      .join('\n');
    expect(gauges.info.size).toBe(2);
    expect(text).toContain(`zero_plane_repeated_prompt_info{rank="1",prompt_hash="${a}"} 1`);
    expect(text).toContain(`zero_plane_repeated_prompt_info{rank="2",prompt_hash="${b}"} 1`);
    expect(text).toContain('zero_plane_repeated_prompt_requests{rank="1"} 3');
    expect(text).toMatch(/zero_plane_repeated_prompt_cached_ratio\{rank="1"\} 0\.666/);
    expect(text).not.toContain('c'.repeat(32));
  });

  it('reads "cached" from the configured header', () => {
    const p = new Pipeline(parseConfig('headers:\n  cached:\n    name: X-Cache-Hit\n', 'zp.yml'), { clock: CLOCK });
    p.line(line('d'.repeat(32), true, 'x-cache-hit'), 'gw');
    p.line(line('d'.repeat(32), true), 'gw');
    expect(p.repeats.rows(1)[0]).toMatchObject({ count: 2, cached: 1 });
  });

  it('the gauges say nothing while no hash was seen', () => {
    const p = new Pipeline(parseConfig('', 'zp.yml'), { clock: CLOCK });
    p.line(line(undefined, true), 'gw');
    const gauges = new RepeatGauges(p.repeats, 10);
    gauges.refresh();
    expect(gauges.families().map((f) => f.size)).toEqual([0, 0, 0]);
  });
});
