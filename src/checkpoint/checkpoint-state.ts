// What a checkpoint holds, and how it is taken from and given back to the running exporter: every
// counter, gauge and histogram series, the values each bounded label admitted (so `__other__` maps the
// same after a restart), and the position of every followed file. Taken in one synchronous step between
// two line deliveries, so the offsets and the counts agree: every line before an offset is counted, none
// after it. Window sketches are not kept: the window refills from the lines read after the restart.
import { z } from 'zod';
import type { ExporterMetrics } from '../metrics/exporter-metrics.js';
import { GaugeFamily, HistogramFamily, type HistogramRow } from '../metrics/families.js';
import type { FilePosition, FollowerState } from '../source/file-follower.js';

export const CHECKPOINT_VERSION = 1;

const count = z.number().int().min(0);

const familySchema = z.object({ dir: z.string(), base: z.string() });

const fileSchema = z.object({
  source: z.string(),
  path: z.string(),
  dev: z.number(),
  ino: z.number(),
  /** The file's first min(size, 1 KiB) bytes, base64. */
  fingerprint: z.string(),
  offset: count,
  skipToNewline: z.boolean(),
  seenSize: count,
  state: z.enum(['live', 'detached', 'orphan']),
  family: familySchema.optional(),
});

const knownSchema = z.object({ dev: z.number(), ino: z.number(), fingerprint: z.string(), offset: count });

const histogramRowSchema = z.object({
  labels: z.array(z.string()),
  counts: z.array(z.number()),
  sum: z.number(),
  count: z.number(),
});

export const checkpointFileSchema = z.object({
  version: z.literal(CHECKPOINT_VERSION),
  /** RFC 3339. */
  savedAt: z.string().refine((t) => Number.isFinite(Date.parse(t)), 'not an RFC 3339 time'),
  /** The histogram's bounds: counts are never restored into other buckets. */
  histogramBounds: z.array(z.number()),
  /** Counter and gauge families by name: [label values, value] per series. */
  series: z.record(z.string(), z.array(z.tuple([z.array(z.string()), z.number()]))),
  histograms: z.record(z.string(), z.array(histogramRowSchema)),
  /** Values each bounded label admitted, in order. */
  labelValues: z.record(z.string(), z.array(z.string())),
  files: z.object({
    patterns: z.array(z.string()),
    followed: z.array(fileSchema),
    known: z.array(knownSchema),
  }),
});

export type CheckpointJson = z.infer<typeof checkpointFileSchema>;

/** A checkpoint read back: the JSON, with the follower's part decoded. */
export interface Checkpoint {
  json: CheckpointJson;
  savedAtMs: number;
  files: FollowerState;
}

/**
 * The checkpoint of this moment. Synchronous, and a deep copy: call it where no line is half-delivered
 * (inside FileFollower.snapshot), and the result stays true however long the write takes.
 */
export function takeCheckpoint(metrics: ExporterMetrics, files: FollowerState, nowMs = Date.now()): CheckpointJson {
  return {
    version: CHECKPOINT_VERSION,
    savedAt: new Date(nowMs).toISOString(),
    ...metricsState(metrics),
    files: {
      patterns: [...files.patterns],
      followed: files.files.map((f) => ({
        source: f.source,
        path: f.path,
        ...idOf(f.key),
        fingerprint: f.head.toString('base64'),
        offset: f.offset,
        skipToNewline: f.skipToNewline,
        seenSize: f.seenSize,
        state: f.state,
        ...(f.family === undefined ? {} : { family: { dir: f.family.dir, base: f.family.base } }),
      })),
      known: files.known.map((k) => ({ ...idOf(k.key), fingerprint: k.head.toString('base64'), offset: k.offset })),
    },
  };
}

/** The metrics part of a checkpoint: also what a `report` worker thread sends back (structured-clone safe). */
export type MetricsState = Pick<CheckpointJson, 'histogramBounds' | 'series' | 'histograms' | 'labelValues'>;

/** Every series and label admission of `metrics`, as a deep copy in plain data. */
export function metricsState(metrics: ExporterMetrics): MetricsState {
  const series: CheckpointJson['series'] = {};
  const histograms: CheckpointJson['histograms'] = {};
  for (const family of metrics.families()) {
    if (family instanceof HistogramFamily) {
      histograms[family.name] = family.entries().map((r) => ({ labels: [...r.labels], counts: [...r.counts], sum: r.sum, count: r.count }));
    } else {
      series[family.name] = family.entries().map(([labels, value]) => [[...labels], value]);
    }
  }
  const labelValues: CheckpointJson['labelValues'] = {};
  for (const [label, limiter] of Object.entries(metrics.limiters())) labelValues[label] = limiter.values();
  return { histogramBounds: [...metrics.duration.bounds], series, histograms, labelValues };
}

/**
 * Whether adding `later` (metrics of the lines that follow, counted from fresh metrics) to `metrics` gives
 * exactly what one pass over all the lines would have: the later lines admitted every label value they saw
 * (no overflow), and all the values together fit each limit. Then in one pass every one of those values
 * would also have been admitted, so none of the later lines maps to __other__ differently. What `metrics`
 * itself overflowed earlier does not matter: those lines were read by the same limiter either way.
 */
export function mergesExactly(metrics: ExporterMetrics, later: MetricsState): boolean {
  const overflow = later.series[metrics.labelOverflow.name] ?? [];
  if (overflow.some(([, v]) => v > 0)) return false;
  return Object.entries(metrics.limiters()).every(([label, limiter]) => limiter.fitsWith(later.labelValues[label] ?? []));
}

/**
 * Adds `later` to `metrics`: counters and histograms add, the last-record gauge keeps the larger value,
 * label admissions are appended in their order. Exact only where mergesExactly said so. New series are
 * appended in the order `later` created them, which is the order one pass would have created them in.
 */
export function mergeMetricsState(metrics: ExporterMetrics, later: MetricsState): void {
  const bounds = metrics.duration.bounds;
  if (later.histogramBounds.length !== bounds.length || later.histogramBounds.some((b, i) => b !== bounds[i])) {
    throw new Error('cannot merge metrics taken with other histogram bounds');
  }
  for (const family of metrics.families()) {
    if (family instanceof HistogramFamily) {
      for (const row of later.histograms[family.name] ?? []) {
        const s = family.handle(row.labels);
        for (let i = 0; i < row.counts.length; i++) (s.counts[i] as number) += row.counts[i] as number;
        s.sum += row.sum;
        s.count += row.count;
      }
    } else if (family instanceof GaugeFamily) {
      for (const [labels, value] of later.series[family.name] ?? []) {
        if (!family.has(labels) || value > family.get(labels)) family.set(labels, value);
      }
    } else {
      for (const [labels, value] of later.series[family.name] ?? []) family.inc(labels, value);
    }
  }
  for (const [label, limiter] of Object.entries(metrics.limiters())) limiter.admit(later.labelValues[label] ?? []);
}

/** A parsed checkpoint file, or why it cannot be used. */
export function decodeCheckpoint(value: unknown): { ok: true; checkpoint: Checkpoint } | { ok: false; problem: string } {
  const parsed = checkpointFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: issue === undefined ? 'invalid' : `${issue.path.map(String).join('.') || '(top level)'}: ${issue.message}` };
  }
  const json = parsed.data;
  const followed: FilePosition[] = json.files.followed.map((f) => ({
    source: f.source,
    path: f.path,
    key: `${f.dev}:${f.ino}`,
    head: Buffer.from(f.fingerprint, 'base64'),
    offset: f.offset,
    skipToNewline: f.skipToNewline,
    seenSize: f.seenSize,
    state: f.state,
    family: f.family,
  }));
  const known = json.files.known.map((k) => ({ key: `${k.dev}:${k.ino}`, head: Buffer.from(k.fingerprint, 'base64'), offset: k.offset }));
  return { ok: true, checkpoint: { json, savedAtMs: Date.parse(json.savedAt), files: { patterns: json.files.patterns, files: followed, known } } };
}

/**
 * Gives the counters, gauges, histograms and label admissions back to fresh metrics (before any line is
 * read, so the pipeline's series handles find the restored series). Refused, with nothing restored, when
 * the histogram's bounds differ from the checkpoint's: counts are never moved into other buckets.
 */
export function restoreMetrics(checkpoint: Checkpoint, metrics: ExporterMetrics): 'restored' | 'bounds_changed' {
  const json = checkpoint.json;
  const bounds = metrics.duration.bounds;
  if (json.histogramBounds.length !== bounds.length || json.histogramBounds.some((b, i) => b !== bounds[i])) return 'bounds_changed';
  for (const family of metrics.families()) {
    if (family instanceof HistogramFamily) family.restore((json.histograms[family.name] ?? []) as HistogramRow[]);
    else family.restore(json.series[family.name] ?? []);
  }
  for (const [label, limiter] of Object.entries(metrics.limiters())) limiter.admit(json.labelValues[label] ?? []);
  return 'restored';
}

function idOf(key: string): { dev: number; ino: number } {
  const [dev, ino] = key.split(':');
  return { dev: Number(dev), ino: Number(ino) };
}
