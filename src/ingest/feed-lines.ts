// Feeds one ingest body to the pipeline and says what became of its lines. The outcome is read from the
// pipeline's own counters (records and parse errors) before and after, with no await in between: Node
// runs this to the end before any other line (from a file, stdin or another request) is handled, so the
// difference is exactly this body's, and the response can never disagree with /metrics.
import type { Pipeline } from '../pipeline.js';
import type { EnvelopeMode } from '../source/envelope.js';
import { newStream, type LineSink } from '../source/line-sink.js';
import { LineSplitter } from '../source/line-splitter.js';

/** What ingest needs of the pipeline: a line sink whose counters it can read. */
export type CountingSink = LineSink & Pick<Pipeline, 'metrics'>;

export interface IngestOutcome {
  /** Lines that became records (counted in zero_plane_requests_total). */
  accepted: number;
  /** Lines skipped (counted in zero_plane_exporter_parse_errors_total). */
  rejected: number;
  /** Rejected lines by parse-error reason (only reasons that occurred). */
  reasons: Record<string, number>;
}

export interface FeedOptions {
  maxLineBytes: number;
  /** input.envelope, decided per body with `auto`; default `none`. */
  envelope?: EnvelopeMode;
  /** The `source` label: "http". */
  source: string;
  /** application/json-seq (RFC 7464): each record starts with an RS (U+001E), which is not part of the JSON. */
  recordSeparators: boolean;
}

const RS = 0x1e;

export function feedLines(sink: CountingSink, chunks: readonly Buffer[], opts: FeedOptions): IngestOutcome {
  const before = counts(sink);
  const target: LineSink = opts.recordSeparators
    ? {
        line: (text, source, stream) => sink.line(text.charCodeAt(0) === RS ? text.slice(1) : text, source, stream),
        oversize: (source, stream) => sink.oversize(source, stream),
        ...(sink.nulBytes === undefined ? {} : { nulBytes: sink.nulBytes.bind(sink) }),
        ...(sink.envelope === undefined ? {} : { envelope: sink.envelope.bind(sink) }),
      }
    : sink;
  // Each body is a stream of its own: its format is detected on its own lines (another gateway's body
  // after this one is read with its own preset).
  const stream = newStream(opts.source);
  const splitter = new LineSplitter(opts.maxLineBytes, target, opts.source, stream, opts.envelope);
  for (const chunk of chunks) splitter.push(chunk);
  // The end of the body ends its last line, newline or not; and none of its lines may still be held back.
  splitter.flush();
  sink.drain?.(opts.source, stream);
  sink.release?.(opts.source, stream);
  const after = counts(sink);

  const reasons: Record<string, number> = {};
  let rejected = 0;
  for (const [reason, n] of after.errors) {
    const delta = n - (before.errors.get(reason) ?? 0);
    if (delta > 0) {
      reasons[reason] = delta;
      rejected += delta;
    }
  }
  return { accepted: after.records - before.records, rejected, reasons };
}

function counts(sink: CountingSink): { records: number; errors: Map<string, number> } {
  const errors = new Map<string, number>();
  for (const [labels, value] of sink.metrics.parseErrors.entries()) errors.set(labels[0] ?? '', value);
  return { records: sink.metrics.requests.sum(), errors };
}
