// Resuming from a checkpoint: what it keeps of each followed file, and finding those files again after a restart.
import { basename, dirname } from 'node:path';
import { identity, keep, looksCompressed, readHead, sameStart } from './file-identity.js';
import { nodeFs, type FollowerFs, type FollowerHandle } from './follower-fs.js';
import { newFollowed, type Followed } from './followed-file.js';
import type { LineSplitter } from './line-splitter.js';
import type { DirectoryIndex } from './directory-index.js';
import { nextLineStart } from './line-start.js';
import { familyOf, isCopyName, type Family } from './rotation-family.js';

/**
 * A followed file's position as a checkpoint keeps it: enough to find the same file again (identity and
 * fingerprint) and to go on with the line after the last one delivered.
 */
export interface FilePosition {
  source: string;
  /** The path it was followed under; for a file renamed away and still drained, the path it left. */
  path: string;
  /** dev:ino */
  key: string;
  /** The fingerprint: its first min(size, 1 KiB) bytes. */
  head: Buffer;
  /**
   * Just past the last complete line delivered: bytes of a line still incomplete are not included, so
   * that line is read whole after a restart.
   */
  offset: number;
  /** The offset is inside a line already reported as oversize: the rest of it, up to `\n`, is dropped. */
  skipToNewline: boolean;
  /** The largest size seen: bytes past the offset known to have existed, counted as skipped if truncated away. */
  seenSize: number;
  /**
   * `live`: at its path. `detached`: no longer at its path (renamed away, deleted), still drained.
   * `orphan`: a rotated copy or generation read to recover lines, at `path` itself.
   */
  state: 'live' | 'detached' | 'orphan';
  family: Family | undefined;
}

/** What a checkpoint keeps of the follower. */
export interface FollowerState {
  /** The patterns followed: files of a pattern in this list that are not in `files` appeared since. */
  patterns: string[];
  files: FilePosition[];
  /** Files read and let go of that still exist (rotated away), so one coming back into view is not read again. */
  known: Array<{ key: string; head: Buffer; offset: number }>;
}

export interface ResumeFrom {
  state: FollowerState;
  /** When the checkpoint was taken: generations rotated away since are looked for beside their path. */
  savedAtMs: number;
  /**
   * At most this many bytes behind the end are read of a file resumed (or appeared since the checkpoint);
   * a file further behind resumes at the first line start within that distance of its end, the bytes
   * passed over reported as skipped (`catch_up_cap`).
   */
  maxCatchUpBytes: number;
  /**
   * Files whose checkpointed position was dropped as invalid (checkpoint-state.ts): they are followed as
   * files new to this run (by --tail.start-at), not as files that appeared while stopped.
   */
  untrusted?: readonly string[];
}

/** A followed file's position for a checkpoint; `live` when this poll found it at its path. */
export function positionOf(f: Followed, live: boolean): FilePosition {
  return {
    source: f.source,
    path: f.path,
    key: f.key,
    head: f.head,
    offset: f.offset - f.splitter.pendingBytes,
    skipToNewline: f.splitter.discarding,
    seenSize: f.seenSize,
    state: f.end === 'orphan' ? 'orphan' : live ? 'live' : 'detached',
    family: f.family,
  };
}

/**
 * The checkpoint's files that are still to be followed, as `resumeAs` maps them (the source that follows
 * each now; undefined for a file no configured pattern reaches any more), those at their paths first:
 * they say what each path named, which detached files only fill in.
 */
export function filesToResume(state: FollowerState, resumeAs: (e: FilePosition) => FilePosition | undefined): FilePosition[] {
  const rank = { live: 0, detached: 1, orphan: 2 } as const;
  const out: FilePosition[] = [];
  for (const e of state.files) {
    const mapped = resumeAs(e);
    if (mapped !== undefined) out.push(mapped);
  }
  return out.sort((a, b) => rank[a.state] - rank[b.state]);
}

/** A checkpoint entry's file found again. */
export interface Reopened {
  fh: FollowerHandle;
  path: string;
}

/** What is needed to find a file again: where it was, its identity and first bytes, its family. */
export type Whereabouts = Pick<FilePosition, 'path' | 'key' | 'head' | 'family'> & { state?: FilePosition['state'] };

/**
 * A file found again by identity: the same inode at its path (whatever its content now: the first read
 * finds out whether it was truncated), else a file beside it with the same inode and the same first bytes
 * (renamed). Failing that, the same inode under a rotated name of its family with other first bytes:
 * truncated in place and then renamed (copytruncate, then a rename rotation); the first read handles it
 * as a truncation, recovering from the copy what was not read. 'unopenable': at its path but not readable.
 */
export async function findFile(e: Whereabouts, scratch: Buffer, index: DirectoryIndex, fs: FollowerFs = nodeFs): Promise<Reopened | 'unopenable' | undefined> {
  const here = await fs.stat(e.path).catch(() => undefined);
  if (here?.isFile() && identity(here) === e.key) {
    const fh = await fs.open(e.path).catch(() => undefined);
    if (fh === undefined) return 'unopenable';
    const now = await fh.stat().catch(() => undefined);
    if (now !== undefined && identity(now) === e.key) return { fh, path: e.path };
    await fh.close().catch(() => undefined);
  }
  const dirs = new Set([dirname(e.path), ...(e.family === undefined ? [] : [e.family.dir])]);
  const base = e.state === 'orphan' ? undefined : (e.family?.base ?? basename(e.path));
  let rewritten: Reopened | undefined;
  for (const dir of dirs) {
    for (const path of await index.pathsOf(dir, e.key)) {
      if (path === e.path) continue;
      const fh = await fs.open(path).catch(() => undefined);
      if (fh === undefined) continue;
      try {
        const now = await fh.stat();
        const head = await readHead(fh, scratch);
        if (identity(now) === e.key && sameStart(head, e.head)) {
          await rewritten?.fh.close().catch(() => undefined);
          return { fh, path };
        }
        // A compressed file with its identity is a new file given its freed inode, not it rewritten.
        if (identity(now) === e.key && rewritten === undefined && base !== undefined && isCopyName(basename(path), base) && !looksCompressed(head)) {
          rewritten = { fh, path };
          continue;
        }
      } catch {
        // Gone or unreadable meanwhile: not this one.
      }
      await fh.close().catch(() => undefined);
    }
  }
  return rewritten;
}

/** A checkpoint entry's file, found again, followed on from its checkpointed offset. */
export async function resumedFollowed(e: FilePosition, found: Reopened, savedAtMs: number, splitter: LineSplitter, fs: FollowerFs = nodeFs): Promise<Followed> {
  const f = newFollowed({
    key: e.key,
    path: e.state === 'orphan' ? found.path : e.path,
    source: e.source,
    fh: found.fh,
    family: e.state === 'orphan' ? undefined : (e.family ?? (await familyOf(e.path, fs)) ?? { dir: dirname(e.path), base: basename(e.path) }),
    offset: e.offset,
    head: keep(e.head),
    size: Math.max(e.seenSize, e.offset),
    checkedAtMs: savedAtMs,
    capCheck: true,
    end: e.state === 'orphan' ? 'orphan' : undefined,
    splitter,
  });
  if (e.skipToNewline) f.splitter.skipToNextLine();
  return f;
}

/**
 * A checkpointed offset is just past a line's `\n` (or 0, or inside an oversize line being skipped). One
 * that is not, in a file still holding the content the checkpoint saw, cannot be trusted: reading from it
 * would count the rest of a line as a line. It is moved on to the next line start (the line it cut is
 * neither counted again nor half-read), or, with no line start within a line's length, the rest of that
 * line is skipped. True when the offset was moved.
 */
export async function alignResumedOffset(f: Followed, e: FilePosition, maxLineBytes: number, buf: Buffer, scratch: Buffer): Promise<boolean> {
  const fh = f.fh;
  if (fh === undefined || e.skipToNewline || e.offset === 0) return false;
  try {
    const { size } = await fh.stat();
    if (size < e.offset || !sameStart(await readHead(fh, scratch), e.head)) return false; // rewritten: the first read starts it over
    const { bytesRead } = await fh.read(buf, 0, 1, e.offset - 1);
    if (bytesRead === 1 && buf[0] === LF) return false;
    const next = await nextLineStart(fh, e.offset, Math.min(size, e.offset + maxLineBytes + 2), buf);
    if (next !== undefined) f.offset = next;
    else f.splitter.skipToNextLine();
    return true;
  } catch {
    return false;
  }
}

const LF = 0x0a;
