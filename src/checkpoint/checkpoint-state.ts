// What a checkpoint holds, and how it is taken from and given back to the running exporter: every
// counter, gauge and histogram series, the values each bounded label admitted (so `__other__` maps the
// same after a restart), and the position of every followed file. Taken in one synchronous step between
// two line deliveries, so the offsets and the counts agree: every line before an offset is counted, none
// after it. Window sketches are not kept: the window refills from the lines read after the restart.
import { z } from 'zod';
import type { ExporterMetrics } from '../metrics/exporter-metrics.js';
import { HistogramFamily, type HistogramRow } from '../metrics/families.js';
import { metricsState, type MetricsState } from '../metrics/metrics-state.js';
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

// The schema describes exactly what metricsState() produces (a compile-time check).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesMetricsState: Same<Pick<CheckpointJson, keyof MetricsState>, MetricsState> = true;
void schemaMatchesMetricsState;

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
