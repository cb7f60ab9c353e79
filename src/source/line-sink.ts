/** Where sources deliver lines. `source` is the configured source name (a glob pattern as written, or "stdin"), never a per-file path, so it is safe as a metric label. */
export interface LineSink {
  line(text: string, source: string): void;
  /** A line longer than the limit was dropped without being buffered whole. */
  oversize(source: string): void;
}

export type SourceErrorReason = 'not_found' | 'permission_denied' | 'read_error';

/** Problems with a source (missing file, permission denied, read error). Reported, never thrown. */
export interface SourceEvents {
  error(source: string, reason: SourceErrorReason, detail: string): void;
  opened?(source: string, path: string): void;
  rotated?(source: string, path: string, kind: 'rename' | 'truncate'): void;
}
