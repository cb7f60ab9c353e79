// What a checkpoint holds, and how it is taken from and given back to the running exporter: every
// counter, gauge and histogram series, the values each bounded label admitted (so `__other__` maps the
// same after a restart), and the position of every followed file. Taken in one synchronous step between
// two line deliveries, so the offsets and the counts agree: every line before an offset is counted, none
// after it. Window sketches are not kept: the window refills from the lines read after the restart.
import { z } from 'zod';
import type { ExporterMetrics } from '../metrics/exporter-metrics.js';
import { CounterFamily, HistogramFamily, type HistogramRow } from '../metrics/families.js';
import { FINGERPRINT_BYTES, identity } from '../source/file-identity.js';
import { metricsState, type MetricsState } from '../metrics/metrics-state.js';
import type { FilePosition, FollowerState } from '../source/file-follower.js';
import type { HeldLines } from '../record/source-inputs.js';

export const CHECKPOINT_VERSION = 1;

const count = z.number().int().min(0);
/** dev and ino: what identity() joins. */
const id = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const familySchema = z.object({ dir: z.string(), base: z.string() });

const fileSchema = z.object({
  source: z.string(),
  path: z.string(),
  dev: id,
  ino: id,
  /** The file's first min(size, 1 KiB) bytes, base64. */
  fingerprint: z.string(),
  offset: count.max(Number.MAX_SAFE_INTEGER),
  skipToNewline: z.boolean(),
  seenSize: count.max(Number.MAX_SAFE_INTEGER),
  state: z.enum(['live', 'detached', 'orphan']),
  family: familySchema.optional(),
});

const knownSchema = z.object({ dev: id, ino: id, fingerprint: z.string(), offset: count.max(Number.MAX_SAFE_INTEGER) });

/** Any JSON number, 1e999 (Infinity once parsed) included: restoreMetrics tells the values it can hold. */
const anyNumber = z.custom<number>((v) => typeof v === 'number', 'expected a number');

const histogramRowSchema = z.object({
  labels: z.array(z.string()),
  counts: z.array(anyNumber),
  sum: anyNumber,
  count: anyNumber,
});

/**
 * The shape of a checkpoint. File entries are checked one by one after it (decodeCheckpoint) and metric
 * values against their families (restoreMetrics): one bad value drops that value, not the checkpoint.
 */
export const checkpointFileSchema = z.object({
  version: z.literal(CHECKPOINT_VERSION),
  /** RFC 3339. */
  savedAt: z.string().refine((t) => Number.isFinite(Date.parse(t)), 'not an RFC 3339 time'),
  /** The histogram's bounds: counts are never restored into other buckets. */
  histogramBounds: z.array(z.number()),
  /** Counter and gauge families by name: [label values, value] per series. */
  series: z.record(z.string(), z.array(z.tuple([z.array(z.string()), anyNumber]))),
  histograms: z.record(z.string(), z.array(histogramRowSchema)),
  /** Values each bounded label admitted, in order. */
  labelValues: z.record(z.string(), z.array(z.string())),
  files: z.object({
    patterns: z.array(z.string()),
    followed: z.array(z.unknown()),
    known: z.array(z.unknown()),
  }),
  /**
   * Lines read (the offsets are past them) but held, not counted, while their stream's format was being
   * detected: offered again after a restart (Pipeline.restoreHeld). Absent in checkpoints of older runs.
   */
  held: z.array(z.object({ source: z.string(), lineage: z.string(), path: z.string(), lines: z.array(z.string()) })).optional(),
});

type FileJson = z.infer<typeof fileSchema>;

/**
 * Why a checkpointed value was dropped instead of restored (zero_plane_exporter_checkpoint_dropped_total{reason}):
 * - `negative`: a counter below 0; `not_finite`: a counter or gauge that is not a finite number;
 * - `histogram`: bucket counts that are not whole non-negative numbers, more of them than the total
 *   count, a count or sum that is negative or not finite, or another number of buckets;
 * - `labels`: a series with another number of label values than its family has;
 * - `file_position`: a file entry that is not a position this exporter writes (an identity that is not
 *   dev:ino, a fingerprint that is not base64 of at most 1 KiB or shorter than the offset it vouches for);
 * - `offset_not_line_start`: an offset that is not just past a line's end in the file it names (found
 *   when the file is reopened: reading resumes at the next line start instead).
 */
export const DROP_REASONS = ['negative', 'not_finite', 'histogram', 'labels', 'file_position', 'offset_not_line_start'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export interface Dropped {
  reason: DropReason;
  /** What was dropped: a family and its labels, or a file's path. */
  what: string;
}

export type CheckpointJson = z.infer<typeof checkpointFileSchema>;

/** A checkpoint read back: the JSON, with the follower's part decoded and checked. */
export interface Checkpoint {
  json: CheckpointJson;
  savedAtMs: number;
  files: FollowerState;
  /** File entries dropped as invalid, by identity where it could be read: followed by --tail.start-at, not resumed. */
  untrusted: string[];
  /** What was dropped while decoding (file entries); restoreMetrics adds the metric values it drops. */
  dropped: Dropped[];
}

/**
 * The checkpoint of this moment. Synchronous, and a deep copy: call it where no line is half-delivered
 * (inside FileFollower.snapshot), and the result stays true however long the write takes.
 */
export function takeCheckpoint(metrics: ExporterMetrics, files: FollowerState, nowMs = Date.now(), held: readonly HeldLines[] = []): CheckpointJson {
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
    ...(held.length === 0 ? {} : { held: held.map((h) => ({ ...h, lines: [...h.lines] })) }),
  };
}

// The schema describes exactly what metricsState() produces (a compile-time check).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesMetricsState: Same<Pick<CheckpointJson, keyof MetricsState>, MetricsState> = true;
void schemaMatchesMetricsState;

/** A parsed checkpoint file, or why it cannot be used at all. */
export function decodeCheckpoint(value: unknown): { ok: true; checkpoint: Checkpoint } | { ok: false; problem: string } {
  const parsed = checkpointFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: issue === undefined ? 'invalid' : `${issue.path.map(String).join('.') || '(top level)'}: ${issue.message}` };
  }
  const json = parsed.data;
  const dropped: Dropped[] = [];
  const untrusted: string[] = [];
  const followed: FilePosition[] = [];
  for (const raw of json.files.followed) {
    const f = fileSchema.safeParse(raw);
    const head = f.success ? fingerprintOf(f.data.fingerprint, f.data.offset) : undefined;
    if (!f.success || head === undefined) {
      dropped.push({ reason: 'file_position', what: describeFile(raw) });
      const key = keyOf(raw);
      if (key !== undefined) untrusted.push(key);
      continue;
    }
    followed.push(positionOf(f.data, head));
  }
  const known: FollowerState['known'] = [];
  for (const raw of json.files.known) {
    const k = knownSchema.safeParse(raw);
    const head = k.success ? fingerprintOf(k.data.fingerprint, k.data.offset) : undefined;
    if (!k.success || head === undefined) {
      dropped.push({ reason: 'file_position', what: describeFile(raw) });
      continue;
    }
    known.push({ key: identity(k.data), head, offset: k.data.offset });
  }
  return {
    ok: true,
    checkpoint: { json, savedAtMs: Date.parse(json.savedAt), files: { patterns: json.files.patterns, files: followed, known }, untrusted, dropped },
  };
}

function positionOf(f: FileJson, head: Buffer): FilePosition {
  return {
    source: f.source,
    path: f.path,
    key: identity(f),
    head,
    offset: f.offset,
    skipToNewline: f.skipToNewline,
    seenSize: f.seenSize,
    state: f.state,
    family: f.family,
  };
}

/**
 * A fingerprint as the follower keeps it: base64 of at most 1 KiB, covering at least the bytes up to the
 * offset (or a whole KiB), since it is read before them. Undefined when it is not that.
 */
function fingerprintOf(base64: string, offset: number): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) return undefined;
  const head = Buffer.from(base64, 'base64');
  if (head.toString('base64') !== base64 || head.length > FINGERPRINT_BYTES || head.length < Math.min(offset, FINGERPRINT_BYTES)) return undefined;
  return head;
}

function keyOf(raw: unknown): string | undefined {
  const parsed = z.object({ dev: id, ino: id }).safeParse(raw);
  return parsed.success ? identity(parsed.data) : undefined;
}

function describeFile(raw: unknown): string {
  const path = typeof raw === 'object' && raw !== null && 'path' in raw && typeof raw.path === 'string' ? raw.path : undefined;
  return path ?? keyOf(raw) ?? 'a file entry';
}

/**
 * Gives the counters, gauges, histograms and label admissions back to fresh metrics (before any line is
 * read, so the pipeline's series handles find the restored series). Refused, with nothing restored, when
 * the histogram's bounds differ from the checkpoint's: counts are never moved into other buckets. A value
 * that cannot be one its family would hold (a negative or non-finite counter, a histogram whose buckets
 * and count disagree, the wrong number of labels) is dropped and returned, never served.
 */
export function restoreMetrics(checkpoint: Checkpoint, metrics: ExporterMetrics): { result: 'restored' | 'bounds_changed'; dropped: Dropped[] } {
  const json = checkpoint.json;
  const bounds = metrics.duration.bounds;
  const dropped: Dropped[] = [];
  if (json.histogramBounds.length !== bounds.length || json.histogramBounds.some((b, i) => b !== bounds[i])) return { result: 'bounds_changed', dropped };
  for (const family of metrics.families()) {
    const what = (labels: readonly string[]) => `${family.name}{${labels.join(',')}}`;
    if (family instanceof HistogramFamily) {
      const rows: HistogramRow[] = [];
      for (const row of json.histograms[family.name] ?? []) {
        const reason = row.labels.length !== family.labelNames.length ? 'labels' : histogramProblem(row, family.bounds.length);
        if (reason === undefined) rows.push(row);
        else dropped.push({ reason, what: what(row.labels) });
      }
      family.restore(rows);
      continue;
    }
    const counter = family instanceof CounterFamily;
    const rows: Array<[string[], number]> = [];
    for (const [labels, value] of json.series[family.name] ?? []) {
      const reason = labels.length !== family.labelNames.length ? 'labels' : !Number.isFinite(value) ? 'not_finite' : counter && value < 0 ? 'negative' : undefined;
      if (reason === undefined) rows.push([labels, value]);
      else dropped.push({ reason, what: what(labels) });
    }
    family.restore(rows);
  }
  for (const [label, limiter] of Object.entries(metrics.limiters())) limiter.admit(json.labelValues[label] ?? []);
  return { result: 'restored', dropped };
}

/** Why a histogram row is not one a histogram of `buckets` bounds can hold, or undefined when it is. */
function histogramProblem(row: HistogramRow, buckets: number): DropReason | undefined {
  if (row.counts.length !== buckets) return 'histogram';
  let inBuckets = 0;
  for (const c of row.counts) {
    if (!Number.isSafeInteger(c) || c < 0) return 'histogram';
    inBuckets += c;
  }
  // The +Inf overflow is count minus the buckets: never negative. Latencies are never negative, nor their sum.
  if (!Number.isSafeInteger(row.count) || row.count < inBuckets || !Number.isFinite(row.sum) || row.sum < 0) return 'histogram';
  if (row.count === 0 && row.sum !== 0) return 'histogram';
  return undefined;
}

function idOf(key: string): { dev: number; ino: number } {
  const [dev, ino] = key.split(':');
  return { dev: Number(dev), ino: Number(ino) };
}
