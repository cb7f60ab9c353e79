// One file the follower has open: which file it is, how far it was read, and where it stands in a rotation.
import { keep, sameStart } from './file-identity.js';
import type { FollowerHandle } from './follower-fs.js';
import type { RotationKind } from './line-sink.js';
import type { LineSplitter } from './line-splitter.js';
import type { Family } from './rotation-family.js';

/**
 * Why a followed file is no longer the one at its path. `deleted`: unlinked and nothing at the path
 * yet; `orphan`: a rotated copy or generation read to recover lines, never at a followed path.
 */
export type End = RotationKind | 'deleted' | 'orphan';

/**
 * One followed file, known by identity (dev:ino) and by the first bytes of its content. It is held open
 * while it is read; past `sources.maxOpenFiles` the least recently active are closed and reopened by
 * identity when they grow (open-files.ts), so `fh` is undefined while it is closed.
 */
export interface Followed {
  readonly key: string;
  /** Latest path it was seen under. */
  path: string;
  readonly source: string;
  fh: FollowerHandle | undefined;
  /** When bytes were last read from it (or it was opened), in the follower's own count: the least recent is closed first. */
  lastActive: number;
  /** Where its rotated copies and generations are looked for; none for orphans. */
  readonly family: Family | undefined;
  offset: number;
  splitter: LineSplitter;
  /** Fingerprint: the first min(size, FINGERPRINT_BYTES) bytes of the content being read. */
  head: Buffer;
  /** Largest size seen: the file shrinking below it is a truncation. */
  seenSize: number;
  /** mtime at the last probe: unchanged with the size, the fingerprint is not read again. */
  mtimeMs: number;
  /** seenSize when the current poll began: a copy of this file made since is at least this long. */
  floor: number;
  /** When a poll last found it at its path; generations rotated away unseen were written after this. */
  checkedAtMs: number;
  end: End | undefined;
  /** Polls in a row, since it ended, that found nothing new in it. */
  idlePolls: number;
  /** Since when draining it (ended) found nothing new; undefined while it still grows. */
  quietSinceMs: number | undefined;
  readThisPoll: number;
  /** Stats in a row that found it unchanged: the longer, the less often it is stat-ed (stat-schedule.ts). */
  idleStats: number;
  /** Resumed from a checkpoint (or appeared while stopped): the catch-up cap is applied before the first read. */
  capCheck: boolean;
  /**
   * The fingerprint of the content it held before a truncation left it empty. An empty file has no
   * fingerprint, so content appearing in it cannot be told from a second copytruncate by the file alone.
   */
  emptiedFrom: Buffer | undefined;
  /** The last byte read (at offset − 1): a NUL there now, where it was not, is a truncation under a writer that does not append. */
  lastByte: number | undefined;
  /**
   * The path an lstat last looked at (directory-watch.ts), and, when it was a regular file there and not a
   * symlink (whose target's writes show in another directory), the path made absolute: its directory's
   * events then tell whether it changed.
   */
  watchCheckedPath: string | undefined;
  watchPath: string | undefined;
}

/** A followed file's state from what identifies it; the counters of the poll loop start at rest. */
export function newFollowed(init: {
  key: string;
  path: string;
  source: string;
  fh: FollowerHandle;
  family: Family | undefined;
  offset: number;
  head: Buffer;
  /** Size seen when it was opened (or checkpointed). */
  size: number;
  checkedAtMs: number;
  capCheck: boolean;
  end?: End | undefined;
  /** A new splitter, or one already holding part of a line. */
  splitter: LineSplitter;
}): Followed {
  const seen = Math.max(init.size, init.head.length);
  return {
    key: init.key,
    path: init.path,
    source: init.source,
    fh: init.fh,
    lastActive: 0,
    family: init.family,
    offset: init.offset,
    splitter: init.splitter,
    head: init.head,
    seenSize: seen,
    floor: seen,
    mtimeMs: 0,
    checkedAtMs: init.checkedAtMs,
    end: init.end,
    idlePolls: 0,
    quietSinceMs: undefined,
    readThisPoll: 0,
    idleStats: 0,
    capCheck: init.capCheck,
    emptiedFrom: undefined,
    lastByte: undefined,
    watchCheckedPath: undefined,
    watchPath: undefined,
  };
}

/** What one probe of a followed file found: its size, mtime and fingerprint (maybe a view of the scratch buffer). */
export interface Probe {
  size: number;
  mtimeMs: number;
  head: Buffer;
}

/** Logs only grow: shrinking, or a different start, means the content was replaced in place. */
export function wasReplaced(f: Followed, p: Probe): boolean {
  return p.size < f.seenSize || !sameStart(p.head, f.head);
}

/**
 * A file a truncation left empty has content again. Nothing in the probe tells an append from another
 * copytruncate since (an empty file has no fingerprint): its siblings are looked at (file-follower's refilled).
 */
export function refills(f: Followed, p: Probe): boolean {
  return f.emptiedFrom !== undefined && p.head.length > 0;
}

/** Takes what a probe found of a file still holding the same content: a longer fingerprint, a larger size. */
export function accept(f: Followed, p: Probe): void {
  if (p.head.length > f.head.length) f.head = keep(p.head);
  if (p.size > f.seenSize) f.seenSize = p.size;
  f.mtimeMs = p.mtimeMs;
}
