// Lines read from bytes are counted in batches (pipeline.ts, COUNT_BATCH), never out of order and never
// left uncounted once their chunk is pushed: what a scrape or a checkpoint reads matches what was read.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { Pipeline } from '../../../src/pipeline.js';
import { WATCH_LINES } from '../../../src/record/input-watch.js';
import { LineSplitter } from '../../../src/source/line-splitter.js';

const line = (model: string, i = 0) =>
  `{"ts":"2026-11-01T00:00:${String(i % 60).padStart(2, '0')}.000Z","latency_ms":${100 + (i % 7)},"status":200,"model":"${model}","route":"/v1/messages","response_headers":{"x-anthropic-layer-id":"zero-plane-v1"}}`;

/** Models with a series of their own in zero_plane_requests_total (the others went to __other__). */
function models(p: Pipeline): string[] {
  return [...new Set([...p.metrics.requests.entries()].map(([labels]) => labels[2] as string))].sort();
}

// Two model values may have their own series: "warm" and the one counted first after it.
const ONE_MODEL = parseConfig('metrics:\n  labelValueLimit: 2\n', 'test.yml');

/**
 * A source's first WATCH_LINES lines are counted one by one while their watch runs (record/input-watch.ts);
 * batching starts after them.
 */
function warm(p: Pipeline, source: string): void {
  for (let i = 0; i < WATCH_LINES; i++) p.line(line('warm', i), source);
}

describe('counting in batches keeps the order lines were read in', () => {
  it('a line given as text after lines given as bytes is counted after them', () => {
    const p = new Pipeline(ONE_MODEL);
    warm(p, 'gw');
    const bytes = Buffer.from(line('model-a'));
    p.lineBytes(bytes, 0, bytes.length, 'gw');
    p.line(line('model-b'), 'gw');
    expect(models(p)).toEqual(['__other__', 'model-a', 'warm']);
    expect(p.metrics.lines.sum()).toBe(WATCH_LINES + 2);
  });

  it('an oversize line and the end of a chunk count what was parsed before them first', () => {
    const p = new Pipeline(ONE_MODEL);
    warm(p, 'gw');
    const a = Buffer.from(line('model-a'));
    p.lineBytes(a, 0, a.length, 'gw');
    p.oversize('gw');
    expect(p.metrics.lines.sum()).toBe(WATCH_LINES + 2);
    expect(p.metrics.parseErrors.get(['too_long'])).toBe(1);
    expect(models(p)).toEqual(['model-a', 'warm']);
    const b = Buffer.from(line('model-b'));
    p.lineBytes(b, 0, b.length, 'gw');
    p.chunkEnd();
    expect(models(p)).toEqual(['__other__', 'model-a', 'warm']);
  });

  it('lines from two sources keep their interleaving', () => {
    const p = new Pipeline(ONE_MODEL);
    warm(p, 'one');
    warm(p, 'two');
    const first = Buffer.from(line('model-b'));
    const second = Buffer.from(line('model-a'));
    p.lineBytes(first, 0, first.length, 'one');
    p.lineBytes(second, 0, second.length, 'two');
    p.chunkEnd();
    expect(models(p)).toEqual(['__other__', 'model-b', 'warm']);
    expect(p.metrics.lines.get(['one'])).toBe(WATCH_LINES + 1);
    expect(p.metrics.lines.get(['two'])).toBe(WATCH_LINES + 1);
  });
});

describe('every line of a pushed chunk is counted when push returns', () => {
  it.each([1, 63, 64, 65, 129, 1000])('%i lines, in chunks cut anywhere', (n) => {
    const p = new Pipeline(parseConfig('', 'test.yml'));
    warm(p, 'gw');
    const splitter = new LineSplitter(64 * 1024, p, 'gw');
    const text = Buffer.from(Array.from({ length: n }, (_, i) => `${line(`m${i % 3}`, i)}\n`).join(''));
    // Cut mid-line too: the part after the last newline is held, not counted.
    const cut = Math.floor(text.length * 0.6) + 1;
    splitter.push(text.subarray(0, cut));
    const before = text.subarray(0, cut).toString().split('\n').length - 1;
    expect(p.metrics.lines.sum()).toBe(WATCH_LINES + before);
    splitter.push(text.subarray(cut));
    expect(p.metrics.lines.sum()).toBe(WATCH_LINES + n);
    expect(p.metrics.requests.sum()).toBe(WATCH_LINES + n);
  });
});
