// Telling apart what a rotation leaves beside a followed file: copies of content already read, and generations never read.
import { FINGERPRINT_BYTES, looksBinary, sameStart, type KnownFiles } from './file-identity.js';
import type { Followed } from './followed-file.js';
import { isGenerationName, type Family, type Sibling } from './rotation-family.js';

/**
 * A generation rotated away unseen was written after the last poll that saw the path; its mtime is
 * compared with that poll's time less this slack (filesystem timestamps come from a coarse clock).
 */
const MTIME_SLACK_MS = 1000;

/** Where generations rotated away unseen are looked for, on behalf of which path and source. */
export interface GenerationScan {
  family: Family;
  source: string;
  path: string;
  /** When the path last named a file already read: a generation was written after this. */
  sinceMs: number;
  /** Starts of content read or about to be read: siblings starting the same way are copies of it. */
  heads: Buffer[];
}

/** A sibling starting like the content `head` begins: a copy of it (only its head is compared). */
export function isCopyOf(s: Sibling, head: Buffer): boolean {
  return head.length > 0 && s.size > 0 && sameStart(s.head, head);
}

/** Of the copies of a truncated file's old content, the longest holding bytes past `offset` (not read yet). */
export function gapSource(copies: Sibling[], offset: number): Sibling | undefined {
  return copies.reduce<Sibling | undefined>((best, s) => (s.size > offset && (best === undefined || s.size > best.size) ? s : best), undefined);
}

/**
 * Where to start reading a file not followed yet (and not at startup): where it was let go of, if it was
 * read before (a symlink switched back, a file renamed out of the glob and back); at its end if it is a
 * copy of a followed file (copytruncate's, in a glob's reach); else at its start.
 */
export function startOffset(
  file: { key: string; head: Buffer; size: number },
  checkCopies: boolean,
  known: KnownFiles,
  followed: Iterable<Followed>,
): number {
  const { key, head, size } = file;
  const offset = known.offsetOf(key, head, size);
  known.forget(key);
  if (offset !== undefined) return offset;
  return checkCopies && isCopyOfFollowed(head, size, followed) ? size : 0;
}

/**
 * A new file that starts like a followed file still at its path and is at least as long as that file
 * was when this poll began: a copy of content already read or being read (copytruncate's copy, in a
 * glob's reach), with no new lines. A followed file shorter than the fingerprint is weaker evidence:
 * the copy must then also be no longer than that file is.
 */
function isCopyOfFollowed(head: Buffer, size: number, followed: Iterable<Followed>): boolean {
  if (size === 0) return false;
  for (const f of followed) {
    if (f.end !== undefined || f.head.length === 0 || size < f.floor || !sameStart(head, f.head)) continue;
    if (f.head.length >= FINGERPRINT_BYTES || size <= f.seenSize) return true;
  }
  return false;
}

/**
 * Generations that were at a path only between two polls (two rotations in one poll): a sibling named
 * like a rotated file of the path, never read, written since the path was last seen, not a copy of
 * content read, not compressed. Also the unread end of a generation read before (a writer that kept
 * writing after the rotation). Oldest first. Files `taken` (followed, or matched by a pattern) are left
 * to the normal path.
 */
export function generationsToRead(
  scan: GenerationScan,
  siblings: Sibling[],
  taken: (key: string) => boolean,
  known: KnownFiles,
): Array<{ s: Sibling; from: number }> {
  const todo: Array<{ s: Sibling; from: number }> = [];
  for (const s of siblings) {
    if (!isGenerationName(s.name, scan.family.base) || taken(s.key)) continue;
    if (s.size > 0 && scan.heads.some((h) => h.length > 0 && sameStart(s.head, h))) continue;
    const offset = known.offsetOf(s.key, s.head, s.size);
    if (offset !== undefined) {
      if (s.size > offset) todo.push({ s, from: offset });
      continue;
    }
    if (s.size === 0 || s.mtimeMs < scan.sinceMs - MTIME_SLACK_MS || looksBinary(s.head)) continue;
    todo.push({ s, from: 0 });
  }
  todo.sort((a, b) => a.s.mtimeMs - b.s.mtimeMs);
  return todo;
}
