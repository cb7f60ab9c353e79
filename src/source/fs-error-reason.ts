import type { SourceErrorReason } from './line-sink.js';

/** Maps a filesystem error to the small, fixed set of reasons that sources report. */
export function fsErrorReason(err: unknown): SourceErrorReason {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'not_found';
  if (code === 'EACCES' || code === 'EPERM') return 'permission_denied';
  return 'read_error';
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
