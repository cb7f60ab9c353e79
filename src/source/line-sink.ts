import type { Envelope } from './envelope.js';

/**
 * Where sources deliver lines. `source` is the configured source name (a glob pattern as written, or
 * "stdin"), never a per-file path, so it is safe as a metric label. `stream`, when given, is the part of
 * the source the lines come from (one generation of a followed file, one ingest body): each stream has
 * its format detected on its own (record/detect-preset.ts); without one the source is one stream.
 */
export interface LineSink {
  line(text: string, source: string, stream?: Stream): void;
  /**
   * The same line as UTF-8 bytes buf[start, end), for a sink that can read them without decoding; sources
   * that hold bytes call this instead of line() when it is there. buf is only valid during the call.
   */
  lineBytes?(buf: Buffer, start: number, end: number, source: string, stream?: Stream): void;
  /** A line longer than the limit was dropped without being buffered whole. */
  oversize(source: string, stream?: Stream): void;
  /**
   * Every line of the chunk just pushed has been delivered: a sink that counts lineBytes' lines in batches
   * counts the rest now, so what it shows matches what was read.
   */
  chunkEnd?(): void;
  /**
   * The source has delivered what it has for now (an ingest body ended): a sink that holds lines back (while
   * it detects their format) counts them.
   */
  drain?(source: string, stream?: Stream): void;
  /** The stream has ended for good (an ingest body): a sink may forget its state. */
  release?(source: string, stream: Stream): void;
  /** A run of `bytes` NUL bytes where a line starts was skipped (the hole a truncation leaves). */
  nulBytes?(source: string, bytes: number): void;
  /** With input.envelope: auto, the envelope the first lines of one of the source's files showed. */
  envelope?(source: string, envelope: Envelope): void;
}
/**
 * One stream of a source's lines, with its own format detection. `lineage` names what successive streams
 * continue (a followed path, ingest as a whole): a new generation whose first lines show nothing decisive
 * is read like the one before it, and a decision is logged again only when it changes along a lineage.
 */
export interface Stream {
  /** Unique among the live streams of a process. */
  readonly key: string;
  readonly lineage: string;
  /** What the log names: the file's path, or "" (an ingest body, stdin). */
  readonly path: string;
}

let streams = 0;

/** A new stream of `source`, continuing the lineage of `path` ("" for a source with one lineage). */
export function newStream(source: string, path = ''): Stream {
  const lineage = `${source}\u0000${path}`;
  return { key: `${lineage}\u0000${++streams}`, lineage, path };
}

export type SourceErrorReason = 'not_found' | 'permission_denied' | 'read_error';

/**
 * How the file at a followed path was replaced:
 * - `rename`: renamed away (logrotate `create`); the old file was drained to its end first.
 * - `truncate`: truncated or rewritten in place and no copy of the old content was found.
 * - `copytruncate-recovered`: truncated in place, and the bytes not yet read were read from the copy
 *   (`NAME.1`, `NAME-DATE`, … in the same directory, recognised by its first bytes).
 * - `symlink`: the path is a symbolic link that now points to another file; the old target was drained.
 * - `recreate`: deleted, and a new file appeared at the path.
 * A generation that was rotated away between two polls, unseen, is read from its sibling and reported
 * with the kind of the rotation that revealed it.
 * - `unrecovered`: a generation the rotation scheme says existed (`app.log.2` when the file read before
 *   is now `app.log.3`) was gone or compressed before a poll could read it: its lines are lost.
 */
export type RotationKind = 'rename' | 'truncate' | 'copytruncate-recovered' | 'symlink' | 'recreate' | 'unrecovered';

/**
 * Why bytes known to have been in a file were never delivered: `truncated` (truncated in place before
 * they were read, no copy found), `catch_up_cap` (after a restart from a checkpoint, the file was further
 * behind than `checkpoint.maxCatchUpBytes`; reading resumed that far from its end, at a line start),
 * `unrecovered` (a file seen, or a generation the rotation scheme shows, that was deleted or compressed
 * before the follower held it open: its size when seen; a gzip generation's uncompressed size).
 */
export type SkipReason = 'truncated' | 'catch_up_cap' | 'unrecovered';

/**
 * Where a file in a checkpoint was found on restart: `at_path` (where it was followed), `moved` (renamed
 * while the exporter was stopped, found beside its path by identity), `gone` (nowhere: what it held past
 * the checkpointed offset, if anything, cannot be read).
 */
export type ResumeOutcome = 'at_path' | 'moved' | 'gone';

/** Problems with a source (missing file, permission denied, read error). Reported, never thrown. */
export interface SourceEvents {
  error(source: string, reason: SourceErrorReason, detail: string): void;
  opened?(source: string, path: string): void;
  rotated?(source: string, path: string, kind: RotationKind): void;
  /**
   * Bytes the follower knows were in a file but could not read: the file was truncated past them and
   * no copy holding them was found. Bytes written and truncated between two polls are not known, so
   * they cannot be counted here.
   */
  skipped?(source: string, bytes: number, reason: SkipReason): void;
  /**
   * Lines lost in a file deleted or compressed before it was held open (reported with its bytes as
   * `skipped(…, 'unrecovered')`): an estimate, its bytes over the average line length of the source's
   * files read so far (from their fingerprints). Not reported while no whole line of the source was seen.
   */
  unrecoveredLines?(source: string, path: string, lines: number): void;
  /** An unterminated last line was delivered as it is, because its file was rotated away, deleted or truncated. */
  partialLine?(source: string, path: string): void;
  /** A file of the checkpoint, at start-up: where it was found, and the offset reading resumes from. */
  resumed?(source: string, path: string, outcome: ResumeOutcome, offset: number): void;
  /**
   * A checkpointed offset that was not at a line start in the file it names (a checkpoint edited, or not
   * written by this version): not used; reading resumes at the next line start, `offset`.
   */
  offsetDistrusted?(source: string, path: string, checkpointed: number, offset: number): void;
  /**
   * The follower holds `cap` files open at most (sources.maxOpenFiles, lowered below the process's
   * descriptor limit); reported once when the cap first makes it close a file, and whenever an
   * EMFILE/ENFILE lowers it.
   */
  openFilesCapped?(cap: number, reason: 'cap_reached' | 'descriptors_exhausted'): void;
  /**
   * A directory of followed files is polled rather than watched (sources.watch auto): its filesystem may
   * change without events (`unreliable_fs`), the inotify watches are used up (`watch_limit`), or the watch
   * failed (`watch_error`). Once per directory and reason; a watch is tried again after the rescan interval.
   */
  watchFallback?(dir: string, reason: 'unreliable_fs' | 'watch_limit' | 'watch_error', detail: string): void;
}
