// A million lines, each with a model, route, cohort and downgrade reason never seen before, through the
// pipeline in process (lines generated on the fly, no file). Series stay bounded by the label limit,
// the overflow counter counts every value folded into __other__ exactly, and the heap does not grow with
// the number of lines. Counts, not timings: the assertions hold on a slow machine as on a fast one.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import type { ExporterMetrics } from '../../../src/metrics/exporter-metrics.js';
import { OVERFLOW_VALUE } from '../../../src/metrics/label-limiter.js';
import { Pipeline } from '../../../src/pipeline.js';

const LINES = 1_000_000;
const BASELINE_AT = 100_000;
const MiB = 1 << 20;

/** A forced full GC: `global.gc` under --expose-gc, else the same function taken from a fresh V8 context. */
function forcedGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function heapAfterGc(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Line i: every label value and the downgrade reason are new; hits alternate; a few status classes. */
function line(i: number): string {
  return (
    `{"latency_ms":${150 + (i % 97)},"status":${i % 7 === 0 ? 503 : 200},"model":"model-${i}","route":"/v1/route/${i}",` +
    `"cohort":"cohort-${i}","response_headers":{"x-anthropic-layer-id":"${i % 2 === 0 ? 'zero-plane-v1' : 'standard'}",` +
    `"x-anthropic-delay-profile":"warmup=${i % 3 === 0 ? 'miss' : 'hit'}, degraded=?${i % 11 === 0 ? 1 : 0}, mode=balanced, id=${i}",` +
    `"x-anthropic-downgrade-reason":"reason_${i}"},"request_headers":{"x-anthropic-experimental":"zero-plane-2024-${i}"}}`
  );
}

type Family = ReturnType<ExporterMetrics['families']>[number];

/** Distinct label sets of a family (a histogram's buckets, sum and count are one series). */
function seriesOf(family: Family): Array<Record<string, string>> {
  const labelSets = family.entries().map((e) => (Array.isArray(e) ? e[0] : e.labels));
  return labelSets.map((values) => Object.fromEntries(family.labelNames.map((n, i) => [n, values[i] as string])));
}

/** Samples /metrics shows for a family: its text lines after # HELP and # TYPE. */
function samplesOf(family: Family): number {
  return family.text().split('\n').length - 2;
}

describe('bounded memory', () => {
  it(`${LINES.toLocaleString('en')} lines with unique labels: bounded series, exact overflow counts, flat heap`, { timeout: 120_000 }, () => {
    const config = defaultConfig();
    const limit = config.metrics.labelValueLimit;
    const reasonLimit = config.metrics.downgradeReasonLimit;
    const gc = forcedGc();
    const pipeline = new Pipeline(config, { clock: () => 1_714_564_800_000 });
    const m = pipeline.metrics;

    const before = heapAfterGc(gc);
    let baseline = 0;
    for (let i = 0; i < LINES; i++) {
      pipeline.line(line(i), 'gateway');
      if (i + 1 === BASELINE_AT) baseline = heapAfterGc(gc);
    }
    const after = heapAfterGc(gc);

    // Every line counted once, every one a record.
    expect(m.lines.sum()).toBe(LINES);
    expect(m.requests.sum()).toBe(LINES);

    // The first `limit` values of each label pass; every later one became __other__ and was counted.
    expect(m.labelOverflow.sum({ label: 'model' })).toBe(LINES - limit);
    expect(m.labelOverflow.sum({ label: 'route' })).toBe(LINES - limit);
    expect(m.labelOverflow.sum({ label: 'cohort' })).toBe(LINES - limit);
    expect(m.labelOverflow.sum({ label: 'reason' })).toBe(LINES - reasonLimit);

    // Series: lines 0..limit-1 each make their own; all later lines share the __other__ values, split
    // only by the bounded labels (hit: 2 values, status class: 2 here).
    const requests = seriesOf(m.requests);
    expect(requests).toHaveLength(limit + 2 * 2);
    expect(requests.filter((s) => s.model === OVERFLOW_VALUE)).toHaveLength(2 * 2);
    expect(seriesOf(m.duration)).toHaveLength(limit + 2);
    for (const family of m.families()) {
      const labelled = samplesOf(family);
      // No family may hold more than (limit + 1)² series per bounded-label combination: far below 1 per line.
      expect(seriesOf(family).length, family.name).toBeLessThanOrEqual(4 * (limit + 1) * 4);
      expect(labelled).toBeLessThan(10_000);
    }
    expect(new Set(seriesOf(m.downgrades).map((s) => s.reason)).size).toBe(reasonLimit + 1);

    // Heap: flat once the label values are saturated (a leak of 16 bytes a line would show as 14 MiB),
    // and small overall. Measured after forced full collections, not a timing.
    const growth = after - baseline;
    const overall = after - before;
    expect(growth, `heap grew ${(growth / MiB).toFixed(1)} MiB over the last ${LINES - BASELINE_AT} lines`).toBeLessThan(8 * MiB);
    expect(overall, `heap grew ${(overall / MiB).toFixed(1)} MiB over ${LINES} lines`).toBeLessThan(64 * MiB);
  });
});
