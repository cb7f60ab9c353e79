// Telling apart what a rotation leaves beside a followed file: copies of content already read, and generations never read (the evidence rotation-recovery.ts acts on).
import { constants as zlibConstants, gunzipSync } from 'node:zlib';
import { byCodeUnits } from '../code-unit-order.js';
import { isGzip } from './chunk-reader.js';
import { FINGERPRINT_BYTES, identity, looksBinary, looksCompressed, sameStart, type KnownFiles } from './file-identity.js';
import { nodeFs, type FollowerFs } from './follower-fs.js';
import type { Followed } from './followed-file.js';
import { isCopyName, numberedIndex, numberedName, sameScheme, type Family, type Sibling } from './rotation-family.js';

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
  /** The file the path named before the rotation, as a sibling now: by its identity, or a copy of its content. */
  anchor: (s: Sibling) => boolean;
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
export function startOffset(file: { key: string; head: Buffer; size: number }, checkCopies: boolean, known: KnownFiles, followed: Iterable<Followed>): number {
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
 * Of the siblings that are the file the path named before the rotation (by identity, or copies of its
 * content), the one a scheme can be read from: the deepest numbered one (`app.log.3` after three rotations
 * in one poll), else the first by name.
 */
function anchorOf(siblings: Sibling[], base: string): Sibling | undefined {
  let best: Sibling | undefined;
  let bestIndex = 0;
  for (const s of siblings) {
    const k = numberedIndex(s.name, base) ?? 0;
    if (best === undefined || k > bestIndex) {
      best = s;
      bestIndex = k;
    }
  }
  return best;
}

/** What rotation recovery found beside a path: generations to read (oldest first), and generations known lost. */
export interface Generations {
  todo: Array<{ s: Sibling; from: number }>;
  /**
   * Generations a numbered scheme says were there and that are gone or compressed, oldest first: their
   * lines are lost. The compressed sibling where there is one (its size tells what was lost), else undefined.
   */
  lost: Array<Sibling | undefined>;
}

/**
 * Gzip generations written since the path was last seen and not told before (`known`): each may be a
 * generation compressed before any read, or a compressed copy of content read; its decompressed start
 * tells which (rotation recovery asks what was read).
 */
export function newCompressed(scan: GenerationScan, siblings: Sibling[], taken: (key: string) => boolean, known: KnownFiles): Sibling[] {
  return siblings.filter(
    (s) => isGzip(s.head) && !taken(s.key) && isCopyName(s.name, scan.family.base) && known.offsetOf(s.key, s.head, s.size) === undefined && s.mtimeMs >= scan.sinceMs - MTIME_SLACK_MS,
  );
}

/** The start of a gzip file's content, from its first bytes (what of it they hold); empty when they hold none. */
export function gunzipStart(head: Buffer): Buffer {
  try {
    return gunzipSync(head, { finishFlush: zlibConstants.Z_SYNC_FLUSH }).subarray(0, FINGERPRINT_BYTES);
  } catch {
    return Buffer.alloc(0);
  }
}

/**
 * Generations that were at a path only between two polls (several rotations in one poll). They are never
 * seen at the path, so they are told apart from other files by the rotation that moved them: the file the
 * path named before (`scan.anchor`, by identity or as a copy of its content) is found among the siblings,
 * and a generation is a sibling in its naming scheme (numbered `app.log.k`, dated `app.log-DATE`) that
 * is newer than it (numbered: `app.log.1 … app.log.(k-1)` when it is now `app.log.k`, whatever the depth)
 * or was written since the path was last seen. A file named otherwise (`app.log-canary`,
 * `app.log.count`) is never one, however recently written; with no anchor (the old file was deleted,
 * compressed or moved away) no generation can be told, and none is read. Also the unread end of a
 * generation read before (known by identity: a writer that kept writing after the rotation).
 * Generations must not be copies of content read, compressed, or `taken` (followed, or matched by a
 * pattern: the normal path reads those).
 */
export function generationsToRead(scan: GenerationScan, siblings: Sibling[], taken: (key: string) => boolean, known: KnownFiles): Generations {
  const base = scan.family.base;
  const todo: Array<{ s: Sibling; from: number }> = [];
  const isCopy = (s: Sibling) => s.size > 0 && scan.heads.some((h) => h.length > 0 && sameStart(s.head, h));
  const rest: Sibling[] = [];
  for (const s of siblings) {
    if (taken(s.key) || isCopy(s)) continue;
    const offset = known.offsetOf(s.key, s.head, s.size);
    if (offset === undefined) rest.push(s);
    else if (s.size > offset) todo.push({ s, from: offset });
  }
  const anchor = anchorOf(siblings.filter(scan.anchor), base);
  if (anchor === undefined) return { todo, lost: [] };
  const top = numberedIndex(anchor.name, base);
  const newer = (s: Sibling) => top !== undefined && (numberedIndex(s.name, base) ?? top) < top;
  const generations = rest.filter(
    (s) =>
      sameScheme(s.name, anchor.name, base) &&
      s.size > 0 &&
      !looksBinary(s.head) &&
      // Older than the anchor by its number, yet written since: a generation a rotation in flight hid from the
      // last look (its content was never seen at the path, so no copy of it can be told by its content).
      (newer(s) || s.mtimeMs >= scan.sinceMs - MTIME_SLACK_MS),
  );
  // Oldest first: numbered by falling number, dated by rising date.
  const age = (s: Sibling) => (top === undefined ? 0 : -(numberedIndex(s.name, base) ?? 0));
  generations.sort((a, b) => age(a) - age(b) || byCodeUnits(a.name, b.name));
  for (const s of generations) todo.push({ s, from: 0 });
  const lost: Array<Sibling | undefined> = [];
  if (top !== undefined) {
    for (let k = top - 1; k >= 1; k--) {
      // A file seen twice by a walk that a shift ran through is found under either name.
      const name = numberedName(anchor.name, base, k);
      const s = siblings.find((c) => c.name === name || c.alsoAt?.includes(name) === true);
      if (s !== undefined && !(s.size > 0 && looksBinary(s.head))) continue;
      // Compressed where the scheme puts it (NAME.k.gz for NAME.k)?
      lost.push(s ?? siblings.find((c) => c.name.startsWith(`${name}.`) && looksCompressed(c.head)));
    }
  }
  return { todo, lost };
}

/**
 * What a lost generation held, in bytes: a gzip file's uncompressed size (its trailer's ISIZE, modulo
 * 4 GiB), another compressed file's own size (a lower bound), a plain file's size.
 */
export async function contentBytes(s: Sibling, fs: FollowerFs = nodeFs): Promise<number> {
  if (!isGzip(s.head) || s.size < 18) return s.size;
  const fh = await fs.open(s.path).catch(() => undefined);
  if (fh === undefined) return s.size;
  try {
    // Still the file walked (a shift may have put another one at its name since), read at its size now.
    const st = await fh.stat();
    if (identity(st) !== s.key || st.size < 18) return s.size;
    const trailer = Buffer.alloc(4);
    const { bytesRead } = await fh.read(trailer, 0, 4, st.size - 4);
    const isize = trailer.readUInt32LE(0);
    // Deflate expands at most ~1032 times: a larger ISIZE is not this file's trailer (cut short, or not gzip).
    return bytesRead === 4 && isize <= st.size * 1032 ? isize : st.size;
  } catch {
    return s.size;
  } finally {
    await fh.close().catch(() => undefined);
  }
}
